/**
 * One host's side of the metadata scheduler (./host-scheduler.ts): what waits
 * for it by collection, what it has in flight, its budget, and its circuit
 * breakers — its own and its collections' (docs/metadata.md, "Fair scheduling").
 */
import type { CircuitBreaker, FailureOutcome } from './circuit-breaker'

export interface HostBudget {
  /** Requests in flight to the host at once. */
  concurrency: number
  /** Fetches waiting for the host; more are refused as `busy` (the caller defers them). */
  maxQueued: number
  /** Waiting fetches of one collection on this host; more are refused as `busy`. */
  maxQueuedPerGroup: number
}

export interface Waiter {
  /** Told the collection's breaker on the host, when it has one (its requests in flight are counted). */
  start: (breaker: CircuitBreaker | undefined) => void
  reject: (err: unknown) => void
}

export class Lane {
  readonly groups = new Map<string, Waiter[]>()
  groupCursor = 0
  queued = 0
  inFlight = 0
  readonly breaker: CircuitBreaker
  /** The breakers of collections that failed on this host since their last success. */
  readonly groupBreakers = new Map<string, CircuitBreaker>()
  /** Successful fetches from the host, counted (which collection breakers opened since the last). */
  successes = 0
  /** The latest host fault, whichever collection met it. */
  lastOutcome: FailureOutcome = 'timeout'
  /** Moving average of a fetch's duration, for how long a queue takes to drain. */
  avgMs = 200
  lastUsed = 0
  /** The latest turn handed to a refused finishing fetch (reserveTurn). */
  private reservedUntil = 0
  constructor(
    readonly key: string,
    readonly budget: HostBudget,
    readonly label: string,
    readonly newBreaker: () => CircuitBreaker,
  ) {
    this.breaker = newBreaker()
  }

  /** Collections whose breakers opened since the host's last success. */
  failingCollections(): number {
    let n = 0
    for (const b of this.groupBreakers.values())
      if (b.state !== 'closed' && b.openedAfter === this.successes) n++
    return n
  }

  /**
   * How many fetches may wait for a host: about two seconds of its work at its
   * current pace, within its budget. A slow host gets few, so its tokens stay
   * in the database instead of filling memory.
   */
  queueCap(): number {
    if (!Number.isFinite(this.budget.maxQueued)) return Number.POSITIVE_INFINITY
    const perTwoSeconds = (2_000 / Math.max(this.avgMs, 1)) * this.budget.concurrency
    return Math.max(this.budget.concurrency * 2, Math.min(this.budget.maxQueued, Math.round(perTwoSeconds)))
  }

  /** How long what the host has queued takes to drain at its pace. */
  drainMs(): number {
    const ms = ((this.queued + this.inFlight) * this.avgMs) / this.budget.concurrency
    return Math.min(Math.max(ms, 250), 10 * 60_000)
  }

  /**
   * When a refused fetch of a token already in memory is worth trying again:
   * each refusal takes the next turn after what the host has queued and the
   * turns handed out before, at the host's pace, so the refused tokens come
   * back about as fast as the host serves them (within a day).
   */
  reserveTurn(now: number): number {
    const from = Math.max(this.reservedUntil, now + this.drainMs())
    this.reservedUntil = Math.min(from + this.avgMs / this.budget.concurrency, now + 24 * 3_600_000)
    return this.reservedUntil
  }

  /** May the host start one more request (its breaker and budget)? */
  canStart(): boolean {
    if (this.breaker.state === 'open') return false
    if (this.breaker.state === 'half_open') return this.inFlight === 0
    return this.inFlight < this.budget.concurrency
  }

  /** The host's next collection in turn that may start a request (a half-open one probes once at a time). */
  nextGroup(): string | undefined {
    const groups = [...this.groups.keys()]
    for (let i = 0; i < groups.length; i++) {
      const group = groups[(this.groupCursor + i) % groups.length]!
      if (this.groupBreakers.get(group)?.admits() ?? true) {
        this.groupCursor += i + 1
        return group
      }
    }
    return undefined
  }

  /** The collection's breaker on this host, made on its first fault. */
  groupBreaker(group: string): CircuitBreaker {
    let breaker = this.groupBreakers.get(group)
    if (!breaker) {
      // Bounded: a host with more failing collections than this forgets the closed ones.
      if (this.groupBreakers.size >= 10_000)
        for (const [g, b] of this.groupBreakers) if (b.state === 'closed') this.groupBreakers.delete(g)
      breaker = this.newBreaker()
      this.groupBreakers.set(group, breaker)
    }
    return breaker
  }
}
