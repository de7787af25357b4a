/**
 * Database clients: a `pg.Pool` bound to one schema (./pool.ts), Prisma
 * Client on top of it (driver adapter), and the test for "the database is
 * down" that callers turn into 503. A URL may name its schema; see
 * ./connection-url.ts.
 */
import { PrismaPg } from '@prisma/adapter-pg'
import type pg from 'pg'
import { PrismaClient } from './generated/client'
import { schemaOfPool } from './pool'

export { quoteIdentifier, schemaFromUrl, searchPathFor, urlWithSchema } from './connection-url'
export { createPool, type PoolOptions } from './pool'

export function createPrisma(pool: pg.Pool, options: { schema?: string } = {}): PrismaClient {
  const schema = options.schema ?? schemaOfPool(pool) ?? 'public'
  // Prisma qualifies table names with this schema, independent of search_path.
  const adapter = new PrismaPg(pool, { schema })
  return new PrismaClient({ adapter })
}

const unavailableSqlStates = new Set([
  '53300', // too_many_connections
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now (starting up, shutting down, recovery)
])
const unavailableSocketCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
])
/** Prisma's codes for the same conditions (can't reach, timed out, closed, pool timeout, too many connections). */
const unavailablePrismaCodes = new Set(['P1001', 'P1002', 'P1017', 'P2024', 'P2037'])
const unavailableAdapterKinds = new Set([
  'DatabaseNotReachable',
  'ConnectionClosed',
  'TooManyConnections',
  'SocketTimeout',
])
// "Query read timeout": the client's bound on a query (./bounded-client.ts) passed.
const unavailableMessages =
  /Query read timeout|Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Too many connections|Cannot use a pool after calling end/i

/**
 * True when `err` means the database cannot serve right now (refused,
 * dropped, overloaded, shutting down) rather than that the query was wrong.
 * Looks through wrappers: `cause`, Prisma's `meta.driverAdapterError`,
 * AggregateError (pg tries every address of a host).
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  return anyCause(err, (e) => {
    const code = typeof e.code === 'string' ? e.code : undefined
    if (code !== undefined) {
      if (unavailableSqlStates.has(code) || code.startsWith('08')) return true
      if (unavailableSocketCodes.has(code) || unavailablePrismaCodes.has(code)) return true
    }
    if (
      typeof e.originalCode === 'string' &&
      (unavailableSqlStates.has(e.originalCode) || e.originalCode.startsWith('08'))
    ) {
      return true
    }
    if (typeof e.kind === 'string' && unavailableAdapterKinds.has(e.kind)) return true
    return typeof e.message === 'string' && unavailableMessages.test(e.message)
  })
}

/** query_canceled: a statement outlived statement_timeout — from pg itself or through Prisma's wrappers. */
export function isStatementTimeout(err: unknown): boolean {
  return anyCause(err, (e) => e.code === '57014' || e.originalCode === '57014')
}

/**
 * Whether `err` or anything it wraps matches: `cause`, Prisma's
 * `meta.driverAdapterError`, AggregateError (pg tries every address of a host).
 */
function anyCause(err: unknown, match: (e: Record<string, unknown>) => boolean): boolean {
  const seen = new Set<unknown>()
  const pending: unknown[] = [err]
  while (pending.length > 0) {
    const current = pending.pop()
    if (current === null || typeof current !== 'object' || seen.has(current)) continue
    seen.add(current)
    const e = current as Record<string, unknown>
    if (match(e)) return true
    pending.push(e.cause)
    if (e.meta && typeof e.meta === 'object')
      pending.push((e.meta as Record<string, unknown>).driverAdapterError)
    if (Array.isArray(e.errors)) pending.push(...e.errors)
  }
  return false
}
