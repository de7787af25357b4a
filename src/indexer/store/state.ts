import type pg from 'pg'
import {
  INDEXER_STATE_SQL,
  type IndexerStateRecord,
  type IndexerStateRow,
  indexerStateFromRecord,
  type MetadataQueueReport,
  type RpcEndpointState,
  selectIndexerState,
  selectLastVerifiedBlock,
  selectLogIndexUntrusted,
  selectProgressBasis,
  selectTip,
  selectVerificationSpans,
  spansFromState,
  spansToState,
  type VerifiedSpan,
} from '@/db/queries/indexer-state'
import type { RpcBlock } from '../chain'
import { DatabaseChainMismatchError, IndexerError } from '../errors'
import { minBig } from '../util/bigint'
import { lockedQueryAll, type Queryable } from './db'
import { int8Array, timestamptzArray, varcharArray } from './pg-array'
import { overlaySpans, spansThrough } from './verification-spans'

export type { IndexerStateRow }

/** Creates the state row on first start; refuses a database that belongs to another chain. */
export async function ensureIndexerState(
  db: Queryable,
  opts: { network: string; chainId: number; startBlock: number },
): Promise<IndexerStateRow> {
  await db.query(
    `INSERT INTO indexer_state (network, chain_id, start_block, coverage_start_block)
     VALUES ($1, $2, $3, $3) ON CONFLICT (network) DO NOTHING`,
    [opts.network, opts.chainId, opts.startBlock],
  )
  // Chain tables emptied from outside (a recreated devnet) leave no token behind:
  // then no holder count may survive either.
  await db.query('DELETE FROM collection_holders WHERE NOT EXISTS (SELECT 1 FROM tokens)')
  const state = await readIndexerState(db, opts.network)
  if (state.chainId !== opts.chainId) {
    throw new DatabaseChainMismatchError(opts.network, state.chainId, opts.chainId)
  }
  if (state.startBlock !== BigInt(opts.startBlock)) {
    // A new START_BLOCK: progress is the contiguous range from there (a lowered one leaves a gap to fill).
    const end = await contiguousEnd(db, BigInt(opts.startBlock))
    // The verified prefix survives only a raised START_BLOCK that it still covers.
    await db.query(
      `UPDATE indexer_state SET start_block = $2, coverage_start_block = $2, last_indexed_block = $3::bigint,
              last_confirmed_block = LEAST(last_confirmed_block, coalesce($3::bigint, 0)),
              last_verified_block = CASE WHEN $2 > start_block AND last_verified_block >= $2
                                         THEN LEAST(last_verified_block, $3::bigint) END,
              coverage_status = CASE WHEN $3::bigint IS NULL THEN 'partial' ELSE coverage_status END,
              -- Another window of history: answers at past blocks computed over the old one are retired.
              history_rewritten_at = clock_timestamp()
        WHERE network = $1`,
      [opts.network, opts.startBlock, end?.toString() ?? null],
    )
    return readIndexerState(db, opts.network)
  }
  return state
}

/**
 * Transfers were added from block `lowest` on, outside the commit of new blocks (an import of
 * history, a test's fixture): at or below the confirmed block they change answers at confirmed
 * blocks, so snapshots kept by web processes are retired (docs/api.md, "Snapshots").
 */
export async function historyAddedFrom(client: Queryable, lowest: bigint): Promise<void> {
  await client.query(
    'UPDATE indexer_state SET history_rewritten_at = clock_timestamp() WHERE last_confirmed_block >= $1',
    [lowest.toString()],
  )
}

export async function readIndexerState(
  db: Queryable,
  network: string,
  forUpdate = false,
): Promise<IndexerStateRow> {
  return indexerStateOf(await selectIndexerState(db, network, forUpdate), network)
}

/**
 * Takes the writers' lock, then reads the indexer state (locked for update)
 * and the end of the highest indexed range: what a commit checks before it
 * writes, in one round trip.
 */
