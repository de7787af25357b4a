import type pg from 'pg'

export type Queryable = pg.Pool | pg.PoolClient

/**
 * Every writer of chain data (sync commits, rollbacks, imports, API test
 * fixtures) takes this transaction-scoped lock first, so derived state is
 * never updated by two transactions at once. Keyed by schema, so test
 * databases that share one server do not block each other.
 */
const WRITE_LOCK_SQL = "SELECT pg_advisory_xact_lock(hashtext(current_schema() || ':nft-indexer-write'))"

export async function withWriteTransaction<T>(
  pool: pg.Pool,
  fn: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect()
  try {
    await client.query('BEGIN')
    await client.query(WRITE_LOCK_SQL)
    const result = await fn(client)
    await client.query('COMMIT')
    return result
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined)
    throw err
  } finally {
    client.release()
  }
}

export const isoTimestamp = (unixSeconds: bigint) => new Date(Number(unixSeconds) * 1000).toISOString()
