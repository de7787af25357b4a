/**
 * "Last used" times of API keys without a database write per request: a key's
 * use is recorded at most once per interval (a minute) and the writes of all
 * keys go out together in one statement, shortly after.
 */
import type { Logger } from '@/config/logger'
import type { Database } from '@/db/database'
import { recordKeysLastUsed } from '@/db/queries/api-keys'

export class LastUsedTracker {
  private readonly pending = new Map<bigint, Date>()
  private readonly recorded = new Map<bigint, number>()
  private timer: NodeJS.Timeout | undefined
  private flushing: Promise<void> = Promise.resolve()

  constructor(
    private readonly db: Database,
    private readonly logger?: Logger,
    private readonly options: { intervalMs: number; flushDelayMs: number } = {
      intervalMs: 60_000,
      flushDelayMs: 1000,
    },
  ) {}

  touch(keyId: bigint, now = Date.now()): void {
    const last = this.recorded.get(keyId)
    if (last !== undefined && now - last < this.options.intervalMs) return
    this.recorded.set(keyId, now)
    this.pending.set(keyId, new Date(now))
    this.timer ??= setTimeout(() => {
      this.timer = undefined
      void this.flush()
    }, this.options.flushDelayMs)
    this.timer.unref()
  }

  /** Writes what is pending (also called on shutdown). */
  flush(): Promise<void> {
    if (this.pending.size === 0) return this.flushing
    const ids = [...this.pending.keys()].map(String)
    const times = [...this.pending.values()].map((d) => d.toISOString())
    this.pending.clear()
    const cutoff = Date.now() - this.options.intervalMs
    for (const [id, at] of this.recorded) if (at < cutoff) this.recorded.delete(id)
    this.flushing = this.flushing.then(() =>
      recordKeysLastUsed(this.db, { ids, times }).then(
        () => {},
        (err) => this.logger?.warn({ err: { message: (err as Error).message } }, 'could not record key use'),
      ),
    )
    return this.flushing
  }

  async close(): Promise<void> {
    if (this.timer) clearTimeout(this.timer)
    this.timer = undefined
    await this.flush()
  }
}
