/**
 * GET /v1/collections/{address}/transfers and
 * GET /v1/nfts/{address}/{tokenId}/transfers: canonical rows, newest first
 * by (block_timestamp, id) (src/db/queries/transfers.ts). An unknown
 * collection or token gives an empty page (these endpoints list no 404).
 */

import { selectTransferFeed } from '@/db/queries/transfers'
import type { ReadContext } from '@/server/api/read/context'
import { collectionCoverage } from '@/server/api/read/coverage'
import { beforeKey, buildPage, pageLimit } from '@/server/api/read/page'
import { assertStandardServed, standardsOf } from '@/server/api/read/standard'
import { historyOf } from '@/server/api/v1/collections/collection-shape'
import { toTransfer, transferCursor } from '@/server/api/v1/transfers/transfer-shape'
import type { TransferFeedInput, TransferPage } from './transfer.schema'

export async function listTransfers(ctx: ReadContext, input: TransferFeedInput): Promise<TransferPage> {
  const limit = pageLimit(input.limit)
  const before = beforeKey(input)
  // One round trip: the collection's history (for coverage) beside the page.
  const [rows, snapshot] = await Promise.all([
    selectTransferFeed(ctx.db, {
      collection: input.address,
      tokenId: input.tokenId,
      before,
      rows: limit + 1,
    }),
    ctx.snapshot(),
  ])
  const first = rows[0]
  const standards = standardsOf(input.standard)
  // A known collection of a standard the request does not serve: 404 (an unknown one: an empty page).
  if (first?.known)
    assertStandardServed(
      standards,
      first.collection_standard,
      input.tokenId === undefined
        ? `Collection ${input.address}`
        : `Token ${input.tokenId} of collection ${input.address}`,
    )
  const coverage = collectionCoverage(snapshot, first?.known ? historyOf(first) : null)
  const network = ctx.config.NETWORK
  return buildPage(
    rows.filter((r) => r.id !== null),
    limit,
    (r) => toTransfer(r, network, snapshot.lastSeenBlock, standards.extended),
    transferCursor,
    coverage,
  )
}
