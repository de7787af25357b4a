/**
 * The composition root of the web process: the one set of long-lived
 * services that the REST layer (src/server/rest) and the Next.js side
 * (pages, /api routes, the portal's tRPC procedures) share — one pg pool,
 * one rate limiter, one credential cache. A key the portal revokes or
 * rotates is cleared from the very cache /v1 reads.
 *
 * Next.js runs in the same process (src/server/http/server.ts) but loads
 * its own copy of our modules, so the instance is handed over on
 * globalThis (shareWithNext); src/server/services.ts reads it there.
 */
import type { Config } from '@/config/env'
import { createLogger, type Logger } from '@/config/logger'
import { type Database, openDatabase } from '@/db/database'
import { type AccessControl, createAccessControl } from '@/server/auth/access'
import { WebMetrics } from '@/server/metrics'

export interface Services {
  config: Config
  db: Database
  logger: Logger
  /** Credentials (and their cache), rate limits, key-use tracking and CORS origins. */
  access: AccessControl
  /** Prometheus metrics; undefined when METRICS_PORT is unset (nothing is recorded). */
  metrics: WebMetrics | undefined
}

export interface WebServicesOptions {
  /** An open database (tests, benchmarks); default: a pool on config.DATABASE_URL. */
  db?: Database
  logger?: Logger
  /** Record metrics (default: when METRICS_PORT is set); the benchmark compares both. */
  metrics?: boolean
}

export function createWebServices(config: Config, options: WebServicesOptions = {}): Services {
  const logger = options.logger ?? createLogger({ level: config.LOG_LEVEL, name: 'web' })
  const db = options.db ?? openWebDatabase(config)
  const metrics = (options.metrics ?? config.METRICS_PORT !== undefined) ? new WebMetrics(db.pool) : undefined
  return { config, db, logger, metrics, access: createAccessControl({ config, db, logger, metrics }) }
}

function openWebDatabase(config: Config): Database {
  if (!config.DATABASE_URL) throw new Error('DATABASE_URL is not set: start the service with `npm start`')
  return openDatabase(config.DATABASE_URL, {
    statementTimeoutMs: config.DB_STATEMENT_TIMEOUT_MS,
    applicationName: 'nft-web',
  })
}

/** Stops what createWebServices started (the database only when it opened it). */
export async function closeWebServices(services: Services, options: { closeDb?: boolean } = {}) {
  await services.access.close()
  if (options.closeDb ?? true) await services.db.close()
}

const shared = globalThis as unknown as { nftWebServices?: Services }

/** Makes these services the ones Next.js code uses (src/server/services.ts). */
export function shareWithNext(services: Services): void {
  shared.nftWebServices = services
}

/** The services shared with Next.js, once the web server has built them. */
export function sharedServices(): Services | undefined {
  return shared.nftWebServices
}
