import type pg from 'pg'
import { IndexerError } from '../errors'
import type { MetadataUpdateEvent, TransferEvent } from '../events/types'
import type { RpcBlock } from '../rpc/client'
import { withWriteTransaction } from './db'
import { writeTokenStates } from './derived-state'
import { addIndexedRange, pruneBlocks, readIndexerState, storeBlocks, updateProgress } from './state'
import { foldTransfers, loadTokenStates, recomputeTokenStates, tokenKey } from './token-state'
import { collectionsOf, ensureCollections, insertTransfers, markMetadataStale } from './transfers'

/** Everything learned about blocks [fromBlock, toBlock], committed as one unit. */
export interface IngestBatch {
  fromBlock: bigint
  toBlock: bigint
  /** In chain order. */
  transfers: TransferEvent[]
  metadataUpdates: MetadataUpdateEvent[]
  /** Headers to remember for reorg detection. */
  blocks: RpcBlock[]
  lastSeenBlock: bigint
  /** The chain's confirmed block (CONFIRMATIONS deep or finalized). */
  chainConfirmedBlock: bigint
}

export interface CommitContext {
  network: string
  startBlock: bigint
  /** last_indexed_block the caller based this batch on: guards against a stale writer. */
  expectedLastIndexed: bigint | null
  /** Block hashes kept below the confirmed block. */
  keepBlocks: bigint
}

export class StaleStateError extends IndexerError {
  constructor(expected: bigint | null, actual: bigint | null) {
    super(`Indexer state moved under this writer (expected last indexed ${expected}, found ${actual})`)
    this.name = 'StaleStateError'
  }
}

/**
 * Commits a block range in ONE transaction: its transfers, the derived token
 * and collection state, ERC-4906 refetch marks, block hashes, indexed_ranges
 * and indexer_state. A crash at any point leaves either all or none of it.
 */
export async function commitBatch(pool: pg.Pool, ctx: CommitContext, batch: IngestBatch) {
  return withWriteTransaction(pool, async (client) => {
    // Chain data can be read again: after a database crash the indexer resumes
    // from the last durable commit (state and data roll back together), so
    // commits need not wait for the WAL flush.
    await client.query('SET LOCAL synchronous_commit = off')
    const state = await readIndexerState(client, ctx.network, true)
    if (state.lastIndexedBlock !== ctx.expectedLastIndexed) {
      throw new StaleStateError(ctx.expectedLastIndexed, state.lastIndexedBlock)
    }
    const { rows } = await client.query('SELECT max(to_block)::text AS top FROM indexed_ranges')
    const top = rows[0]?.top === null || rows[0]?.top === undefined ? null : BigInt(rows[0].top)
    // Appending after every stored block lets the new state be folded from the
    // old one; filling a gap below stored blocks rebuilds it from history.
    const appending = top === null || batch.fromBlock > top

    await ensureCollections(client, collectionsOf(batch.transfers))
    const inserted = await insertTransfers(client, batch.transfers, 'rpc')
    const keys = [...new Set(inserted.map((e) => tokenKey(e.collection, e.tokenId)))]
    const old = await loadTokenStates(client, keys)
    const next = appending ? foldTransfers(old, inserted) : await recomputeTokenStates(client, keys)
    await writeTokenStates(client, old, next)
    await markMetadataStale(client, batch.metadataUpdates)

    await storeBlocks(client, batch.blocks)
    await addIndexedRange(client, batch.fromBlock, batch.toBlock)
    const progress = await updateProgress(client, {
      network: ctx.network,
      startBlock: ctx.startBlock,
      lastSeenBlock: batch.lastSeenBlock,
      chainConfirmedBlock: batch.chainConfirmedBlock,
    })
    await pruneBlocks(client, progress.lastConfirmedBlock, ctx.keepBlocks)
    return { ...progress, inserted: inserted.length }
  })
}
