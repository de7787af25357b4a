import type pg from 'pg'
import type { VerifiedSpan } from '@/db/queries/indexer-state'
import type { RpcBlock } from '../chain'
import { IndexerError } from '../errors'
import type { MetadataUpdateEvent, TransferEvent } from '../events/types'
import { queryAll } from './db'
import { foldIntoTokens, rebuildTokens } from './derived-state'
import { addIndexedRange, lockStateForCommit, pruneBlocks, storeBlocks, updateProgress } from './state'
import { tokenKeysOf } from './token-state'
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
  /** The batch's logs were verified (docs/indexer.md, "Verification"). */
  verified: boolean
  /** How its blocks were verified (indexer_state.verification_spans). */
  verifiedBy?: VerifiedSpan[]
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

export type CommitResult = Awaited<ReturnType<typeof updateProgress>> & {
  inserted: number
  /** Hash of the last indexed block when it is not the batch's last (a filled gap joined the range above). */
  joinedTipHash?: string | null
}

/** A commit whose transfers are inserted but not yet visible: finish() or abort() ends it. */
export interface OpenCommit {
  /** Writes the rest of the batch (under the writers' lock) and commits. */
  finish(ctx: CommitContext, batch: Omit<IngestBatch, 'transfers'>): Promise<CommitResult>
  abort(): Promise<void>
}

/**
 * Commits a block range in ONE transaction: its transfers, the derived token
 * and collection state, ERC-4906 refetch marks, block hashes, indexed_ranges
 * and indexer_state. A crash at any point leaves either all or none of it.
 */
export async function commitBatch(pool: pg.Pool, ctx: CommitContext, batch: IngestBatch) {
  const open = await startCommit(pool, batch.transfers)
  return open.finish(ctx, batch)
}

/**
 * First half of a commit: opens its transaction and inserts the transfers,
 * which draws their ids, so callers start commits in chain order. The insert
 * takes no lock and nothing of it is visible before finish() commits, so a
 * backfill inserts batch N+1 on a second connection while batch N finishes
 * (sync/historical.ts); finish() of N+1 is called only once N has committed.
 */
export async function startCommit(pool: pg.Pool, transfers: TransferEvent[]): Promise<OpenCommit> {
  const client = await pool.connect()
  let inserted: TransferEvent[]
  try {
    // Chain data can be read again: after a database crash the indexer resumes
    // from the last durable commit (state and data roll back together), so
    // commits need not wait for the WAL flush.
    await queryAll(client, ['BEGIN', 'SET LOCAL synchronous_commit = off'])
    inserted = await insertTransfers(client, transfers, 'rpc')
  } catch (err) {
    await endTransaction(client, 'ROLLBACK')
    throw err
  }
  let ended = false
  return {
    async finish(ctx, batch) {
      if (ended) throw new IndexerError('This commit has already ended')
      ended = true
      try {
        const result = await finishCommit(client, ctx, { ...batch, transfers }, inserted)
        await endTransaction(client, 'COMMIT')
        return result
      } catch (err) {
        await endTransaction(client, 'ROLLBACK')
        throw err
      }
    },
    async abort() {
      if (ended) return
      ended = true
      await endTransaction(client, 'ROLLBACK')
    },
  }
}

/**
 * A whole commit inside a transaction the caller holds (a repair: rollback
 * and re-commit of the same blocks in one transaction, sync/verify.ts).
 */
export async function commitWithin(client: pg.PoolClient, ctx: CommitContext, batch: IngestBatch) {
  const inserted = await insertTransfers(client, batch.transfers, 'rpc')
  return finishCommit(client, ctx, batch, inserted)
}

async function finishCommit(
  client: pg.PoolClient,
  ctx: CommitContext,
  batch: IngestBatch,
  inserted: TransferEvent[],
): Promise<CommitResult> {
  const { state, topIndexed: top } = await lockStateForCommit(client, ctx.network)
  if (state.lastIndexedBlock !== ctx.expectedLastIndexed) {
    throw new StaleStateError(ctx.expectedLastIndexed, state.lastIndexedBlock)
  }
  // Appending after every stored block lets the new state be folded from the
  // old one; filling a gap below stored blocks rebuilds it from history.
  const appending = top === null || batch.fromBlock > top

  await ensureCollections(client, collectionsOf(batch.transfers))
  if (appending) await foldIntoTokens(client, inserted)
  else await rebuildTokens(client, tokenKeysOf(inserted))
  await markMetadataStale(client, batch.metadataUpdates)

  await storeBlocks(client, batch.blocks)
  await addIndexedRange(client, batch.fromBlock, batch.toBlock)
  const progress = await updateProgress(client, {
    network: ctx.network,
    startBlock: ctx.startBlock,
    lastSeenBlock: batch.lastSeenBlock,
    chainConfirmedBlock: batch.chainConfirmedBlock,
    verified: batch.verified ? { from: batch.fromBlock, to: batch.toBlock, by: batch.verifiedBy } : undefined,
  })
  await pruneBlocks(client, progress.lastConfirmedBlock, ctx.keepBlocks)
  const result: CommitResult = { ...progress, inserted: inserted.length }
  // Read here, not after COMMIT: on the embedded database (one session) a query
  // after it would queue behind the next batch's open transaction, which waits for this one.
  if (progress.lastIndexedBlock !== null && progress.lastIndexedBlock !== batch.toBlock) {
    const { rows } = await client.query<{ hash: string }>('SELECT hash FROM blocks WHERE number = $1', [
      progress.lastIndexedBlock.toString(),
    ])
    result.joinedTipHash = rows[0]?.hash ?? null
  }
  return result
}

/** Ends the transaction and returns the connection; a connection that failed to end is discarded. */
async function endTransaction(client: pg.PoolClient, command: 'COMMIT' | 'ROLLBACK') {
  try {
    await client.query(command)
    client.release()
  } catch (err) {
    client.release(err instanceof Error ? err : true)
    if (command === 'COMMIT') throw err
  }
}
