/**
 * The indexer's write functions, for the indexer itself and for tests of
 * other layers that need a realistic database (the API tests fill it here
 * rather than with ad-hoc SQL, so derived state is always consistent).
 */
import type pg from 'pg'
import type { Hex } from 'viem'
import type { CollectionStandard, TransferEvent } from '../events/types'
import { minBig } from '../util/bigint'
import { withWriteTransaction } from './db'
import { rebuildTokens } from './derived-state'
import { historyAddedFrom } from './state'
import { tokenKeysOf } from './token-state'
import { collectionsOf, compareChainOrder, ensureCollections, insertTransfers } from './transfers'

export { type CommitContext, commitBatch, type IngestBatch } from './commit'
export { withWriteTransaction } from './db'
export { rollbackAfter } from './rollback'
export { addIndexedRange, ensureIndexerState, readIndexerState } from './state'

export interface TransferInput {
  collection: string
  tokenId: bigint | string
  from: string
  to: string
  /** 0 when the block is unknown (imported history). */
  blockNumber: bigint | number
  /** Date, or Unix seconds. */
  blockTimestamp: Date | number | bigint
  transactionHash: string
  logIndex: number
  batchIndex?: number
  blockHash?: string | null
  standard?: CollectionStandard
  /** ERC-1155 rows: the value moved (standard 'ERC1155'); absent on ERC-721 rows. */
  amount?: bigint | number | string | null
}

/**
 * Inserts transfers (idempotent on transaction_hash + log_index + batch_index)
 * with their collections, token states and collection counters, in one
 * transaction; rows may come in any order relative to stored ones.
 */
export async function writeTransfers(
  pool: pg.Pool,
  transfers: TransferInput[],
  options: { source?: 'rpc' | 'import' } = {},
): Promise<{ inserted: number }> {
  const events = transfers.map(toEvent).sort(compareChainOrder)
  return withWriteTransaction(pool, async (client) => {
    await ensureCollections(client, collectionsOf(events))
    const inserted = await insertTransfers(client, events, options.source ?? 'rpc')
    await rebuildTokens(client, tokenKeysOf(inserted))
    if (inserted.length > 0) await historyAddedFrom(client, inserted.map((e) => e.blockNumber).reduce(minBig))
    return { inserted: inserted.length }
  })
}

function toEvent(t: TransferInput): TransferEvent {
  const seconds =
    t.blockTimestamp instanceof Date
      ? BigInt(Math.floor(t.blockTimestamp.getTime() / 1000))
      : BigInt(t.blockTimestamp)
  return {
    collection: t.collection.toLowerCase() as Hex,
    tokenId: BigInt(t.tokenId),
    from: t.from.toLowerCase() as Hex,
    to: t.to.toLowerCase() as Hex,
    blockNumber: BigInt(t.blockNumber),
    blockHash: (t.blockHash?.toLowerCase() as Hex | undefined) ?? null,
    blockTimestamp: seconds,
    transactionHash: t.transactionHash.toLowerCase() as Hex,
    logIndex: t.logIndex,
    batchIndex: t.batchIndex ?? 0,
    standard: t.standard ?? (t.amount == null ? 'ERC721' : 'ERC1155'),
    amount: t.amount == null ? null : BigInt(t.amount),
  }
}
