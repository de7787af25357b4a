/**
 * The transfer columns of every feed and their JSON form. The feeds are
 * newest first by (block_timestamp, id): ids are assigned in chain order by
 * the indexer, so inside a block the newest log comes first, and rows that
 * arrive between two pages sort before the cursor — pages never repeat or
 * skip a row.
 */
import { type TimeCursor, transferEventType } from '@/lib/schemas'
import { isoSql, microsSql, safeInteger } from '@/server/api/read/page'
import type { Transfer } from '@/server/api/v1/transfers/transfer.schema'

/** Columns of `transfers` aliased `tr`. */
export const TRANSFER_COLUMNS = `tr.id::text AS id, tr.collection_address, tr.token_id::text AS token_id,
  tr.from_address, tr.to_address, tr.event_type, tr.block_number::text AS block_number, tr.log_index,
  tr.batch_index, tr.transaction_hash, ${isoSql('tr.block_timestamp')} AS block_timestamp,
  ${microsSql('tr.block_timestamp')} AS block_us`

export interface TransferRow {
  id: string
  collection_address: string
  token_id: string
  from_address: string
  to_address: string
  event_type: 'mint' | 'transfer' | 'burn'
  block_number: string
  log_index: number
  batch_index: number
  transaction_hash: string
  block_timestamp: string
  block_us: string
}

/** Blocks on top of the event, from the request's head; null for an unknown block (0). */
export function confirmations(blockNumber: string, head: bigint): number | null {
  const block = BigInt(blockNumber)
  if (block === 0n) return null
  // The head is read at most a moment before the rows: never below zero.
  return head > block ? Number(head - block) : 0
}

export function toTransfer(row: TransferRow, network: string, head: bigint): Transfer {
  return {
    collection_address: row.collection_address,
    token_id: row.token_id,
    network,
    from_address: row.from_address,
    to_address: row.to_address,
    event_type: row.event_type,
    block_number: row.block_number,
    log_index: row.log_index,
    batch_index: row.batch_index,
    transaction_hash: row.transaction_hash,
    block_timestamp: row.block_timestamp,
    confirmations: confirmations(row.block_number, head),
  }
}

export const transferCursor = (row: TransferRow): TimeCursor => ({
  before_timestamp: safeInteger(row.block_us),
  before_id: safeInteger(row.id),
})

/**
 * The ids of one feed page (`page.id`), newest first by (block_timestamp,
 * id), read in index order from a per-event-type feed index
 * (transfers_event_type_feed_idx, transfers_collection_event_type_feed_idx).
 * `where` holds the other conditions on `tr` (collection, cursor).
 *
 * With `eventType` (a parameter placeholder) that index gives the page
 * directly. Without it, the page is the merge of the three event types'
 * pages, each at most `limit` ids from its own index: the feeds are indexed
 * per event type only, so that every stored transfer costs two feed-index
 * entries instead of four (docs/database.md).
 */
export function feedPageIds(where: string[], eventType: string | undefined, limit: string): string {
  const arm = (type: string) =>
    `SELECT tr.id, tr.block_timestamp FROM transfers tr WHERE ${[`tr.event_type = ${type}`, ...where].join(' AND ')}
      ORDER BY tr.block_timestamp DESC, tr.id DESC LIMIT ${limit}`
  if (eventType !== undefined) return `(${arm(eventType)}) page`
  const arms = transferEventType.options.map((type) => `(${arm(`'${type}'`)})`).join(' UNION ALL ')
  return `(SELECT id FROM (${arms}) merged ORDER BY block_timestamp DESC, id DESC LIMIT ${limit}) page`
}
