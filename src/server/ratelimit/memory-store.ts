/**
 * The in-process rate-limit store, for the single-process embedded mode (no
 * REDIS_URL). Same algorithm and answers as the Redis store: sliding logs per
 * window and expiring slot leases.
 */
import type { LimitDecision, LimitPolicy } from './policy'
import { decide, type LimitStore } from './store'

/**
 * One window's arrivals, oldest first. A queue with a moving head: expiring
 * the oldest entries is O(1), where Array#shift copies the whole log once it
 * is large (a window of a minute at 1,000 req/s holds 60,000 entries).
 */
class SlidingLog {
  private at: number[] = []
  private tokens: string[] = []
  private head = 0

  get length(): number {
    return this.at.length - this.head
  }

  oldest(): number | undefined {
    return this.at[this.head]
  }

  push(at: number, token: string) {
    this.at.push(at)
    this.tokens.push(token)
  }

  /** Drops entries at or before `cutoff`. */
  expire(cutoff: number) {
    while (this.head < this.at.length && this.at[this.head]! <= cutoff) this.head++
    // Give the dropped prefix back once it is most of the arrays.
    if (this.head > 1024 && this.head * 2 > this.at.length) {
      this.at = this.at.slice(this.head)
      this.tokens = this.tokens.slice(this.head)
      this.head = 0
    }
  }

  /** Removes the entry of `token`, if any (a refund: rare). */
  remove(token: string) {
    const i = this.tokens.indexOf(token, this.head)
    if (i < 0) return
    this.at.splice(i, 1)
    this.tokens.splice(i, 1)
  }
}

interface Subject {
  windows: SlidingLog[]
  /** token → lease expiry (ms). */
  slots: Map<string, number>
  /** Latest time anything here still matters; the sweeper drops the subject after it. */
  until: number
}

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
      s = { windows: policy.windows.map(() => new SlidingLog()), slots: new Map(), until: 0 }
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
        s.windows[i]!.push(now, token)
        s.until = Math.max(s.until, now + w.windowMs)
      })
      if (policy.concurrent) {
        s.slots.set(token, now + leaseMs)
        s.until = Math.max(s.until, now + leaseMs)
      }
    }
    return decide(policy, counts, inUse, denied)
  }

  async refund(policy: LimitPolicy, subject: string, token: string): Promise<void> {
    const s = this.get(policy, subject)
    for (const log of s.windows) log.remove(token)
    s.slots.delete(token)
  }

  async release(policy: LimitPolicy, subject: string, token: string): Promise<void> {
    this.subjects.get(`${policy.id}:${subject}`)?.slots.delete(token)
  }

  private sweep() {
    const now = this.now()
    for (const [key, s] of this.subjects) if (s.until <= now) this.subjects.delete(key)
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper)
    this.subjects.clear()
  }
}
