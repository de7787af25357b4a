/**
 * The JSON form of a transfer row (src/db/queries/transfers.ts) and the
 * feeds' cursor: newest first by (block_timestamp, id).
 */
import type { TransferRow } from '@/db/queries/transfers'
import type { TimeCursor } from '@/lib/schemas'
import { safeInteger } from '@/server/api/read/page'
import type { Transfer } from '@/server/api/v1/transfers/transfer.schema'

/** Blocks on top of the event, from the request's head; null for an unknown block (0). */
export function confirmations(blockNumber: string, head: bigint): number | null {
  const block = BigInt(blockNumber)
  if (block === 0n) return null
  // The head is read at most a moment before the rows: never below zero.
  return head > block ? Number(head - block) : 0
}

/** `extended`: the request named a `standard`: the record carries `amount` (docs/api.md, "ERC-1155"). */
export function toTransfer(row: TransferRow, network: string, head: bigint, extended = false): Transfer {
  const out: Transfer = {
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
  // ERC-721 rows store no amount: one token moves.
  if (extended) out.amount = row.amount ?? '1'
  return out
}

export const transferCursor = (row: TransferRow): TimeCursor => ({
  before_timestamp: safeInteger(row.block_us),
  before_id: safeInteger(row.id),
})
