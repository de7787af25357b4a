/**
 * The read replicas of the web process (DATABASE_READ_URL): PostgreSQL
 * streaming replicas of DATABASE_URL that serve the /v1 reads, and the rule
 * that decides which of them may (docs/operations.md, "Read replicas").
 *
 * A background probe, once a second, reads the primary's WAL position and
 * each replica's replayed position on connections of its own (never the
 * request pools, so a busy pool cannot make a healthy replica look dead). A
 * replica serves reads while it answered the last probe within the probe
 * timeout, is in recovery (a promoted or misconfigured server is not a
 * replica of this primary) and lags by at most DATABASE_READ_MAX_LAG_S
 * (./replica-lag.ts). Reads go round robin over the replicas that qualify,
 * to the primary when none does. A read that fails to reach its replica
 * takes that replica out until its next successful probe.
 */
import type pg from 'pg'
import type { Config } from '@/config/env'
import type { Logger } from '@/config/logger'
import { createPool, isDatabaseUnavailable } from './client'
import { type Database, openDatabase } from './database'
import { PrimaryWalHistory, parseLsn } from './replica-lag'

export const PROBE_INTERVAL_MS = 1000
/** A probe slower than this counts as unreachable. */
export const PROBE_TIMEOUT_MS = 1000

export type ReplicaReason =
  | 'ok'
  | 'not probed yet'
  | 'unreachable'
  | 'not in recovery'
  | 'lagging'
  | 'primary position unknown'
  | 'read failed'

export interface ReplicaStatus {
  /** 1-based position in DATABASE_READ_URL (never its URL: it may carry a password). */
  replica: number
  usable: boolean
  reason: ReplicaReason
  /** Seconds behind the primary at the last probe; null when unknown. */
  lagSeconds: number | null
}

export interface ReadReplicaOptions {
  /** Upper bound of every read statement (DB_STATEMENT_TIMEOUT_MS). */
  statementTimeoutMs: number
  /** A replica behind by more than this serves no read (DATABASE_READ_MAX_LAG_S). */
  maxLagMs: number
  logger: Logger
  /** Connections of each replica's read pool. */
  max?: number
  probeIntervalMs?: number
}

/** A single connection that a probe may abandon: a probe that hangs replaces it. */
class ProbeConnection {
  private pool: pg.Pool | undefined

  constructor(private readonly url: string) {}

  async query<Row extends pg.QueryResultRow>(sql: string): Promise<Row | undefined> {
    this.pool ??= createPool(this.url, {
      max: 1,
      statementTimeoutMs: PROBE_TIMEOUT_MS,
      connectTimeoutMs: PROBE_TIMEOUT_MS,
      applicationName: 'nft-web-probe',
    })
    const pool = this.pool
    let timer: NodeJS.Timeout | undefined
    try {
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('probe timed out')), PROBE_TIMEOUT_MS)
      })
      const { rows } = await Promise.race([pool.query<Row>(sql), timeout])
      return rows[0]
    } catch (err) {
      // A hung or broken connection is dropped, not waited for: the next probe opens a new one.
      if (this.pool === pool) this.pool = undefined
      pool.end().catch(() => {})
      throw err
    } finally {
      clearTimeout(timer)
    }
  }

  close(): void {
    this.pool?.end().catch(() => {})
    this.pool = undefined
  }
}

interface Replica {
  position: number
  db: Database
  probe: ProbeConnection
  usable: boolean
  reason: ReplicaReason
  lagMs: number | undefined
}

export class ReadReplicas {
  private readonly replicas: Replica[]
  private usable: Replica[] = []
  private turn = 0
  private readonly primaryProbe: ProbeConnection | undefined
  private readonly history: PrimaryWalHistory
  private timer: NodeJS.Timeout | undefined
  private probing: Promise<void> | undefined
  private closed = false

  /**
   * @param primary the database every read falls back to (DATABASE_URL's pool)
   * @param primaryUrl DATABASE_URL, for the probe's own connection
   * @param urls the replicas (DATABASE_READ_URL)
   */
  constructor(
    readonly primary: Database,
    primaryUrl: string | undefined,
    urls: string[],
    private readonly options: ReadReplicaOptions,
  ) {
    this.replicas = urls.map((url, i) => ({
      position: i + 1,
      db: openDatabase(url, {
        statementTimeoutMs: options.statementTimeoutMs,
        max: options.max,
        // A replica that does not answer is left quickly: the read is retried on the primary.
        connectTimeoutMs: PROBE_TIMEOUT_MS,
        applicationName: 'nft-web-read',
      }),
      probe: new ProbeConnection(url),
      usable: false,
      reason: 'not probed yet',
      lagMs: undefined,
    }))
    this.primaryProbe = primaryUrl === undefined ? undefined : new ProbeConnection(primaryUrl)
    // Enough history to tell any lag up to the bound, with a margin of two probes.
    this.history = new PrimaryWalHistory(options.maxLagMs + 2 * this.interval)
    if (this.replicas.length > 0) this.schedule(0)
  }

  private get interval(): number {
    return this.options.probeIntervalMs ?? PROBE_INTERVAL_MS
  }

  /** The database the next read runs on: a qualifying replica (round robin), else the primary. */
  pick(): Database {
    const n = this.usable.length
    if (n === 0) return this.primary
    this.turn = (this.turn + 1) % n
    return this.usable[this.turn]!.db
  }

  /** Whether `db` is one of the replicas (a failed read on it is worth a retry on the primary). */
  isReplica(db: Database): boolean {
    return this.replicas.some((r) => r.db === db)
  }

