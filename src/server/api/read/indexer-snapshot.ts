/**
 * The indexer snapshot: indexer_state as one /v1 request sees it. It gives
 * every data response its freshness — the indexer's head and confirmed
 * block, read once per request and sent as
 * `X-Chain-Head` (last_seen_block) and `X-Confirmed-Block`
 * (last_confirmed_block). The same snapshot feeds page coverage and
 * transfer confirmations, so one request never mixes two readings.
 *
 * The read is shared: one in-flight query per database serves every request
 * that arrives while it runs, and a result is reused for at most
 * SNAPSHOT_TTL_MS (the indexer moves the head at block time, seconds, so a
 * 250 ms old head is as good as a fresh one and saves a round trip per
 * request under load).
 */
import type pg from 'pg'
import type { Config } from '@/config/env'
import type { Database } from '@/db/database'
import type { MetadataQueueReport, RpcEndpointState } from '@/db/queries/indexer-state'
import { selectIndexerSnapshot, spansFromState, type VerifiedSpan } from '@/db/queries/indexer-state'
import type { CoverageStatus } from '@/lib/schemas'

export const SNAPSHOT_TTL_MS = 250

/** The indexer_state row as the API needs it; `updatedAt` null while the indexer has not written it yet. */
export interface IndexerSnapshot {
  coverageStatus: CoverageStatus
  coverageStartBlock: bigint | null
  lastSeenBlock: bigint
  lastConfirmedBlock: bigint
  lastIndexedBlock: bigint | null
  coverageVerifiedAt: Date | null
  updatedAt: Date | null
  lastVerifiedBlock: bigint | null
  verificationMismatches: bigint
  verificationRepairs: bigint
  /** How the verified blocks were verified (indexer_state.verification_spans). */
  verificationSpans: VerifiedSpan[]
  logIndexUntrusted: boolean
  /** When an RPC endpoint last answered the head (the indexer writes it). */
  headObservedAt: Date | null
  rpcEndpoints: RpcEndpointState[]
  /** What the metadata queue last reported (indexer_state.metadata_queue), null before its first report. */
  metadataQueue: Pick<MetadataQueueReport, 'backlog' | 'backed_off_hosts'> | null
  /**
   * When the history at or below the confirmed block last changed (a reorganisation deeper
   * than CONFIRMATIONS, a repair, an import, a new START_BLOCK), in microseconds since the
   * epoch: snapshots at past blocks are kept under it (snapshot-cache.ts).
   */
  historyRewrittenAt: string
}

const EMPTY: IndexerSnapshot = {
  coverageStatus: 'unknown',
  coverageStartBlock: null,
  lastSeenBlock: 0n,
  lastConfirmedBlock: 0n,
  lastIndexedBlock: null,
  coverageVerifiedAt: null,
  updatedAt: null,
  lastVerifiedBlock: null,
  verificationMismatches: 0n,
  verificationRepairs: 0n,
  verificationSpans: [],
  logIndexUntrusted: false,
  headObservedAt: null,
  rpcEndpoints: [],
  metadataQueue: null,
  historyRewrittenAt: '',
}

interface CacheEntry {
  at: number
  value: Promise<IndexerSnapshot>
}

const caches = new WeakMap<pg.Pool, Map<string, CacheEntry>>()

async function readSnapshot(pool: pg.Pool, network: string): Promise<IndexerSnapshot> {
  const row = await selectIndexerSnapshot(pool, network)
  if (!row) return EMPTY
  const status = row.coverage_status
  return {
    coverageStatus: status === 'complete' || status === 'partial' ? status : 'unknown',
    coverageStartBlock: row.coverage_start_block === null ? null : BigInt(row.coverage_start_block),
    lastSeenBlock: BigInt(row.last_seen_block),
    lastConfirmedBlock: BigInt(row.last_confirmed_block),
    lastIndexedBlock: row.last_indexed_block === null ? null : BigInt(row.last_indexed_block),
    coverageVerifiedAt: row.coverage_verified_at,
    updatedAt: row.updated_at,
    lastVerifiedBlock: row.last_verified_block === null ? null : BigInt(row.last_verified_block),
    verificationMismatches: BigInt(row.verification_mismatches),
    verificationRepairs: BigInt(row.verification_repairs),
    verificationSpans: spansFromState(row.verification_spans),
    logIndexUntrusted: row.log_index_untrusted === true,
    headObservedAt: row.head_observed_at,
    rpcEndpoints: Array.isArray(row.rpc_endpoints) ? row.rpc_endpoints : [],
    metadataQueue:
      row.metadata_queue && typeof row.metadata_queue === 'object'
        ? {
            backlog: row.metadata_queue.backlog ?? {},
            backed_off_hosts: Array.isArray(row.metadata_queue.backed_off_hosts)
              ? row.metadata_queue.backed_off_hosts
              : [],
          }
        : null,
    historyRewrittenAt: row.history_rewritten_at,
  }
}

/** The indexer's state, at most SNAPSHOT_TTL_MS old (ttlMs 0: always a fresh read). */
export function indexerSnapshot(
  pool: pg.Pool,
  network: string,
  ttlMs = SNAPSHOT_TTL_MS,
): Promise<IndexerSnapshot> {
  let cache = caches.get(pool)
  if (!cache) {
    cache = new Map()
    caches.set(pool, cache)
  }
  const now = performance.now()
  const hit = cache.get(network)
  if (hit && now - hit.at < ttlMs) return hit.value
  const value = readSnapshot(pool, network)
  const entry = { at: now, value }
  cache.set(network, entry)
  // A failed read is not cached: the next request tries again.
  value.catch(() => {
    if (cache.get(network) === entry) cache.delete(network)
  })
  return value
}

/** Forgets cached snapshots of a pool (tests that change indexer_state). */
export function clearIndexerSnapshot(pool: pg.Pool): void {
  caches.delete(pool)
}

export function freshnessHeaders(snapshot: IndexerSnapshot): Record<string, string> {
  return {
    'X-Chain-Head': snapshot.lastSeenBlock.toString(),
    'X-Confirmed-Block': snapshot.lastConfirmedBlock.toString(),
  }
}

/** `ctx.snapshot()` of one request: memoized, so its body, coverage and headers share one reading. */
export function requestSnapshot(ctx: {
  db: Pick<Database, 'pool'>
  config: Pick<Config, 'NETWORK'>
}): () => Promise<IndexerSnapshot> {
  let memo: Promise<IndexerSnapshot> | undefined
  return () => {
    memo ??= indexerSnapshot(ctx.db.pool, ctx.config.NETWORK)
    return memo
  }
}
