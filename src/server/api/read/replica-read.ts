/**
 * Runs one /v1 read on the database the read replicas pick
 * (src/db/read-replicas.ts; docs/operations.md, "Read replicas"):
 *  - the request's indexer snapshot — freshness headers, coverage,
 *    `confirmations`, the indexer status — comes from the same server as its
 *    data, and is read before the data: replay only moves forward, so the
 *    data hold at least every block the snapshot claims, and a lagging
 *    replica never claims a block it does not have;
 *  - a read whose replica fails (down, unreachable, a conflict with replay)
 *    runs once more, from the start, on the primary, so a replica dying
 *    mid-request costs a retry, never an error.
 */
import type { Config } from '@/config/env'
import type { Database } from '@/db/database'
import { isReplicaFailure, type ReadReplicas } from '@/db/read-replicas'
import { type IndexerSnapshot, requestSnapshot } from './indexer-snapshot'

/** The parts of a /v1 request's context that name its database. */
export interface ReadTarget {
  config: Pick<Config, 'NETWORK'>
  db: Database
  snapshot: () => Promise<IndexerSnapshot>
  responseHeaders: Record<string, string>
}

export async function readOnReplica<T>(
  reads: ReadReplicas,
  ctx: ReadTarget,
  run: () => Promise<T>,
): Promise<T> {
  const db = reads.pick()
  // On the primary the request's own context already reads there: nothing to move.
  if (db === reads.primary && ctx.db === db) return run()
  readFrom(ctx, db)
  try {
    await readSnapshotFirst(ctx)
    return await run()
  } catch (err) {
    if (db === reads.primary || !isReplicaFailure(err)) throw err
    reads.readFailed(db, err)
    // Nothing of the failed attempt is kept: the snapshot and any header it set came from the replica.
    for (const name of Object.keys(ctx.responseHeaders)) delete ctx.responseHeaders[name]
    readFrom(ctx, reads.primary)
    await readSnapshotFirst(ctx)
    return run()
  }
}

function readFrom(ctx: ReadTarget, db: Database): void {
  ctx.db = db
  ctx.snapshot = requestSnapshot({ db, config: ctx.config })
}

/**
 * Reads (or joins the shared read of) the snapshot before the procedure reads
 * data. A failure is left to whoever needs the snapshot: a procedure fails
 * with it, the freshness headers are left out (src/server/rest/handler.ts).
 */
async function readSnapshotFirst(ctx: ReadTarget): Promise<void> {
  try {
    await ctx.snapshot()
  } catch {
    // See above.
  }
}
