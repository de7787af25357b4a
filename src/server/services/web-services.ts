/**
 * The composition root of the web process: the one set of long-lived
 * services that the REST layer (src/server/rest) and the Next.js side
 * (pages, /api routes, the portal's tRPC procedures) share — the API pool
 * and the credential pool, the read replicas, one rate limiter, one
 * credential cache, the metrics. A key the portal revokes or rotates is
 * cleared from the very cache /v1 reads.
 *
 * Next.js runs in the same process (src/server/web-server.ts) but loads
 * its own copy of our modules, so the instance is handed over on
 * globalThis (shareWithNext); src/server/services/next-services.ts reads it there.
 */
import type { Config } from '@/config/env'
import { createLogger, type Logger } from '@/config/logger'
import { type Database, openDatabase } from '@/db/database'
import { openReadReplicas, type ReadReplicas } from '@/db/read-replicas'
import { type AccessControl, createAccessControl } from '@/server/credentials/access'
import { type WebhookSettings, webhookSettings } from '@/server/credentials/webhook-secrets'
import { WebMetrics } from '@/server/metrics/web-metrics'
import { PoolShares } from '@/server/ratelimit/pool-shares'

export interface Services {
  config: Config
  /** The API pool: procedures, the portal, everything but credential checks. */
  db: Database
  /**
   * A small pool of its own for credential and CORS-origin lookups, so that
   * admission never queues behind API queries (docs/auth.md, "Admission before waiting").
   */
  credentialDb: Database
  /** The API pool's connections one subject (key, demo token, client address) may use at once. */
  poolShares: PoolShares
  logger: Logger
  /** Credentials (and their cache), rate limits, key-use tracking and CORS origins. */
  access: AccessControl
  /** Where /v1 reads run: a streaming replica that qualifies, else `db` (docs/operations.md, "Read replicas"). */
  reads: ReadReplicas
  /** Prometheus metrics; undefined when METRICS_PORT is unset (nothing is recorded). */
  metrics: WebMetrics | undefined
  /** Webhook secrets' sealing key and allow-list; undefined without AUTH_SECRET (no webhooks). */
  webhooks: WebhookSettings | undefined
}

export interface WebServicesOptions {
  /** An open database (tests, benchmarks); default: a pool of DB_POOL_SIZE on config.DATABASE_URL. */
  db?: Database
  /** The credential pool (tests); default: its own pool on config.DATABASE_URL, or `db` when that is given. */
  credentialDb?: Database
  logger?: Logger
  /** Record metrics (default: when METRICS_PORT is set); the benchmark compares both. */
  metrics?: boolean
}

/** Connections of the credential pool: lookups are primary-key reads, cached up to CREDENTIAL_CACHE_MS. */
const CREDENTIAL_POOL_SIZE = 2

export function createWebServices(config: Config, options: WebServicesOptions = {}): Services {
  const logger = options.logger ?? createLogger({ level: config.LOG_LEVEL, name: 'web' })
  const db = options.db ?? openWebDatabase(config, config.DB_POOL_SIZE, 'nft-web')
  const credentialDb =
    options.credentialDb ?? options.db ?? openWebDatabase(config, CREDENTIAL_POOL_SIZE, 'nft-web-credentials')
  // Half the pool: one subject cannot leave the others without connections.
  const poolShares = new PoolShares(Math.max(1, Math.floor(db.pool.options.max / 2)))
  const metrics = (options.metrics ?? config.METRICS_PORT !== undefined) ? new WebMetrics(db.pool) : undefined
  return {
    config,
    db,
    credentialDb,
    poolShares,
    logger,
    metrics,
    access: createAccessControl({ config, db, credentialDb, logger, metrics }),
    // The read replicas (DATABASE_READ_URL) and their probe.
    reads: openReadReplicas(config, db, logger),
    webhooks: config.AUTH_SECRET ? webhookSettings(config) : undefined,
  }
}

function openWebDatabase(config: Config, max: number, applicationName: string): Database {
  if (!config.DATABASE_URL) throw new Error('DATABASE_URL is not set: start the service with `npm start`')
  return openDatabase(config.DATABASE_URL, {
    statementTimeoutMs: config.DB_STATEMENT_TIMEOUT_MS,
    // A server that takes the connection and never answers must not hold a request for as
    // long as the operating system waits: twice a statement's time, then 503 (retryable).
    // pg-pool counts a wait for a free pooled connection against the same bound.
    connectTimeoutMs: 2 * config.DB_STATEMENT_TIMEOUT_MS,
    max,
    applicationName,
  })
}

/** Stops what createWebServices started (the databases only when it opened them). */
export async function closeWebServices(services: Services, options: { closeDb?: boolean } = {}) {
  await services.access.close()
  await services.reads.close()
  if (!(options.closeDb ?? true)) return
  if (services.credentialDb !== services.db) await services.credentialDb.close()
  await services.db.close()
}

const shared = globalThis as unknown as { nftWebServices?: Services }

/** Makes these services the ones Next.js code uses (src/server/services/next-services.ts). */
export function shareWithNext(services: Services): void {
  shared.nftWebServices = services
}

/** The services shared with Next.js, once the web server has built them. */
export function sharedServices(): Services | undefined {
  return shared.nftWebServices
}