export async function lockStateForCommit(
  client: pg.PoolClient,
  network: string,
): Promise<{ state: IndexerStateRow; topIndexed: bigint | null }> {
  const [state, top] = await lockedQueryAll(client, [
    `${INDEXER_STATE_SQL} WHERE network = ${client.escapeLiteral(network)} FOR UPDATE`,
    'SELECT max(to_block)::text AS top FROM indexed_ranges',
  ])
  const topIndexed = top!.rows[0]?.top
  return {
    state: indexerStateOf(state!.rows[0] as IndexerStateRecord | undefined, network),
    topIndexed: topIndexed == null ? null : BigInt(topIndexed),
  }
}

function indexerStateOf(row: IndexerStateRecord | undefined, network: string): IndexerStateRow {
  if (!row) throw new IndexerError(`No indexer_state row for network "${network}"`)
  return indexerStateFromRecord(row)
}

/** The indexed tip: the last indexed block and its stored hash (null when the block is no longer stored). */
export async function readTip(
  db: Queryable,
  network: string,
): Promise<{ number: bigint; hash: string | null } | null> {
  const row = await selectTip(db, network)
  if (!row?.number) return null
  return { number: BigInt(row.number), hash: row.hash ?? null }
}

/** The end of the verified prefix (indexer_state.last_verified_block), null while nothing is verified. */
export async function readLastVerifiedBlock(db: Queryable, network: string): Promise<bigint | null> {
  const verified = await selectLastVerifiedBlock(db, network)
  return verified == null ? null : BigInt(verified)
}

/** Adds [from, to] to indexed_ranges, merging with overlapping or adjacent ranges. */
export async function addIndexedRange(client: pg.PoolClient, from: bigint, to: bigint): Promise<void> {
  // One statement: the INSERT aggregates every deleted row first, so a merged range may keep a deleted one's key.
  await client.query(
    `WITH joined AS (
       DELETE FROM indexed_ranges WHERE to_block >= $1::bigint - 1 AND from_block <= $2::bigint + 1
       RETURNING from_block, to_block)
     INSERT INTO indexed_ranges (from_block, to_block)
     SELECT LEAST($1::bigint, min(from_block)), GREATEST($2::bigint, max(to_block)) FROM joined`,
    [from.toString(), to.toString()],
  )
}

/** Forgets every indexed block after `block` (rollback). */
export async function truncateIndexedRanges(client: pg.PoolClient, block: bigint): Promise<void> {
  await client.query('DELETE FROM indexed_ranges WHERE from_block > $1', [block.toString()])
  await client.query('UPDATE indexed_ranges SET to_block = $1 WHERE to_block > $1', [block.toString()])
}

/** The first indexed block (of any range), or null when nothing is indexed. */
export async function lowestIndexedBlock(db: Queryable): Promise<bigint | null> {
  const { rows } = await db.query<{ low: string | null }>(
    'SELECT min(from_block)::text AS low FROM indexed_ranges',
  )
  return rows[0]?.low ? BigInt(rows[0].low) : null
}

/** End of the contiguous indexed range that contains `startBlock`, or null. */
export async function contiguousEnd(db: Queryable, startBlock: bigint): Promise<bigint | null> {
  const { rows } = await db.query<{ to_block: string }>(CONTIGUOUS_END_SQL, [startBlock.toString()])
  return rows[0] ? BigInt(rows[0].to_block) : null
}

const CONTIGUOUS_END_SQL =
  'SELECT to_block::text FROM indexed_ranges WHERE from_block <= $1 AND to_block >= $1 LIMIT 1'

/** What a commit or rollback tells updateProgress. */
export interface ProgressUpdate {
  network: string
  startBlock: bigint
  lastSeenBlock: bigint
  chainConfirmedBlock: bigint
  /**
   * Blocks [from, to] were verified by this transaction; `by`: the methods that verified them
   * (indexer_state.verification_spans; blocks no span names are shown with no method).
   */
  verified?: { from: bigint; to: bigint; by?: VerifiedSpan[] }
  /** A rollback to this block: the only write that may lower the head, the confirmed and the verified block. */
  rolledBackTo?: bigint
}

/**
 * Writes head, progress and coverage in the caller's transaction.
 *
 * - last_verified_block is the end of the verified prefix from START_BLOCK
 *   (a verified range extends it only when it joins it).
 * - last_confirmed_block = min(indexed end, the chain's confirmed block, last
 *   verified block): confirmed means verified (docs/indexer.md, "Verification").
 * - Coverage is complete only when indexed_ranges shows START_BLOCK..the
 *   chain's confirmed block as one contiguous range and all of it is verified.
 * - The head and the confirmed block never move back, except in a rollback
 *   (a reorganisation proven by block hashes, or a repair); a rollback below
 *   the confirmed block also sets history_rewritten_at.
 */
