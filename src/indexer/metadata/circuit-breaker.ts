/**
 * One circuit breaker of the metadata scheduler (./host-scheduler.ts): a
 * host's, or one collection's on a host (docs/metadata.md, "Fair scheduling").
 * Closed, it lets everything through; open, nothing until its period ends;
 * then half-open, one probe: success closes it, failure reopens it for twice
 * as long.
 */
import type { MetadataOutcome } from './outcome'

export type BreakerState = 'closed' | 'open' | 'half_open'
export type FailureOutcome = Exclude<MetadataOutcome, 'ok' | 'pending'>

export class CircuitBreaker {
  state: BreakerState = 'closed'
  /** Consecutive faults. */
  failures = 0
  openUntil = 0
  cooldownMs: number
  lastOutcome: FailureOutcome = 'timeout'
  /** Requests in flight under this breaker (a half-open one lets one through). */
  inFlight = 0
  /** A count of the host's successes, taken when this breaker last opened from closed. */
  openedAfter = -1

  constructor(
    private readonly baseCooldownMs: number,
    private readonly maxCooldownMs: number,
  ) {
    this.cooldownMs = baseCooldownMs
  }

  /** Refusing requests now? An open breaker whose period is over turns half-open instead. */
  refuses(now: number): boolean {
    if (this.state !== 'open') return false
    if (this.openUntil > now) return true
    this.state = 'half_open'
    return false
  }

  /** May one more request start under it? */
  admits(): boolean {
    return this.state === 'closed' || (this.state === 'half_open' && this.inFlight === 0)
  }

  /** A success: closes it. True when it was not closed (a recovery). */
  succeeded(): boolean {
    this.failures = 0
    if (this.state === 'closed') return false
    this.state = 'closed'
    this.cooldownMs = this.baseCooldownMs
    return true
  }

  /** Opens for `ms` (an open period is never shortened); `grow` doubles the next cooldown. */
  open(now: number, ms: number, grow: boolean): void {
    this.state = 'open'
    this.openUntil = Math.max(this.openUntil, now + ms)
    if (grow) this.cooldownMs = Math.min(this.cooldownMs * 2, this.maxCooldownMs)
  }

  /** As the status shows it: open, or half-open once the open period is over. */
  shownState(now: number): 'open' | 'half_open' {
    return this.state === 'open' && this.openUntil > now ? 'open' : 'half_open'
  }
}
