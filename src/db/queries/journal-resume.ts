/**
 * Where a live stream may resume (docs/push.md, "Live stream"): the newest
 * event id ever given out and the oldest one still kept.
 */
import type { ReadDb } from './sql'

/**
 * `newest`: the highest seq kept (the sequence's last value when pruning
 * emptied the journal; 0 before the first entry). `oldest`: the lowest seq
 * kept (null when the journal is empty).
 */
export async function journalResumeBounds(db: ReadDb): Promise<{ newest: bigint; oldest: bigint | null }> {
  const { rows } = await db.pool.query<{ newest: string | null; oldest: string | null; assigned: string }>(
    `SELECT (SELECT max(seq) FROM activity_journal)::text AS newest,
            (SELECT min(seq) FROM activity_journal)::text AS oldest,
            (SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM activity_journal_seq_seq)::text AS assigned`,
  )
  const row = rows[0]!
  return {
    newest: BigInt(row.newest ?? row.assigned),
    oldest: row.oldest === null ? null : BigInt(row.oldest),
  }
}
