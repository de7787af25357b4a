/**
 * The transfer columns of every feed and their JSON form. The feeds are
 * newest first by (block_timestamp, id): ids are assigned in chain order by
 * the indexer, so inside a block the newest log comes first, and rows that
 * arrive between two pages sort before the cursor — pages never repeat or
 * skip a row.
 */
import type { Transfer } from '@/server/api/routers/transfers/transfer.schema'
import { isoSql, microsSql, safeInteger, type TimeCursor } from './page'

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
