/**
 * Pruning of the activity journal (docs/push.md, "The activity journal"):
 * entries older than the retention go, oldest first, a bounded batch per
 * statement so that no delete holds locks or builds WAL for long.
 */
import type pg from 'pg'

/** Deletes at most `limit` of the oldest entries recorded more than `retentionMs` ago; returns how many. */
export async function pruneJournalBatch(pool: pg.Pool, retentionMs: number, limit: number): Promise<number> {
  const { rowCount } = await pool.query(
    `DELETE FROM activity_journal
      WHERE seq IN (SELECT seq FROM activity_journal
                     WHERE recorded_at < now() - $1 * interval '1 millisecond'
                     ORDER BY seq LIMIT $2)`,
    [retentionMs, limit],
  )
  return rowCount ?? 0
}