export async function updateProgress(
  client: pg.PoolClient,
  opts: ProgressUpdate,
): Promise<{
  lastIndexedBlock: bigint | null
  lastConfirmedBlock: bigint
  complete: boolean
  lastVerifiedBlock: bigint | null
}> {
  const basis = await selectProgressBasis(client, opts.network, opts.startBlock, CONTIGUOUS_END_SQL)
  const end = basis?.indexed_end == null ? null : BigInt(basis.indexed_end)
  const before = basis?.verified == null ? null : BigInt(basis.verified)
  let verified = before
  if (opts.rolledBackTo !== undefined && verified !== null && verified > opts.rolledBackTo)
    verified = opts.rolledBackTo
  if (opts.verified && (verified ?? opts.startBlock - 1n) >= opts.verified.from - 1n) {
    if (verified === null || opts.verified.to > verified) verified = opts.verified.to
  }
  // The verified prefix lies inside the indexed prefix.
  if (verified !== null && (end === null || verified > end)) verified = end
  if (verified !== null && verified < opts.startBlock) verified = null
  const lastIndexedBlock = end
  // Nothing below START_BLOCK needs verifying: an empty prefix ends just before it.
  const verifiedEnd = verified ?? opts.startBlock - 1n
  const lastConfirmedBlock = end === null ? 0n : minBig(minBig(end, opts.chainConfirmedBlock), verifiedEnd)
  const complete = end !== null && verifiedEnd >= opts.chainConfirmedBlock
  const grew = verified !== null && (before === null || verified > before)
  const rollback = opts.rolledBackTo !== undefined
  let spans = spansFromState(basis?.spans)
  if (rollback) spans = spansThrough(spans, opts.rolledBackTo!)
  if (opts.verified?.by) spans = overlaySpans(spans, opts.verified.by)
  await client.query(
    `UPDATE indexer_state
        SET last_seen_block = ${rollback ? 'GREATEST($2::bigint, 0)' : 'GREATEST(last_seen_block, $2::bigint)'},
            last_indexed_block = $3,
            last_confirmed_block = ${rollback ? 'GREATEST($4::bigint, 0)' : 'GREATEST(last_confirmed_block, $4::bigint)'},
            last_verified_block = $6,
            coverage_status = $5, coverage_start_block = start_block, verification_spans = $8,
            coverage_verified_at = CASE WHEN $7 OR ($5 = 'complete' AND coverage_verified_at IS NULL)
                                        THEN now() ELSE coverage_verified_at END,
            updated_at = now()${
              rollback
                ? `,
            -- Below the confirmed block: answers at confirmed blocks may change (docs/api.md, "Snapshots").
            history_rewritten_at = CASE WHEN $9::bigint < last_confirmed_block THEN clock_timestamp()
                                        ELSE history_rewritten_at END`
                : ''
            }
      WHERE network = $1`,
    [
      opts.network,
      opts.lastSeenBlock.toString(),
      lastIndexedBlock?.toString() ?? null,
      lastConfirmedBlock.toString(),
      complete ? 'complete' : 'partial',
      verified?.toString() ?? null,
      grew,
      JSON.stringify(spansToState(spans)),
      ...(rollback ? [opts.rolledBackTo!.toString()] : []),
    ],
  )
  return { lastIndexedBlock, lastConfirmedBlock, complete, lastVerifiedBlock: verified }
}

/** What the indexer knows of its endpoints, for the status endpoint (no URL: they may carry API keys). */
export interface RpcHealth {
  /** When an endpoint last answered the head; null: none has yet. */
  headObservedAt: Date | null
  endpoints: RpcEndpointState[]
}

