import type { ApiContext } from '@/server/api/trpc'
import { ApiError } from '@/server/errors/api-error'
import type { IndexerStatus } from './status.schema'

/** A sanitized view of the indexer's coverage and freshness. */
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
  const state = await ctx.db.prisma.indexerState.findUnique({ where: { network } })
  if (!state) {
    // The indexer has not written its first state yet: no claim is made.
    return {
      network,
      coverage_status: 'unknown',
      coverage_start_block: null,
      last_confirmed_block: '0',
      last_seen_block: '0',
      coverage_verified_at: null,
      updated_at: new Date().toISOString(),
      last_indexed_block: null,
      lag_blocks: '0',
    }
  }
  const indexed = state.lastIndexedBlock
  const lag = indexed === null ? state.lastSeenBlock : state.lastSeenBlock - indexed
  return {
    network,
    coverage_status: state.coverageStatus as IndexerStatus['coverage_status'],
    coverage_start_block: state.coverageStartBlock?.toString() ?? null,
    last_confirmed_block: state.lastConfirmedBlock.toString(),
    last_seen_block: state.lastSeenBlock.toString(),
    coverage_verified_at: state.coverageVerifiedAt?.toISOString() ?? null,
    updated_at: state.updatedAt.toISOString(),
    last_indexed_block: indexed?.toString() ?? null,
    lag_blocks: (lag > 0n ? lag : 0n).toString(),
  }
}
