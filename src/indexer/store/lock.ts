import type pg from 'pg'
import type { Logger } from 'pino'
import { LeaderLockLostError } from '../errors'
import { sleep } from '../util/sleep'

export interface LeaderLock {
  /** Aborted when the lock's connection dies: the process must stop writing. */
  readonly lost: AbortSignal
  release(): Promise<void>
}

/**
 * Only one indexer writes at a time: a session-level advisory lock held on a
 * dedicated connection. A second instance polls until the first one's
 * connection closes (process exit, kill -9, network loss), then takes over.
 */
export async function acquireLeaderLock(
  pool: pg.Pool,
  opts: { network: string; logger: Logger; signal?: AbortSignal; pollMs?: number },
): Promise<LeaderLock> {
  const client = await pool.connect()
  const lost = new AbortController()
  const onError = (err: Error) => lost.abort(new LeaderLockLostError(err))
  const onEnd = () => lost.abort(new LeaderLockLostError())
  client.on('error', onError)
  client.on('end', onEnd)
  const detach = () => {
    client.off('error', onError)
    client.off('end', onEnd)
  }
  const key = `:nft-indexer-leader:${opts.network}`
  let announced = false
  try {
    for (;;) {
      const { rows } = await client.query<{ locked: boolean }>(
        'SELECT pg_try_advisory_lock(hashtext(current_schema() || $1)) AS locked',
        [key],
      )
      if (rows[0]?.locked) break
      if (!announced) {
        opts.logger.info('another indexer holds the leader lock; waiting to take over')
        announced = true
      }
      await sleep(opts.pollMs ?? 1_000, opts.signal)
    }
  } catch (err) {
    detach()
    client.release(true)
    throw err
  }
  opts.logger.info('leader lock acquired')
  // Keep the connection observably alive: a dead socket shows up as an error here.
  const heartbeat = setInterval(() => {
    client.query('SELECT 1').catch((err: Error) => lost.abort(new LeaderLockLostError(err)))
  }, 5_000)
  heartbeat.unref()
  return {
    lost: lost.signal,
    release: async () => {
      clearInterval(heartbeat)
      // The error listener stays: a dying connection must not surface as an unhandled 'error'.
      client.off('end', onEnd)
      try {
        await client.query('SELECT pg_advisory_unlock(hashtext(current_schema() || $1))', [key])
      } finally {
        client.release(true)
      }
    },
  }
}
