/**
 * Readiness of the web process (GET /readyz; docs/operations.md, "Health and
 * readiness"): it can serve /v1 when the database answers, the rate-limiter
 * store answers (requests fail closed without it), and every migration in
 * prisma/migrations is applied. /healthz, by contrast, only says the process
 * answers. Each check is bounded in time, so a hung dependency makes /readyz
 * answer 503 promptly rather than hang the probe. The endpoint is public and
 * unlimited, so an answer is reused for READINESS_CACHE_MS: probes arriving
 * meanwhile (or while a check runs) cost no database round trip.
 */
import { migrationNames, missingMigrations } from '@/db/migrate'
import { pingDatabase } from '@/db/queries/health'
import type { Services } from '@/server/services/web-services'

export type CheckName = 'database' | 'rate_limiter' | 'migrations'

export interface ReadinessReport {
  ready: boolean
  /** "ok", or a short reason (never an error message: it may carry a host or a URL). */
  checks: Record<CheckName, string>
}

export interface ReadinessOptions {
  /** Default: prisma/migrations. */
  migrationsDir?: string
  /** Upper bound of each check. */
  timeoutMs?: number
  /** How long an answer is reused; default READINESS_CACHE_MS. */
  cacheMs?: number
}

/** How long one readiness answer serves every probe (docs/operations.md, "Health and readiness"). */
export const READINESS_CACHE_MS = 1000

export type Readiness = () => Promise<ReadinessReport>

export function createReadiness(
  services: Pick<Services, 'db' | 'access'>,
  options: ReadinessOptions = {},
): Readiness {
  // The files do not change while the process runs: read once.
  const expected = migrationNames(options.migrationsDir)
  const timeoutMs = options.timeoutMs ?? 2000
  const pool = services.db.pool
  const cacheMs = options.cacheMs ?? READINESS_CACHE_MS

  // A check gives up after timeoutMs, but its query waits on until the pool's own bound
  // (twice DB_STATEMENT_TIMEOUT_MS). While one waits, later probes wait on it too rather
  // than send another: a hung database holds one connection for readiness, not one per round.
  let pinging: Promise<unknown> | undefined
  const pingOnce = () => {
    pinging ??= pingDatabase(pool).finally(() => {
      pinging = undefined
    })
    return pinging
  }

  const runChecks = async (): Promise<ReadinessReport> => {
    const [database, rateLimiter] = await Promise.all([
      check(pingOnce, timeoutMs, 'unreachable'),
      check(() => services.access.limiter.store.ping(), timeoutMs, 'unreachable'),
    ])
    let migrations = 'unknown: the database is unreachable'
    if (database === 'ok') {
      const missing = await within(missingMigrations(pool, expected), timeoutMs).catch(() => undefined)
      migrations =
        missing === undefined
          ? 'unknown: the migration table could not be read'
          : missing.length === 0
            ? 'ok'
            : `missing: ${missing.join(', ')}`
    }
    const checks = { database, rate_limiter: rateLimiter, migrations }
    return { ready: Object.values(checks).every((c) => c === 'ok'), checks }
  }

  // The answer being computed or last computed, and when it was asked for.
  let cached: { report: Promise<ReadinessReport>; at: number } | undefined
  return () => {
    const now = performance.now()
    if (!cached || now - cached.at >= cacheMs) cached = { report: runChecks(), at: now }
    return cached.report
  }
}

async function check(run: () => Promise<unknown>, timeoutMs: number, failure: string): Promise<string> {
  try {
    await within(run(), timeoutMs)
    return 'ok'
  } catch (err) {
    return err instanceof TimedOut ? `no answer within ${timeoutMs} ms` : failure
  }
}

class TimedOut extends Error {}

function within<T>(promise: Promise<T>, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimedOut()), timeoutMs)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}
