import type pg from 'pg'

export type Queryable = pg.Pool | pg.PoolClient

/**
 * Every writer of chain data (sync commits, rollbacks, imports, API test
 * fixtures) takes this transaction-scoped lock before it reads or writes
 * derived state (a sync commit: after inserting its transfers, store/commit.ts),
 * so derived state is never updated by two transactions at once. Keyed by
 * schema, so test databases that share one server do not block each other.
 */
const WRITE_LOCK_SQL = "SELECT pg_advisory_xact_lock(hashtext(current_schema() || ':nft-indexer-write'))"

export async function withWriteTransaction<T>(
  pool: pg.Pool,
  fn: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  return withTransaction(pool, async (client) => {
    await takeWriteLock(client)
    return fn(client)
  })
}

/** Runs `fn` in a transaction of its own: committed when it returns, rolled back when it throws. */
export async function withTransaction<T>(
  pool: pg.Pool,
  fn: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect()
  try {
    await client.query('BEGIN')
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

/** The writers' lock (above), held until the transaction ends. */
export async function takeWriteLock(client: pg.PoolClient): Promise<void> {
  await client.query(WRITE_LOCK_SQL)
}

/**
 * Runs statements without parameters in one round trip (one simple-protocol
 * query), one result each. Inside a transaction each statement still takes
 * its own snapshot, as if sent one by one. A backfill commit is a chain of
 * short statements whose answers wait for the event loop, busy decoding the
 * next ranges; every round trip saved shortens it (docs/indexer.md, "Crash safety").
 */
export async function queryAll(client: pg.PoolClient, statements: string[]): Promise<pg.QueryResult[]> {
  const results = (await client.query(statements.join(';\n'))) as unknown as pg.QueryResult | pg.QueryResult[]
  return Array.isArray(results) ? results : [results]
}

/** Takes the writers' lock and runs `statements` (without parameters) in the same round trip. */
export async function lockedQueryAll(client: pg.PoolClient, statements: string[]): Promise<pg.QueryResult[]> {
  return (await queryAll(client, [WRITE_LOCK_SQL, ...statements])).slice(1)
}

const UNIQUE_VIOLATION = '23505'

/**
 * Runs `write` (plain INSERTs of rows believed new) under a savepoint.
 * Returns false, with everything it wrote undone, when it hit a unique
 * violation; the caller then takes its careful path. Bulk inserts are cheaper
 * this way than with ON CONFLICT, which probes the unique index before every
 * row (docs/indexer.md, "Derived state (definitions)").
 */
export const insertIfAllNew = (client: pg.PoolClient, write: () => Promise<unknown>): Promise<boolean> =>
  unlessFailsWith(client, UNIQUE_VIOLATION, write)

/**
 * Runs `write` under a savepoint. Returns false, with everything it wrote
 * undone and the transaction usable, when it failed with SQLSTATE `code`;
 * any other failure is thrown.
 */
export async function unlessFailsWith(
  client: pg.PoolClient,
  code: string,
  write: () => Promise<unknown>,
): Promise<boolean> {
  const savepoint = `unless_${code}`
  await client.query(`SAVEPOINT ${savepoint}`)
  try {
    await write()
  } catch (err) {
    if ((err as { code?: unknown }).code !== code) throw err
    await client.query(`ROLLBACK TO SAVEPOINT ${savepoint}`)
    return false
  }
  await client.query(`RELEASE SAVEPOINT ${savepoint}`)
  return true
}
