/**
 * The in-process rate-limit store, for the single-process embedded mode (no
 * REDIS_URL). Same algorithm and answers as the Redis store: sliding logs per
 * window and expiring slot leases.
 */
import type { LimitDecision, LimitPolicy } from './policy'
import { decide, type LimitStore } from './store'

interface Subject {
  /** Arrival times (ms) per window, oldest first, with the token of each. */
  windows: { at: number; token: string }[][]
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
      s = { windows: policy.windows.map(() => []), slots: new Map(), until: 0 }
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
      while (log.length > 0 && log[0]!.at <= now - w.windowMs) log.shift()
      const count = log.length
      const resetMs = count > 0 ? log[0]!.at + w.windowMs - now : 0
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
        s.windows[i]!.push({ at: now, token })
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
    for (const log of s.windows) {
      const i = log.findIndex((e) => e.token === token)
      if (i >= 0) log.splice(i, 1)
    }
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