/** Observed head (never lowered here) and endpoint health: keeps the status honest while idle or failing. */
export async function updateHead(
  db: Queryable,
  network: string,
  lastSeenBlock: bigint,
  health?: RpcHealth,
): Promise<void> {
  await db.query(
    `UPDATE indexer_state SET last_seen_block = GREATEST(last_seen_block, $2::bigint),
            head_observed_at = coalesce($3, head_observed_at), rpc_endpoints = coalesce($4, rpc_endpoints),
            updated_at = now()
      WHERE network = $1`,
    [
      network,
      lastSeenBlock.toString(),
      health?.headObservedAt ?? null,
      health ? JSON.stringify(health.endpoints) : null,
    ],
  )
}

/** Counts a disagreement between two reads, and whether it needed a repair of stored rows. */
export async function countVerificationMismatch(db: Queryable, network: string, repaired: boolean) {
  await db.query(
    `UPDATE indexer_state SET verification_mismatches = verification_mismatches + 1,
            verification_repairs = verification_repairs + $2 WHERE network = $1`,
    [network, repaired ? 1 : 0],
  )
}

/** Whether a receipts proof caught the endpoints' log index leaving logs out (kept across restarts). */
export async function readLogIndexUntrusted(db: Queryable, network: string): Promise<boolean> {
  return (await selectLogIndexUntrusted(db, network)) === true
}

/** The metadata queue's last report (indexer_state.metadata_queue; the status endpoint shows it). */
export async function writeMetadataQueueReport(
  db: Queryable,
  network: string,
  report: MetadataQueueReport,
): Promise<void> {
  await db.query('UPDATE indexer_state SET metadata_queue = $2::jsonb WHERE network = $1', [
    network,
    JSON.stringify(report),
  ])
}

export async function markLogIndexUntrusted(db: Queryable, network: string): Promise<void> {
  await db.query('UPDATE indexer_state SET log_index_untrusted = true WHERE network = $1', [network])
}

/** How each verified block was verified (indexer_state.verification_spans). */
export async function readVerificationSpans(db: Queryable, network: string): Promise<VerifiedSpan[]> {
  return spansFromState(await selectVerificationSpans(db, network))
}

export async function storeBlocks(client: pg.PoolClient, blocks: RpcBlock[]): Promise<void> {
  if (blocks.length === 0) return
  await client.query(
    `INSERT INTO blocks (number, hash, parent_hash, timestamp)
     SELECT * FROM unnest($1::bigint[], $2::varchar[], $3::varchar[], $4::timestamptz[])
     ON CONFLICT (number) DO UPDATE SET hash = excluded.hash, parent_hash = excluded.parent_hash,
                                        timestamp = excluded.timestamp`,
    [
      int8Array(blocks.map((b) => b.number)),
      varcharArray(blocks.map((b) => b.hash.toLowerCase())),
      varcharArray(blocks.map((b) => b.parentHash.toLowerCase())),
      timestamptzArray(blocks.map((b) => b.timestamp)),
    ],
  )
}

/** Keeps block hashes of the unconfirmed window plus `keep` blocks below it, and always the newest. */
export async function pruneBlocks(
  client: pg.PoolClient,
  confirmedBlock: bigint,
  keep: bigint,
): Promise<void> {
  await client.query('DELETE FROM blocks WHERE number < $1 AND number < (SELECT max(number) FROM blocks)', [
    (confirmedBlock - keep).toString(),
  ])
}

/** Stored hashes of the given block numbers (blocks not stored are absent). */
export async function storedHashes(db: Queryable, numbers: bigint[]): Promise<Map<bigint, string>> {
  if (numbers.length === 0) return new Map()
  const { rows } = await db.query<{ number: string; hash: string }>(
    'SELECT number::text, hash FROM blocks WHERE number = ANY($1::bigint[])',
    [numbers.map(String)],
  )
  return new Map(rows.map((r) => [BigInt(r.number), r.hash]))
}

export interface StoredBlock {
  number: bigint
  hash: string
}

/** Stored block hashes, newest first. */
export async function storedBlocks(db: Queryable, limit = 10_000): Promise<StoredBlock[]> {
  const { rows } = await db.query<{ block_number: string; hash: string }>(
    'SELECT b.number::text AS block_number, b.hash FROM blocks b ORDER BY b.number DESC LIMIT $1',
    [limit],
  )
  return rows.map((r) => ({ number: BigInt(r.block_number), hash: r.hash }))
}
