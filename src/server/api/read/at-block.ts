/**
 * `at_block` (docs/api.md, "Ownership views", "Snapshots"): a request for the
 * state after a past block. Served only for a block that is
 *  - confirmed: at or below the indexer's confirmed block (a reorganisation
 *    within CONFIRMATIONS cannot change it; one deeper, or a repair, moves
 *    indexer_state.history_rewritten_at and so retires the snapshots kept of
 *    it: snapshot-cache.ts), and
 *  - covered: inside the coverage window (from coverage start_block), with
 *    the coverage `complete` — for a collection-scoped answer, the
 *    collection's coverage (its whole history inside the window); while a
 *    backfill runs the coverage is partial and no snapshot is served.
 * Otherwise 400 INVALID_ARGUMENT naming the reason and the blocks served.
 */
import type { Coverage } from '@/lib/schemas'
import { ApiError } from '@/server/errors/api-error'
import type { IndexerSnapshot } from './indexer-snapshot'

/** Largest block number accepted (PostgreSQL bigint). */
export const MAX_BLOCK = 2n ** 63n - 1n

const group = (n: bigint) => n.toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',')

/**
 * The block of a request's `at_block` (validated as decimal digits by its
 * schema), after checking it is confirmed and covered by `coverage` (the
 * page's: global, or the collection's).
 */
export function snapshotBlock(atBlock: string, snapshot: IndexerSnapshot, coverage: Coverage): bigint {
  const block = BigInt(atBlock)
  const confirmed = snapshot.lastConfirmedBlock
  const start = snapshot.coverageStartBlock
  const range = start !== null && start <= confirmed ? `blocks ${group(start)} to ${group(confirmed)}` : null
  const served = range ? `snapshots are served for ${range}` : 'no block is served yet'
  if (start === null || snapshot.coverageStatus === 'unknown')
    throw new ApiError(
      'INVALID_ARGUMENT',
      `at_block ${atBlock}: the index has no known coverage yet; ${served}.`,
    )
  if (block > confirmed)
    throw new ApiError('INVALID_ARGUMENT', `at_block ${atBlock} is not confirmed yet; ${served}.`)
  if (block < start)
    throw new ApiError(
      'INVALID_ARGUMENT',
      `at_block ${atBlock} is before the indexed window (coverage starts at block ${group(start)}); ${served}.`,
    )
  if (snapshot.coverageStatus !== 'complete')
    throw new ApiError(
      'INVALID_ARGUMENT',
      `at_block ${atBlock}: coverage is partial while the indexer's backfill runs, so no snapshot is served yet (${range ?? 'no blocks'} once it completes).`,
    )
  if (coverage.status !== 'complete')
    throw new ApiError(
      'INVALID_ARGUMENT',
      `at_block ${atBlock}: the collection's history is not wholly inside the indexed window (coverage ${coverage.status}), so no snapshot of it is served.`,
    )
  return block
}
