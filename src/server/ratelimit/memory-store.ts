/**
 * The in-process rate-limit store, for the single-process embedded mode (no
 * REDIS_URL). Same algorithm and answers as the Redis store: sliding logs per
 * window and expiring slot leases.
 */
import type { LimitDecision, LimitPolicy } from './policy'
import { decide, type LimitStore } from './store'

/**
 * One window's arrival times, oldest first: a ring over a Float64Array.
 * Expiring the oldest is O(1), and a window of a minute at 1,000 req/s
 * (60,000 arrivals) is one flat array the garbage collector never walks,
 * not 60,000 entries that each reference a request's token.
 */
class ArrivalLog {
  private times = new Float64Array(16)
  private head = 0
  length = 0

  oldest(): number | undefined {
    return this.length > 0 ? this.times[this.head] : undefined
  }

  private at(i: number): number {
    return this.times[(this.head + i) & (this.times.length - 1)]!
  }

  push(at: number) {
    if (this.length === this.times.length) this.resize(this.times.length * 2)
    this.times[(this.head + this.length) & (this.times.length - 1)] = at
    this.length++
  }

  /** Drops arrivals at or before `cutoff`. */
  expire(cutoff: number) {
    while (this.length > 0 && this.times[this.head]! <= cutoff) {
      this.head = (this.head + 1) & (this.times.length - 1)
      this.length--
    }
    // Give memory back once a burst has left the window.
    if (this.times.length > 1024 && this.length * 4 < this.times.length) this.resize(this.times.length / 2)
  }

  /**
   * Removes one arrival at `at` (a refund: rare, and the arrival is among
   * the newest). Arrivals at the same time are interchangeable for every
   * later count, so any of them will do.
   */
  remove(at: number) {
    for (let i = this.length - 1; i >= 0; i--) {
      if (this.at(i) !== at) continue
      const mask = this.times.length - 1
      for (let j = i; j < this.length - 1; j++) {
        this.times[(this.head + j) & mask] = this.times[(this.head + j + 1) & mask]!
      }
      this.length--
      return
    }
  }

  private resize(capacity: number) {
    const next = new Float64Array(capacity)
    for (let i = 0; i < this.length; i++) next[i] = this.at(i)
    this.times = next
    this.head = 0
  }
}

interface Subject {
  windows: ArrivalLog[]
  /** token → lease expiry (ms). */
  slots: Map<string, number>
  /** token → arrival time, while its request runs: what a refund takes back. */
  arrivals: Map<string, number>
  /** The longest window: an arrival older than this is in none of them. */
  spanMs: number
  /** Latest time anything here still matters; the sweeper drops the subject after it. */
  until: number
}

/** release() has nothing to wait for here: one settled promise serves every call. */
const RELEASED = Promise.resolve()

export class MemoryLimitStore implements LimitStore {
  private readonly subjects = new Map<string, Subject>()
  private readonly sweeper: NodeJS.Timeout

  constructor(private readonly now: () => number = Date.now) {
    this.sweeper = setInterval(() => this.sweep(), 30_000)
    this.sweeper.unref()
  }

  private get(policy: LimitPolicy, subject: string): Subject {
    const key = `${policy.id}:${subject}`
    let s = this.subjects.get(key)
    if (!s) {
      s = {
        windows: policy.windows.map(() => new ArrivalLog()),
        slots: new Map(),
        arrivals: new Map(),
        spanMs: Math.max(0, ...policy.windows.map((w) => w.windowMs)),
        until: 0,
      }
      this.subjects.set(key, s)
    }
    return s
  }

  async acquire(
    policy: LimitPolicy,
    subject: string,
    token: string,
    leaseMs: number,
  ): Promise<LimitDecision> {
    const now = this.now()
    const s = this.get(policy, subject)
    let denied = 0
    const counts = policy.windows.map((w, i) => {
      const log = s.windows[i]!
      log.expire(now - w.windowMs)
      const count = log.length
      const resetMs = count > 0 ? log.oldest()! + w.windowMs - now : 0
      if (count >= w.limit && denied === 0) denied = i + 1
      return { count, resetMs }
    })
    let inUse: number | undefined
    if (policy.concurrent) {
      for (const [t, expiry] of s.slots) if (expiry <= now) s.slots.delete(t)
      inUse = s.slots.size
      if (inUse >= policy.concurrent && denied === 0) denied = policy.windows.length + 1
    }
    if (denied === 0) {
      policy.windows.forEach((w, i) => {
        s.windows[i]!.push(now)
        s.until = Math.max(s.until, now + w.windowMs)
      })
      s.arrivals.set(token, now)
      if (policy.concurrent) {
        s.slots.set(token, now + leaseMs)
        s.until = Math.max(s.until, now + leaseMs)
      }
    }
    return decide(policy, counts, inUse, denied)
  }

  async refund(policy: LimitPolicy, subject: string, token: string): Promise<void> {
    const s = this.get(policy, subject)
    const at = s.arrivals.get(token)
    if (at !== undefined) for (const log of s.windows) log.remove(at)
    s.arrivals.delete(token)
    s.slots.delete(token)
  }

  async renew(policy: LimitPolicy, subject: string, token: string, leaseMs: number): Promise<boolean> {
    const s = this.subjects.get(`${policy.id}:${subject}`)
    const now = this.now()
    const expiry = s?.slots.get(token)
    if (!s || expiry === undefined || expiry <= now) return false
    s.slots.set(token, now + leaseMs)
    s.until = Math.max(s.until, now + leaseMs)
    return true
  }

  release(policy: LimitPolicy, subject: string, token: string): Promise<void> {
    const s = this.subjects.get(`${policy.id}:${subject}`)
    s?.slots.delete(token)
    s?.arrivals.delete(token)
    return RELEASED
  }

  private sweep() {
    const now = this.now()
    for (const [key, s] of this.subjects) {
      if (s.until <= now) this.subjects.delete(key)
      // A request that never released (none should): its arrival has left every window, nothing to refund.
      else for (const [token, at] of s.arrivals) if (at <= now - s.spanMs) s.arrivals.delete(token)
    }
  }

  /** In the process: always answers. */
  async ping(): Promise<void> {}

  async close(): Promise<void> {
    clearInterval(this.sweeper)
    this.subjects.clear()
  }
}
