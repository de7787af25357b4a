/**
 * GET /v1/activity: every canonical transfer, newest first by
 * (block_timestamp, id), optionally of one collection and/or one event type,
 * from the per-event-type feed indexes (src/db/queries/transfers.ts).
 * Coverage is the indexer's own status, or the collection's when
 * `collection` is given. Without `standard`, ERC-721 rows only; with it, the
 * standards named, each item with its `amount` (docs/api.md, "ERC-1155").
 */

import { selectActivity } from '@/db/queries/transfers'
import { assertNetwork, type ReadContext } from '@/server/api/read/context'
import { collectionCoverage, globalCoverage } from '@/server/api/read/coverage'
import { beforeKey, buildPage, pageLimit } from '@/server/api/read/page'
import { standardsOf } from '@/server/api/read/standard'
import { historyOf } from '@/server/api/v1/collections/collection-shape'
import { toTransfer, transferCursor } from '@/server/api/v1/transfers/transfer-shape'
import type { ActivityInput, ActivityPage } from './activity.schema'

export async function listActivity(ctx: ReadContext, input: ActivityInput): Promise<ActivityPage> {
  assertNetwork(ctx, input.network)
  const limit = pageLimit(input.limit)
  const before = beforeKey(input)
  const standards = standardsOf(input.standard)
  // With a collection filter, one statement also reads that collection (its
  // name, and its history for coverage); no row of it: unknown collection.
  const [rows, snapshot] = await Promise.all([
    selectActivity(ctx.db, {
      collection: input.collection,
      eventType: input.event_type,
      before,
      rows: limit + 1,
      standard: standards.filter,
    }),
    ctx.snapshot(),
  ])
  const first = rows[0]
  const coverage =
    input.collection === undefined
      ? globalCoverage(snapshot)
      : collectionCoverage(
          snapshot,
          first?.known
            ? historyOf({
                deploy_block: first.deploy_block ?? null,
                first_seen_block: first.first_seen_block ?? null,
              })
            : null,
        )
  const items = input.collection === undefined ? rows : rows.filter((r) => r.id !== null)
  const network = ctx.config.NETWORK
  const head = snapshot.lastSeenBlock
  return buildPage(
    items,
    limit,
    (r) => ({
      ...toTransfer(r, network, head, standards.extended),
      collection_name: r.collection_name ?? '',
    }),
    transferCursor,
    coverage,
  )
}
