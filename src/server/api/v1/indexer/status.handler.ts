import { type IndexerSnapshot, indexerSnapshot } from '@/server/api/read/indexer-snapshot'
import type { V1Context } from '@/server/api/trpc/v1'
import { ApiError } from '@/server/errors/api-error'
import type { IndexerStatus } from './status.schema'

/**
 * A sanitized view of the indexer's coverage and freshness, from the same
 * shared indexer_state snapshot (≤ 250 ms old) that every /v1 response's
 * freshness headers come from, so the body and the headers always agree.
 */
export async function getIndexerStatus(
  ctx: Pick<V1Context, 'config' | 'db'>,
  input: { network?: string | undefined },
): Promise<IndexerStatus> {
  const network = ctx.config.NETWORK
  if (input.network !== undefined && input.network !== network) {
    throw new ApiError(
      'NOT_FOUND',
      `Network '${input.network}' is not indexed here; this service indexes '${network}'.`,
    )
  }
  const state = await indexerSnapshot(ctx.db.pool, network)
  // Before the indexer's first write updated_at is the time of the request: nothing to keep.
  if (state.updatedAt === null) return toStatus(network, state)
  let status = statuses.get(state)
  if (!status) {
    status = toStatus(network, state)
    statuses.set(state, status)
  }
  return status
}

/** The status of each snapshot, built once: a snapshot serves every request for up to 250 ms. */
const statuses = new WeakMap<IndexerSnapshot, IndexerStatus>()

function toStatus(network: string, state: IndexerSnapshot): IndexerStatus {
  const indexed = state.lastIndexedBlock
  const headAge =
    state.headObservedAt === null
      ? null
      : Math.max(0, Math.floor((Date.now() - state.headObservedAt.getTime()) / 1000))
  const lag = indexed === null ? state.lastSeenBlock : state.lastSeenBlock - indexed
  return {
    network,
    // Before the indexer's first write no claim is made.
    coverage_status: state.updatedAt === null ? 'unknown' : state.coverageStatus,
    coverage_start_block: state.coverageStartBlock?.toString() ?? null,
    last_confirmed_block: state.lastConfirmedBlock.toString(),
    last_seen_block: state.lastSeenBlock.toString(),
    coverage_verified_at: state.coverageVerifiedAt?.toISOString() ?? null,
    updated_at: (state.updatedAt ?? new Date()).toISOString(),
    last_indexed_block: indexed?.toString() ?? null,
    lag_blocks: (lag > 0n ? lag : 0n).toString(),
    last_verified_block: state.lastVerifiedBlock?.toString() ?? null,
    verification_mismatches: state.verificationMismatches.toString(),
    verification_repairs: state.verificationRepairs.toString(),
    verified_by: state.verificationSpans.map((s) => ({
      from_block: s.from.toString(),
      to_block: s.to.toString(),
      method: s.method,
      proof_sample_rate: s.sampleRate,
    })),
    log_index_untrusted: state.logIndexUntrusted,
    head_age_seconds: headAge,
    rpc_status: rpcStatusOf(state, headAge),
    rpc_endpoints: state.rpcEndpoints.map((e) => ({
      endpoint: e.endpoint,
      state: endpointStates.has(e.state) ? (e.state as EndpointState) : 'failing',
      head: e.head,
    })),
    metadata_backlog: state.metadataQueue
      ? {
          pending: count(state.metadataQueue.backlog.pending),
          timeout: count(state.metadataQueue.backlog.timeout),
          http_error: count(state.metadataQueue.backlog.http_error),
        }
      : null,
    metadata_hosts_backed_off: (state.metadataQueue?.backed_off_hosts ?? []).slice(0, 100).map((h) => ({
      host: String(h.host),
      state: h.state === 'half_open' ? 'half_open' : 'open',
      until: Number.isFinite(Date.parse(h.until))
        ? new Date(h.until).toISOString()
        : new Date(0).toISOString(),
      outcome: String(h.outcome),
    })),
  }
}

const count = (n: unknown) => (typeof n === 'number' && Number.isSafeInteger(n) && n >= 0 ? n : 0)

/** No head from any endpoint for this long: the chain is unreachable (or the indexer is down). */
export const UNREACHABLE_AFTER_SECONDS = 30

type EndpointState = IndexerStatus['rpc_endpoints'][number]['state']
const endpointStates = new Set<string>(['ok', 'lagging', 'rate_limited', 'failing', 'syncing'])

/** The honest summary of the chain connection (docs/api.md, "Indexer status"). */
function rpcStatusOf(state: IndexerSnapshot, headAge: number | null): IndexerStatus['rpc_status'] {
  if (headAge === null) return 'unknown'
  if (headAge > UNREACHABLE_AFTER_SECONDS) return 'unreachable'
  const states = state.rpcEndpoints.map((e) => e.state)
  if (states.length > 0 && states.every((s) => s === 'lagging' || s === 'syncing')) return 'behind'
  if (states.some((s) => s !== 'ok')) return 'degraded'
  return 'ok'
}
