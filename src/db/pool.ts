/**
 * The `pg.Pool` bound to one schema, without Prisma: what the indexer
 * process needs (its bundle then does not load Prisma Client at start).
 * A URL may name its schema; see ./connection-url.ts.
 */
import pg from 'pg'
import { BoundedClient } from './bounded-client'
import { renderOptions, schemaFromSettings, searchPathFor, splitSessionSettings } from './connection-url'

export interface PoolOptions {
  /** Schema to work in; overrides the one named by the URL. Default: the URL's, else public. */
  schema?: string
  /**
   * Upper bound of every statement on these connections, on the server; the
   * client gives up on a query at twice this (a server that hangs never
   * answers its own timeout) and ends the connection.
   */
  statementTimeoutMs?: number
  /** Most connections the pool opens. */
  max?: number
  applicationName?: string
  /** Give up opening a connection after this long (default: wait as long as the OS does). */
  connectTimeoutMs?: number
}

/** The schema each pool was bound to, so createPrisma can default to it. */
const poolSchemas = new WeakMap<pg.Pool, string>()

/** The schema a pool of createPool works in. */
export const schemaOfPool = (pool: pg.Pool): string | undefined => poolSchemas.get(pool)

export function createPool(url: string, options: PoolOptions = {}): pg.Pool {
  const { connectionString, settings } = splitSessionSettings(url)
  const schema = options.schema ?? schemaFromSettings(settings) ?? 'public'
  settings.set('search_path', searchPathFor(schema))
  if (options.statementTimeoutMs !== undefined) {
    settings.set('statement_timeout', String(options.statementTimeoutMs))
  }
  // Settings travel in the startup packet, so they hold from the first
  // statement of every connection without an extra round trip.
  const bounded = options.statementTimeoutMs !== undefined && options.statementTimeoutMs > 0
  const pool = new pg.Pool({
    connectionString,
    ...(bounded ? { Client: BoundedClient, query_timeout: 2 * options.statementTimeoutMs! } : {}),
    options: renderOptions(settings),
    max: options.max ?? 10,
    application_name: options.applicationName,
    connectionTimeoutMillis: options.connectTimeoutMs,
  })
  // An idle connection that the server drops (restart, admin shutdown) is
  // reported here; without a listener Node would crash the process. The pool
  // replaces the connection on the next checkout.
  pool.on('error', () => {})
  poolSchemas.set(pool, schema)
  return pool
}
