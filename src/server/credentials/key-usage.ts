/**
 * Requests per API key and hour, by status class, without a database write
 * per request (docs/portal.md, "Usage per key"): a request adds one to a
 * counter in this process's memory; every flush (10 s, and on shutdown) adds
 * all counters to api_key_usage_hourly in one statement and starts over.
 * Counts are additive, so any number of web processes can flush into the same
 * rows. Rows older than 7 days are pruned, at most once an hour.
 */
import type { Logger } from '@/config/logger'
import type { Database } from '@/db/database'
import { findOwnKeyLastUsed } from '@/db/queries/api-keys'
import { addKeyUsage, deleteKeyUsageBefore, findKeyUsageHours } from '@/db/queries/key-usage'
import { ApiError } from '@/server/errors/api-error'

export const USAGE_RETENTION_HOURS = 7 * 24
const HOUR_MS = 3600_000

/**
 * The classes a response counts in, in the order of the table's columns. A 429 counts
 * by the limit that refused it: the key's own (rate_limited) or the client IP's
 * (rate_limited_ip, for a request that presented the key: docs/portal.md, "Usage per key").
 */
export const STATUS_CLASSES = [
  'ok',
  'client_error',
  'rate_limited',
  'server_error',
  'rate_limited_ip',
] as const
export type StatusClass = (typeof STATUS_CLASSES)[number]

/** Which limit refused a 429: the credential's own, or the client IP's. */
export type RefusingLimit = 'credential' | 'ip'

/** 2xx and 3xx (a 304 is an answered request) → ok; 429 → by its limit; other 4xx → client_error; 5xx. */
export function statusClass(status: number, refusedBy: RefusingLimit = 'credential'): StatusClass {
  if (status === 429) return refusedBy === 'ip' ? 'rate_limited_ip' : 'rate_limited'
  if (status >= 500) return 'server_error'
  if (status >= 400) return 'client_error'
  return 'ok'
}

export function hourStart(epochMs: number): number {
  return epochMs - (epochMs % HOUR_MS)
}

interface Bucket {
  keyId: bigint
  hour: number
  counts: number[]
}

export class KeyUsageCounter {
  /** `${keyId}:${hour}` → counts not yet flushed. */
  private pending = new Map<string, Bucket>()
  private timer: NodeJS.Timeout | undefined
  private flushing: Promise<void> = Promise.resolve()
  private lastPrune = 0

  constructor(
    private readonly db: Database,
    private readonly logger?: Logger,
    private readonly options: { flushIntervalMs: number } = { flushIntervalMs: 10_000 },
  ) {}

  /** Counts one answered request of a key; a 429 under the limit that refused it. */
  record(keyId: bigint, status: number, now = Date.now(), refusedBy: RefusingLimit = 'credential'): void {
    const hour = hourStart(now)
    const id = `${keyId}:${hour}`
    let bucket = this.pending.get(id)
    if (!bucket) {
      bucket = { keyId, hour, counts: STATUS_CLASSES.map(() => 0) }
      this.pending.set(id, bucket)
    }
    bucket.counts[STATUS_CLASSES.indexOf(statusClass(status, refusedBy))]! += 1
    if (!this.timer) {
      this.timer = setTimeout(() => {
        this.timer = undefined
        void this.flush()
      }, this.options.flushIntervalMs)
      this.timer.unref()
    }
  }

  /** Adds what was counted to the hourly table (also called on shutdown); failures are logged, counts dropped. */
  flush(now = Date.now()): Promise<void> {
    const buckets = [...this.pending.values()]
    this.pending = new Map()
    const prune = now - this.lastPrune >= HOUR_MS
    if (buckets.length === 0 && !prune) return this.flushing
    if (prune) this.lastPrune = now
    this.flushing = this.flushing.then(() => this.write(buckets, prune ? now : undefined))
    return this.flushing
  }

  private async write(buckets: Bucket[], pruneAt: number | undefined): Promise<void> {
    try {
      if (buckets.length > 0) {
        const count = (b: Bucket, c: StatusClass) => b.counts[STATUS_CLASSES.indexOf(c)]!
        await addKeyUsage(
          this.db,
          buckets.map((b) => ({
            keyId: b.keyId,
            hour: new Date(b.hour),
            ok: count(b, 'ok'),
            clientError: count(b, 'client_error'),
            rateLimited: count(b, 'rate_limited'),
            serverError: count(b, 'server_error'),
            ipRateLimited: count(b, 'rate_limited_ip'),
          })),
        )
      }
      if (pruneAt !== undefined) {
        await deleteKeyUsageBefore(
          this.db,
          new Date(hourStart(pruneAt) - (USAGE_RETENTION_HOURS - 1) * HOUR_MS),
        )
      }
    } catch (err) {
      this.logger?.warn({ err: { message: (err as Error).message } }, 'could not record key usage')
    }
  }

  async close(): Promise<void> {
    if (this.timer) clearTimeout(this.timer)
    this.timer = undefined
    await this.flush()
  }
}

export interface UsageHour {
  /** Start of the hour, ISO 8601. */
  hour: string
  ok: number
  client_error: number
  /** 429s from the key's own limit. */
  rate_limited: number
  server_error: number
  /** 429s from the client IP's limit, for requests that presented the key. */
  rate_limited_ip: number
}

export interface KeyUsageView {
  key_id: string
  last_used_at: string | null
  /** The last 168 hours, oldest first, the current hour last; hours without requests are zeros. */
  hours: UsageHour[]
  totals: Omit<UsageHour, 'hour'>
}

/** A key's usage over the last 7 days; someone else's key is "not found", like in api-keys.ts. */
export async function readKeyUsage(
  db: Database,
  userId: bigint,
  keyId: bigint,
  now = Date.now(),
): Promise<KeyUsageView> {
  const key = await findOwnKeyLastUsed(db, userId, keyId)
  if (!key) throw new ApiError('NOT_FOUND', 'No such key.')
  const last = hourStart(now)
  const first = last - (USAGE_RETENTION_HOURS - 1) * HOUR_MS
  const rows = await findKeyUsageHours(db, keyId, new Date(first))
  const byHour = new Map(rows.map((r) => [r.hour.getTime(), r]))
  const hours: UsageHour[] = []
  const totals = { ok: 0, client_error: 0, rate_limited: 0, server_error: 0, rate_limited_ip: 0 }
  for (let t = first; t <= last; t += HOUR_MS) {
    const r = byHour.get(t)
    const hour = {
      hour: new Date(t).toISOString(),
      ok: r?.okCount ?? 0,
      client_error: r?.clientErrorCount ?? 0,
      rate_limited: r?.rateLimitedCount ?? 0,
      server_error: r?.serverErrorCount ?? 0,
      rate_limited_ip: r?.ipRateLimitedCount ?? 0,
    }
    for (const c of STATUS_CLASSES) totals[c] += hour[c]
    hours.push(hour)
  }
  return { key_id: keyId.toString(), last_used_at: key.lastUsedAt?.toISOString() ?? null, hours, totals }
}
