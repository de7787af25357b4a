/**
 * A per-process fixed-window counter: at most `limit` events per key in each
 * window of `windowMs`. Small and local on purpose — it bounds writes that
 * anyone can cause (a nonce row, a refused-sign-in audit row) where an exact
 * global count is not needed; the numbers and why are in docs/portal.md.
 */
export class FixedWindowCounter {
  private readonly windows = new Map<string, { start: number; count: number }>()
  private lastSweep = Number.NEGATIVE_INFINITY

  constructor(
    readonly limit: number,
    readonly windowMs: number,
    /** Past this many keys, windows that have ended are dropped (once a window at most). */
    private readonly maxTracked = 10_000,
  ) {}

  /** Counts one event for `key`; `retryAfterS` says when the next is allowed if this one is not. */
  take(key: string, now = Date.now()): { allowed: boolean; retryAfterS: number } {
    // A sweep walks every key: once a window at most, or a flood of new keys within one
    // window (none of them ended) would walk them all again on every event.
    if (this.windows.size > this.maxTracked && now - this.lastSweep >= this.windowMs) this.sweep(now)
    let w = this.windows.get(key)
    if (!w || now - w.start >= this.windowMs) {
      w = { start: now, count: 0 }
      this.windows.set(key, w)
    }
    if (w.count >= this.limit) {
      return { allowed: false, retryAfterS: Math.max(1, Math.ceil((w.start + this.windowMs - now) / 1000)) }
    }
    w.count += 1
    return { allowed: true, retryAfterS: 0 }
  }

  /** Drops the windows that have ended. */
  sweep(now: number): void {
    this.lastSweep = now
    for (const [k, w] of this.windows) if (now - w.start >= this.windowMs) this.windows.delete(k)
  }

  /** Keys tracked now. */
  get size(): number {
    return this.windows.size
  }
}
