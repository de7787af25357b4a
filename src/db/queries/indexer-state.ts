/**
 * Every read of indexer_state: the indexer's (its progress, tip, verified
 * prefix, log-index trust, verification spans) and the API's snapshot. The
 * indexer is the one writer (src/indexer/store/state.ts).
 *
 * The JSON columns' shape is defined once, here; a reader still tolerates a
 * missing or older value (the column is plain jsonb).
 */
import type pg from 'pg'
import type { CoverageStatus } from '@/lib/schemas'

/** A pool or a client in a transaction. */
type Queryable = pg.Pool | pg.PoolClient

/** One entry of indexer_state.rpc_endpoints: an endpoint by its position in RPC_URL (never its URL: it may carry an API key). */
export interface RpcEndpointState {
  /** 1-based position in RPC_URL. */
  endpoint: number
  state: string
  /** The endpoint's last head, decimal; null before it answered. */
  head: string | null
}

/** A metadata host the queue has backed off (circuit open or half open). */
export interface BackedOffHostState {
  host: string
  state: string
  /** RFC 3339: when the host is tried again. */
  until: string
  /** The outcome that opened the circuit. */
  outcome: string
}

/** A collection backed off on one metadata host, whose other collections it still serves. */
export interface BackedOffCollectionState extends BackedOffHostState {
  /** The collection's address. */
  collection: string
}

/** indexer_state.metadata_queue: the metadata queue's last report. */
export interface MetadataQueueReport {
  /** Tokens waiting for a retry, by outcome. */
  backlog: Record<string, number>
  in_flight: number
  in_memory: number
  /** At most 100 of the backed-off hosts. */
  backed_off_hosts: BackedOffHostState[]
  backed_off_count: number
  /** At most 100 of the collections backed off on a host (absent in reports of older versions). */
  backed_off_collections?: BackedOffCollectionState[]
  backed_off_collections_count?: number
  /** RFC 3339: when the report was written. */
  at: string
}

/**
 * One entry of indexer_state.verification_spans: blocks from..to (decimal) and how they were
 * verified (docs/indexer.md, "Verification"). `sample_rate`: the share of blocks proven by
 * receipts at random on top of the reads, null when none were.
 */
export interface VerificationSpanState {
  from: string
  to: string
  method: string
  sample_rate: number | null
}

/**
 * - receipts_proof: every block proven by its receipts against its header's receiptsRoot.
 * - second_endpoint: reads served by two or more endpoints agreed (plus a sampled proof where
 *   `sampleRate` is set).
 * - sampled_proof: reads that agreed, served by one endpoint, and a random share `sampleRate`
 *   of the blocks proven by receipts.
 * - repeated_reads: reads of one endpoint that agreed; no proof (the node has no receipts).
 * - mixed: spans of several methods merged to keep the list short (MAX_SPANS).
 */
export type VerificationMethod =
  | 'receipts_proof'
  | 'second_endpoint'
  | 'sampled_proof'
  | 'repeated_reads'
  | 'mixed'

export interface VerifiedSpan {
  from: bigint
  to: bigint
  method: VerificationMethod
  /** Share of the span's blocks proven at random on top of agreeing reads; null when none were. */
  sampleRate: number | null
}

const METHODS = new Set<string>([
  'receipts_proof',
  'second_endpoint',
  'sampled_proof',
  'repeated_reads',
  'mixed',
])

/** The column's value as spans; anything unreadable is left out (its blocks then name no method). */
export function spansFromState(value: unknown): VerifiedSpan[] {
  if (!Array.isArray(value)) return []
  const out: VerifiedSpan[] = []
  for (const v of value as Partial<VerificationSpanState>[]) {
    if (typeof v?.from !== 'string' || typeof v.to !== 'string' || !METHODS.has(String(v.method))) continue
    if (!/^\d+$/.test(v.from) || !/^\d+$/.test(v.to)) continue
    const rate =
      typeof v.sample_rate === 'number' && v.sample_rate > 0 && v.sample_rate <= 1 ? v.sample_rate : null
    out.push({
      from: BigInt(v.from),
      to: BigInt(v.to),
      method: v.method as VerificationMethod,
      sampleRate: rate,
    })
  }
  return out
}

export const spansToState = (spans: VerifiedSpan[]): VerificationSpanState[] =>
  spans.map((s) => ({
    from: s.from.toString(),
    to: s.to.toString(),
    method: s.method,
    sample_rate: s.sampleRate,
  }))

/** The indexer's view of its state row. */
export interface IndexerStateRow {
  network: string
  chainId: number
  startBlock: bigint
  lastSeenBlock: bigint
  lastIndexedBlock: bigint | null
  lastConfirmedBlock: bigint
  lastVerifiedBlock: bigint | null
  coverageStatus: CoverageStatus
}

/** The SELECT behind IndexerStateRow; callers add the WHERE (and FOR UPDATE). */
export const INDEXER_STATE_SQL = `SELECT network, chain_id::text, start_block::text, last_seen_block::text,
       last_indexed_block::text, last_confirmed_block::text, last_verified_block::text, coverage_status
  FROM indexer_state`

/** One row of INDEXER_STATE_SQL. */
export interface IndexerStateRecord {
  network: string
  chain_id: string
  start_block: string
  last_seen_block: string
  last_indexed_block: string | null
  last_confirmed_block: string
  last_verified_block: string | null
  coverage_status: CoverageStatus
}

