/**
 * What the read queries share: the handle they run on and SQL fragments.
 */
import type pg from 'pg'
import type { Database } from '@/db/database'

/** The database a read runs on (a /v1 request's `ctx.db`: the primary or a replica). */
export type ReadDb = Pick<Database, 'pool'>

/** SQL rendering of a timestamptz column as RFC 3339 UTC with milliseconds (like Date.toISOString). */
export const isoSql = (column: string) =>
  `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`

/** SQL: a timestamptz column as integer Unix microseconds (exact: extract gives a numeric). */
export const microsInt8Sql = (column: string) => `(extract(epoch FROM ${column}) * 1000000)::int8`

/** SQL: a timestamptz column as integer Unix microseconds, as text. */
export const microsSql = (column: string) => `${microsInt8Sql(column)}::text`

/** SQL: integer Unix microseconds as a timestamptz (exact). */
export const fromMicrosSql = (us: string) => `('epoch'::timestamptz + (${us}) * interval '1 microsecond')`

/** ILIKE pattern matching `text` anywhere, with %, _ and the escape character taken literally. */
export function substringPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`
}

/** A newest-first keyset cursor: rows strictly before (timestamp, id). */
export interface BeforeKey {
  /** RFC 3339 with microseconds, for a `timestamptz` parameter. */
  timestamp: string
  id: number
}

/**
 * Runs `work` on one connection of the pool inside a transaction opened by `begin` (a BEGIN,
 * with its options and SET LOCALs), committed when `work` resolves, rolled back when it throws.
 * A connection that cannot end its transaction (a query cut by the client's own time-out) is
 * closed, never reused.
 */
export async function inClientTransaction<T>(
  db: ReadDb,
  begin: string,
  work: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const client = await db.pool.connect()
  let broken: Error | undefined
  try {
    await client.query(begin)
    const result = await work(client)
    await client.query('COMMIT')
    return result
  } catch (err) {
    await client.query('ROLLBACK').catch((rollback: Error) => {
      broken = rollback
    })
    throw err
  } finally {
    client.release(broken)
  }
}

/**
 * Runs a named statement on its generic plan (docs/database.md, "Prepared statements"), in a
 * transaction of its own whose `SET LOCAL plan_cache_mode` ends with it: the setting holds for
 * every statement on a connection, unnamed ones included, and these must not inherit it. A
 * stand-in that only runs queries (the tests' and benchmarks' EXPLAIN wrappers) runs the
 * statement as it is.
 */
export async function queryOnGenericPlan<R extends pg.QueryResultRow>(
  db: ReadDb,
  statement: pg.QueryConfig & { name: string },
): Promise<R[]> {
  if (typeof db.pool.connect !== 'function') return (await db.pool.query<R>(statement)).rows
  return inClientTransaction(
    db,
    'BEGIN; SET LOCAL plan_cache_mode = force_generic_plan',
    async (client) => (await client.query<R>(statement)).rows,
  )
}
