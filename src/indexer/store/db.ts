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
    await takeWriteLock(client)
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

export const isoTimestamp = (unixSeconds: bigint) => new Date(Number(unixSeconds) * 1000).toISOString()

/** Array elements that PostgreSQL reads unquoted: no quotes, braces, commas, backslashes or spaces. */
const BARE_ELEMENT = /^[0-9A-Za-z_.:+-]+$/

/**
 * A PostgreSQL array literal (`{a,b,NULL}`) for a `$n::type[]` parameter.
 * The bulk statements of the ingest path send tens of thousands of
 * hex strings, decimal ids and timestamps per commit; pg quotes and escapes
 * every element of a JS array, which cost a fifth of the indexer's CPU in a
 * commit. Elements that need no quoting (all of those) are joined as they
 * are; any other is quoted and escaped as PostgreSQL's own output does.
 */
export function pgArray(
  values: ReadonlyArray<string | number | bigint | boolean | null | undefined>,
): string {
  const parts = new Array<string>(values.length)
  for (let i = 0; i < values.length; i++) {
    const v = values[i]
    if (v === null || v === undefined) parts[i] = 'NULL'
    else if (typeof v !== 'string') parts[i] = String(v)
    else if (BARE_ELEMENT.test(v) && !(v.length === 4 && /^null$/i.test(v))) parts[i] = v
    else parts[i] = `"${v.replace(/[\\"]/g, '\\$&')}"`
  }
  return `{${parts.join(',')}}`
}
