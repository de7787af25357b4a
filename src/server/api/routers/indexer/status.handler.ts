import { type IndexerSnapshot, indexerSnapshot } from '@/server/api/middleware/freshness'
import type { ApiContext } from '@/server/api/trpc'
import { ApiError } from '@/server/errors/api-error'
import type { IndexerStatus } from './status.schema'

/**
 * A sanitized view of the indexer's coverage and freshness, from the same
 * shared indexer_state snapshot (≤ 250 ms old) that every /v1 response's
 * freshness headers come from, so the body and the headers always agree.
 */
export async function getIndexerStatus(
  ctx: Pick<ApiContext, 'config' | 'db'>,
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
  }
}
