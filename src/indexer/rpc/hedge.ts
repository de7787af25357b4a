/**
 * Hedged requests: a request that has had no answer for far longer than
 * requests of its kind take lately is sent once more, to another endpoint
 * when one can take it, and the first answer wins (docs/indexer.md,
 * "Providers"). A hung request then costs about twice the usual answer time
 * instead of the whole time-out, and a range read of the backfill is not
 * split in halves because one connection stalled.
 *
 * Hedges are rationed: each answered request earns a tenth of one, so at
 * most about one request in ten is sent twice, however slow the provider
 * gets; a provider that slows down as a whole raises the delay instead.
 */

/** No hedge sooner than this: a busy node answers small requests in tens of milliseconds, not hundreds. */
export const HEDGE_MIN_MS = 500
/** Answers remembered per kind of request. */
const WINDOW = 64
/**
 * Below this many answers of a kind, its delay is a third of the time-out: the first answers
 * of a backfill are of its empty first ranges, far quicker than the dense ones after.
 */
const MIN_SAMPLES = 16
/** The ration, counted in answers: each earns one, a hedge costs ten, at most a hundred are saved. */
const ANSWERS_PER_HEDGE = 10
const BUDGET_MAX = 10 * ANSWERS_PER_HEDGE

class LatencyWindow {
  private readonly samples = new Float64Array(WINDOW)
  private next = 0
  count = 0

  add(ms: number): void {
    this.samples[this.next] = ms
    this.next = (this.next + 1) % WINDOW
    if (this.count < WINDOW) this.count++
  }

  /** The 95th percentile of the remembered answers. */
  p95(): number {
    const sorted = this.samples.slice(0, this.count).sort()
    return sorted[Math.min(this.count - 1, Math.floor(0.95 * this.count))]!
  }
}

export class HedgePolicy {
  private readonly latencies = new Map<string, LatencyWindow>()
  private budget = BUDGET_MAX

  constructor(private readonly timeoutMs: number) {}

  /** A request of this kind (method, and whether it went alone) was answered after `ms`. */
  answered(kind: string, ms: number): void {
    let window = this.latencies.get(kind)
    if (!window) {
      window = new LatencyWindow()
      this.latencies.set(kind, window)
    }
    window.add(ms)
    this.budget = Math.min(BUDGET_MAX, this.budget + 1)
  }

  /** How long a request of this kind waits for its answer before it is hedged. */
  delayMs(kind: string): number {
    const window = this.latencies.get(kind)
    const usual =
      window && window.count >= MIN_SAMPLES ? 2 * window.p95() : Math.max(HEDGE_MIN_MS, this.timeoutMs / 3)
    // Well before the time-out, or the hedge could not answer before the first attempt is cut.
    return Math.min(this.timeoutMs / 2, Math.max(HEDGE_MIN_MS, usual))
  }

  /** Takes one hedge from the ration: false while recent hedges have used it up. */
  take(): boolean {
    if (this.budget < ANSWERS_PER_HEDGE) return false
    this.budget -= ANSWERS_PER_HEDGE
    return true
  }
}
