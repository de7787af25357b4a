/**
 * The page `coverage` object (docs/api.md, "Coverage").
 *  - Global feeds (collections, activity, owner holdings) report the
 *    indexer's own status.
 *  - Collection- or token-scoped pages are `complete` only when the
 *    collection's whole history lies inside the covered window and the
 *    indexer reports `complete`; `partial` when the collection predates the
 *    window (or the indexer's backfill still runs); `unknown` when neither
 *    the deploy block nor the first seen block can tell.
 */
import type { Coverage } from '@/lib/schemas'
import type { IndexerSnapshot } from '@/server/api/read/indexer-snapshot'

export interface CollectionHistory {
  /** Deployment block, when known. */
  deployBlock: bigint | null
  /** First block with an event of the collection, when seen. */
  firstSeenBlock: bigint | null
}

export function globalCoverage(snapshot: IndexerSnapshot): Coverage {
  return { status: snapshot.coverageStatus, start_block: snapshot.coverageStartBlock?.toString() ?? null }
}

/** `collection` null: the collection is not known to the index. */
export function collectionCoverage(
  snapshot: IndexerSnapshot,
  collection: CollectionHistory | null,
): Coverage {
  const start = snapshot.coverageStartBlock
  const start_block = start?.toString() ?? null
  if (snapshot.coverageStatus === 'unknown' || start === null) return { status: 'unknown', start_block }
  // A window that starts at genesis holds every collection's whole history.
  const historyStart = start === 0n ? 0n : (collection?.deployBlock ?? collection?.firstSeenBlock ?? null)
  if (historyStart !== null && historyStart < start) return { status: 'partial', start_block }
  if (snapshot.coverageStatus === 'partial') return { status: 'partial', start_block }
  if (historyStart === null) return { status: 'unknown', start_block }
  return { status: 'complete', start_block }
}
