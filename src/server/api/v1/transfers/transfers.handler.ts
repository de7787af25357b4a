/**
 * GET /v1/collections/{address}/transfers and
 * GET /v1/nfts/{address}/{tokenId}/transfers: canonical rows (the indexer
 * deletes orphaned ones), newest first by (block_timestamp, id), read from
 * transfers_collection_event_type_feed_idx (the three event types merged)
 * and transfers_token_feed_idx. An unknown
 * collection or token gives an empty page (these endpoints list no 404).
 */

import type { ReadContext } from '@/server/api/read/context'
import { collectionCoverage } from '@/server/api/read/coverage'
import { buildPage, microsToTimestamp, pageLimit } from '@/server/api/read/page'
import { historyOf } from '@/server/api/v1/collections/collection-row'
import {
  feedPageIds,
  TRANSFER_COLUMNS,
  type TransferRow,
  toTransfer,
  transferCursor,
} from '@/server/api/v1/transfers/transfer-row'
import type { TransferFeedInput, TransferPage } from './transfer.schema'

type Row = TransferRow & {
  known: boolean
  id: string | null
  deploy_block: string | null
  first_seen_block: string | null
}

export async function listTransfers(ctx: ReadContext, input: TransferFeedInput): Promise<TransferPage> {
  const limit = pageLimit(input.limit)
  const params: unknown[] = [input.address]
  const where = ['tr.collection_address = $1']
  if (input.tokenId !== undefined) {
    params.push(input.tokenId)
    where.push(`tr.token_id = $${params.length}::numeric`)
  }
  if (input.before_timestamp !== undefined && input.before_id !== undefined) {
    params.push(microsToTimestamp(input.before_timestamp), input.before_id)
    where.push(`(tr.block_timestamp, tr.id) < ($${params.length - 1}::timestamptz, $${params.length}::int8)`)
  }
  params.push(limit + 1)
  // One round trip: the collection's history (for coverage; absent when
  // unknown) beside the page. The page's ids come from feed indexes alone
  // (index-only scans of their keys), then the rows by primary key: the
  // planner has no reason to walk another index and filter. A token's feed
  // has its own index; a collection's is the merge of its event types' feeds.
  const ids =
    input.tokenId !== undefined
      ? `(SELECT tr.id FROM transfers tr WHERE ${where.join(' AND ')}
           ORDER BY tr.block_timestamp DESC, tr.id DESC LIMIT $${params.length}) page`
      : feedPageIds(where, undefined, `$${params.length}`)
  const sql = `
    SELECT c.address IS NOT NULL AS known, c.deploy_block::text AS deploy_block, c.first_seen_block::text AS first_seen_block, p.*
      FROM (VALUES (1)) AS one(x)
      LEFT JOIN collections c ON c.address = $1
      LEFT JOIN LATERAL (
        SELECT ${TRANSFER_COLUMNS} FROM ${ids} JOIN transfers tr ON tr.id = page.id
      ) p ON true
     ORDER BY p.block_us::int8 DESC, p.id::int8 DESC`
  const [{ rows }, snapshot] = await Promise.all([ctx.db.pool.query<Row>(sql, params), ctx.snapshot()])
  const first = rows[0]
  const coverage = collectionCoverage(snapshot, first?.known ? historyOf(first) : null)
  const network = ctx.config.NETWORK
  return buildPage(
    rows.filter((r) => r.id !== null),
    limit,
    (r) => toTransfer(r, network, snapshot.lastSeenBlock),
    transferCursor,
    coverage,
  )
}
