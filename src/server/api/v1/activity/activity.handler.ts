/**
 * GET /v1/activity: every canonical transfer, newest first by
 * (block_timestamp, id), optionally of one collection and/or one event type,
 * from the per-event-type feed indexes (transfers_event_type_feed_idx,
 * transfers_collection_event_type_feed_idx; without an event type, the three
 * types' pages merged). Coverage is the indexer's own status, or the
 * collection's when `collection` is given.
 */

import { assertNetwork, type ReadContext } from '@/server/api/read/context'
import { collectionCoverage, globalCoverage } from '@/server/api/read/coverage'
import { buildPage, microsToTimestamp, pageLimit } from '@/server/api/read/page'
import { historyOf } from '@/server/api/v1/collections/collection-row'
import {
  feedPageIds,
  TRANSFER_COLUMNS,
  type TransferRow,
  toTransfer,
  transferCursor,
} from '@/server/api/v1/transfers/transfer-row'
import type { ActivityInput, ActivityPage } from './activity.schema'

type Row = TransferRow & {
  collection_name: string | null
  /** Only with a collection filter: */
  known?: boolean
  deploy_block?: string | null
  first_seen_block?: string | null
}

export async function listActivity(ctx: ReadContext, input: ActivityInput): Promise<ActivityPage> {
  assertNetwork(ctx, input.network)
  const limit = pageLimit(input.limit)
  const params: unknown[] = []
  const where: string[] = []
  if (input.collection !== undefined) {
    params.push(input.collection)
    where.push(`tr.collection_address = $${params.length}`)
  }
  let eventType: string | undefined
  if (input.event_type !== undefined) {
    params.push(input.event_type)
    eventType = `$${params.length}`
  }
  if (input.before_timestamp !== undefined && input.before_id !== undefined) {
    params.push(microsToTimestamp(input.before_timestamp), input.before_id)
    where.push(`(tr.block_timestamp, tr.id) < ($${params.length - 1}::timestamptz, $${params.length}::int8)`)
  }
  params.push(limit + 1)
  // The page's ids from the feed indexes alone, then the rows by primary key
  // (see transfers.handler.ts).
  const page = `SELECT ${TRANSFER_COLUMNS}
      FROM ${feedPageIds(where, eventType, `$${params.length}`)}
      JOIN transfers tr ON tr.id = page.id`
  // With a collection filter, one statement also reads that collection (its
  // name, and its history for coverage); no row of it: unknown collection.
  const sql =
    input.collection === undefined
      ? `SELECT p.*, c.name AS collection_name FROM (${page}) p
           LEFT JOIN collections c ON c.address = p.collection_address
          ORDER BY p.block_us::int8 DESC, p.id::int8 DESC`
      : `SELECT c.address IS NOT NULL AS known, c.name AS collection_name,
                c.deploy_block::text AS deploy_block, c.first_seen_block::text AS first_seen_block, p.*
           FROM (VALUES (1)) AS one(x)
           LEFT JOIN collections c ON c.address = $1
           LEFT JOIN LATERAL (${page}) p ON true
          ORDER BY p.block_us::int8 DESC, p.id::int8 DESC`
  const [{ rows }, snapshot] = await Promise.all([ctx.db.pool.query<Row>(sql, params), ctx.snapshot()])
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
    (r) => ({ ...toTransfer(r, network, head), collection_name: r.collection_name ?? '' }),
    transferCursor,
    coverage,
  )
}
