/**
 * What wakes the readers of the activity journal (docs/push.md, "Live
 * stream"): a LISTEN connection on the journal's and the head's channels,
 * and the small read that the fallback poll compares between rounds.
 */
import type pg from 'pg'
import { ACTIVITY_JOURNAL_CHANNEL, INDEXER_HEAD_CHANNEL } from './activity-journal'
import type { ReadDb } from './sql'

export interface JournalNotifications {
  /** New entries were committed. */
  journal(): void
  /** The indexer's head moved to `head`. */
  head(head: bigint): void
}

/**
 * LISTENs on both channels on a connection of its own (taken from the pool
 * for as long as it listens). `onEnd` runs once when the connection fails or
 * ends. Returns a stop function.
 */
export async function listenForJournal(
  pool: pg.Pool,
  on: JournalNotifications,
  onEnd: (err?: Error) => void,
): Promise<() => Promise<void>> {
  const client = await pool.connect()
  let ended = false
  const end = (err?: Error) => {
    if (ended) return
    ended = true
    client.off('notification', onNotification)
    client.release(err ?? true)
    onEnd(err)
  }
  const onNotification = (msg: pg.Notification) => {
    if (msg.channel === ACTIVITY_JOURNAL_CHANNEL) on.journal()
    else if (msg.channel === INDEXER_HEAD_CHANNEL && msg.payload && /^[0-9]+$/.test(msg.payload)) {
      on.head(BigInt(msg.payload))
    }
  }
  client.on('notification', onNotification)
  client.once('error', (err) => end(err))
  client.once('end', () => end())
  try {
    await client.query(`LISTEN ${ACTIVITY_JOURNAL_CHANNEL}`)
    await client.query(`LISTEN ${INDEXER_HEAD_CHANNEL}`)
  } catch (err) {
    end(err as Error)
    throw err
  }
  return async () => {
    if (ended) return
    await client.query('UNLISTEN *').catch(() => undefined)
    end()
  }
}

/** The journal's newest seq (0 when empty) and the head of `network` (null before the indexer's first run). */
export async function journalPulse(
  db: ReadDb,
  network: string,
): Promise<{ newest: bigint; head: bigint | null }> {
  const { rows } = await db.pool.query<{ newest: string | null; head: string | null }>(
    `SELECT (SELECT max(seq) FROM activity_journal)::text AS newest,
            (SELECT last_seen_block FROM indexer_state WHERE network = $1)::text AS head`,
    [network],
  )
  const row = rows[0]
  return { newest: BigInt(row?.newest ?? '0'), head: row?.head == null ? null : BigInt(row.head) }
}
