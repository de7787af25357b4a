/**
 * The JSON columns of indexer_state: the indexer writes them, the status
 * endpoint reads them. Their shape is defined once, here; a reader still
 * tolerates a missing or older value (the column is plain jsonb).
 */

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