  /** A read on `db` could not be served: that replica serves nothing until its next successful probe. */
  readFailed(db: Database, err: unknown): void {
    const replica = this.replicas.find((r) => r.db === db)
    if (!replica?.usable) return
    this.setState(replica, 'read failed', replica.lagMs, errorCode(err))
    this.usable = this.replicas.filter((r) => r.usable)
  }

  status(): ReplicaStatus[] {
    return this.replicas.map((r) => ({
      replica: r.position,
      usable: r.usable,
      reason: r.reason,
      lagSeconds: r.lagMs === undefined ? null : r.lagMs / 1000,
    }))
  }

  /** Probes now (a probe already running is joined, not doubled). */
  probe(): Promise<void> {
    this.probing ??= this.probeOnce().finally(() => {
      this.probing = undefined
    })
    return this.probing
  }

  private schedule(delayMs = this.interval): void {
    if (this.closed) return
    this.timer = setTimeout(() => {
      this.probe()
        .catch((err) => this.options.logger.error({ err }, 'read replica probe failed'))
        .finally(() => this.schedule())
    }, delayMs)
    this.timer.unref()
  }

  private async probeOnce(): Promise<void> {
    // The primary first: a replica is then compared with a position read before its own.
    try {
      const row = await this.primaryProbe?.query<{ lsn: string }>(
        'SELECT pg_current_wal_flush_lsn()::text AS lsn',
      )
      if (row) this.history.record(performance.now(), parseLsn(row.lsn))
    } catch {
      // Unreachable primary: replicas are judged by its last known position.
    }
    await Promise.all(this.replicas.map((r) => this.probeReplica(r)))
    if (this.closed) return
    this.usable = this.replicas.filter((r) => r.usable)
  }

  private async probeReplica(replica: Replica): Promise<void> {
    let row: { recovering: boolean; replayed: string | null } | undefined
    try {
      row = await replica.probe.query(
        'SELECT pg_is_in_recovery() AS recovering, pg_last_wal_replay_lsn()::text AS replayed',
      )
    } catch (err) {
      return this.setState(replica, 'unreachable', undefined, errorCode(err))
    }
    if (!row?.recovering) return this.setState(replica, 'not in recovery', undefined)
    // In recovery but nothing replayed yet (still restoring): behind by an unknown amount.
    if (row.replayed === null) return this.setState(replica, 'lagging', undefined)
    const lagMs = this.history.lagMs(parseLsn(row.replayed), performance.now())
    if (lagMs === undefined) return this.setState(replica, 'primary position unknown', undefined)
    this.setState(replica, lagMs > this.options.maxLagMs ? 'lagging' : 'ok', lagMs)
  }

  /** Records a replica's state; a change of usability is logged (one line per change, not per probe). */
  private setState(replica: Replica, reason: ReplicaReason, lagMs: number | undefined, code?: string) {
    const usable = reason === 'ok'
    const changed = usable !== replica.usable || (!usable && reason !== replica.reason)
    replica.usable = usable
    replica.reason = reason
    replica.lagMs = lagMs
    if (!changed || this.closed) return
    const fields = {
      replica: replica.position,
      reason,
      lag_s: lagMs === undefined ? null : Math.round(lagMs / 100) / 10,
      ...(code === undefined ? {} : { code }),
    }
    if (usable) this.options.logger.info(fields, 'read replica serves reads')
    else this.options.logger.warn(fields, 'read replica skipped; its reads go elsewhere')
  }

  async close(): Promise<void> {
    this.closed = true
    clearTimeout(this.timer)
    await this.probing
    this.primaryProbe?.close()
    for (const r of this.replicas) r.probe.close()
    await Promise.all(this.replicas.map((r) => r.db.close().catch(() => {})))
  }
}

/** Opens the replicas the configuration names (none: every read runs on `primary`). */
export function openReadReplicas(
  config: Pick<
    Config,
    | 'DATABASE_URL'
    | 'DATABASE_READ_URL'
    | 'DATABASE_READ_MAX_LAG_S'
    | 'DB_STATEMENT_TIMEOUT_MS'
    | 'DB_POOL_SIZE'
  >,
  primary: Database,
  logger: Logger,
): ReadReplicas {
  const urls = (config.DATABASE_READ_URL ?? '')
    .split(',')
    .map((u) => u.trim())
    .filter(Boolean)
  return new ReadReplicas(primary, config.DATABASE_URL, urls, {
    statementTimeoutMs: config.DB_STATEMENT_TIMEOUT_MS,
    maxLagMs: config.DATABASE_READ_MAX_LAG_S * 1000,
    max: config.DB_POOL_SIZE,
    logger,
  })
}

/**
 * True when a read failed because of the replica, not because of the read:
 * the replica is down or unreachable, or it cancelled the statement because
 * of a conflict with WAL replay (SQLSTATE 40001, or 40P01 for a buffer-pin
 * deadlock), which on a primary would not have happened.
 */
export function isReplicaFailure(err: unknown): boolean {
  if (isDatabaseUnavailable(err)) return true
  for (let e = err, depth = 0; e instanceof Error && depth < 6; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code
    if (code === '40001' || code === '40P01') return true
  }
  return false
}

/**
 * A failure's code for the log: the innermost one (a SQLSTATE or a socket
 * error code under the wrappers), else the innermost message, cut short.
 */
function errorCode(err: unknown): string | undefined {
  let found: string | undefined
  for (let e = err, depth = 0; e instanceof Error && depth < 6; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code
    found = typeof code === 'string' ? code : e.message.slice(0, 80)
  }
  return found
}