export function indexerStateFromRecord(row: IndexerStateRecord): IndexerStateRow {
  return {
    network: row.network,
    chainId: Number(row.chain_id),
    startBlock: BigInt(row.start_block),
    lastSeenBlock: BigInt(row.last_seen_block),
    lastIndexedBlock: row.last_indexed_block === null ? null : BigInt(row.last_indexed_block),
    lastConfirmedBlock: BigInt(row.last_confirmed_block),
    lastVerifiedBlock: row.last_verified_block === null ? null : BigInt(row.last_verified_block),
    coverageStatus: row.coverage_status,
  }
}

/** The state row of `network` (locked for update when `forUpdate`), or undefined when there is none. */
export async function selectIndexerState(
  db: Queryable,
  network: string,
  forUpdate = false,
): Promise<IndexerStateRecord | undefined> {
  const { rows } = await db.query<IndexerStateRecord>(
    `${INDEXER_STATE_SQL} WHERE network = $1 ${forUpdate ? 'FOR UPDATE' : ''}`,
    [network],
  )
  return rows[0]
}

/** The last indexed block and its stored hash (null when the block is no longer stored). */
export async function selectTip(
  db: Queryable,
  network: string,
): Promise<{ number: string | null; hash: string | null } | undefined> {
  const { rows } = await db.query<{ number: string | null; hash: string | null }>(
    `SELECT st.last_indexed_block::text AS number, b.hash
       FROM indexer_state st LEFT JOIN blocks b ON b.number = st.last_indexed_block
      WHERE st.network = $1`,
    [network],
  )
  return rows[0]
}

/** indexer_state.last_verified_block, decimal (undefined without a row). */
export async function selectLastVerifiedBlock(
  db: Queryable,
  network: string,
): Promise<string | null | undefined> {
  const { rows } = await db.query<{ verified: string | null }>(
    'SELECT last_verified_block::text AS verified FROM indexer_state WHERE network = $1',
    [network],
  )
  return rows[0]?.verified
}

/**
 * What a progress update starts from, in the caller's transaction: the end of the contiguous
 * indexed range that holds `startBlock` (`contiguousEndSql`, with `startBlock` as $1), the
 * verified prefix and the verification spans.
 */
export async function selectProgressBasis(
  client: pg.PoolClient,
  network: string,
  startBlock: bigint,
  contiguousEndSql: string,
): Promise<{ indexed_end: string | null; verified: string | null; spans: unknown } | undefined> {
  const { rows } = await client.query<{
    indexed_end: string | null
    verified: string | null
    spans: unknown
  }>(
    `SELECT (${contiguousEndSql}) AS indexed_end, st.last_verified_block::text AS verified,
            st.verification_spans AS spans
       FROM indexer_state st WHERE st.network = $2`,
    [startBlock.toString(), network],
  )
  return rows[0]
}

/** indexer_state.log_index_untrusted (undefined without a row). */
export async function selectLogIndexUntrusted(db: Queryable, network: string): Promise<boolean | undefined> {
  const { rows } = await db.query<{ untrusted: boolean }>(
    'SELECT log_index_untrusted AS untrusted FROM indexer_state WHERE network = $1',
    [network],
  )
  return rows[0]?.untrusted
}

/** indexer_state.verification_spans as stored (undefined without a row). */
export async function selectVerificationSpans(db: Queryable, network: string): Promise<unknown> {
  const { rows } = await db.query<{ spans: unknown }>(
    'SELECT verification_spans AS spans FROM indexer_state WHERE network = $1',
    [network],
  )
  return rows[0]?.spans
}

/** The row the API's snapshot is built from (src/server/api/read/indexer-snapshot.ts). */
export interface IndexerSnapshotRecord {
  coverage_status: string
  coverage_start_block: string | null
  last_seen_block: string
  last_confirmed_block: string
  last_indexed_block: string | null
  coverage_verified_at: Date | null
  updated_at: Date
  last_verified_block: string | null
  verification_mismatches: string
  verification_repairs: string
  verification_spans: unknown
  log_index_untrusted: boolean
  head_observed_at: Date | null
  rpc_endpoints: RpcEndpointState[] | null
  metadata_queue: Partial<MetadataQueueReport> | null
  /** Microseconds since the epoch, exact (a JavaScript Date keeps milliseconds). */
  history_rewritten_at: string
}

/** indexer_state.history_rewritten_at in microseconds, as text (exact, unlike a Date). */
export const HISTORY_STAMP_SQL = '(extract(epoch FROM history_rewritten_at) * 1000000)::bigint::text'

/** The snapshot row of `network`, undefined before the indexer created it. */
export async function selectIndexerSnapshot(
  db: Queryable,
  network: string,
): Promise<IndexerSnapshotRecord | undefined> {
  const { rows } = await db.query<IndexerSnapshotRecord>(
    `SELECT coverage_status, coverage_start_block::text, last_seen_block::text, last_confirmed_block::text,
            last_indexed_block::text, coverage_verified_at, updated_at, last_verified_block::text,
            verification_mismatches::text, verification_repairs::text, verification_spans,
            log_index_untrusted, head_observed_at, rpc_endpoints, metadata_queue,
            ${HISTORY_STAMP_SQL} AS history_rewritten_at
       FROM indexer_state WHERE network = $1`,
    [network],
  )
  return rows[0]
}
