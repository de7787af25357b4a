/**
 * A rate-limit store: atomic check-and-consume over a policy's windows and
 * concurrency slots. A refused request consumes nothing. Concurrency slots
 * are leases with an expiry, so a crashed process never holds one for good.
 */
import { ApiError } from '@/server/errors/api-error'
import type { LimitDecision, LimitPolicy } from './policy'

export interface LimitStore {
  /**
   * Counts one request of `subject` under `policy`, identified by `token`
   * (unique per request), and takes a concurrency slot that expires after
   * `leaseMs` — or, when any window or the slots are exhausted, changes
   * nothing and says so.
   */
  acquire(policy: LimitPolicy, subject: string, token: string, leaseMs: number): Promise<LimitDecision>
  /** Gives back everything `acquire` took for this token (a later check refused the request). */
  refund(policy: LimitPolicy, subject: string, token: string): Promise<void>
  /**
   * Frees the concurrency slot of this token; its counted requests stay
   * counted. Never rejects: when the store cannot be reached, the slot's
   * lease expires on its own.
   */
  release(policy: LimitPolicy, subject: string, token: string): Promise<void>
  /**
   * Extends the lease of this token's concurrency slot to `leaseMs` from now (a
   * long-lived holder, such as a live stream). False when the token holds no slot
   * (its lease expired, or the store lost it). Throws LimiterUnavailableError.
   */
  renew(policy: LimitPolicy, subject: string, token: string, leaseMs: number): Promise<boolean>
  /** Resolves when the store answers a round trip now; throws LimiterUnavailableError otherwise (readiness). */
  ping(): Promise<void>
  close(): Promise<void>
}

/** The store could not answer (unreachable, timed out): the request must not be served (503, fails closed). */
export class LimiterUnavailableError extends ApiError {
  constructor(cause: unknown) {
    super('RATE_LIMITER_UNAVAILABLE', 'The rate limiter is unavailable; retry with backoff.', {
      headers: { 'Retry-After': '1' },
      cause,
    })
    this.name = 'LimiterUnavailableError'
  }
}

/** Builds the decision both stores return from raw counts taken before the request was added. */
export function decide(
  policy: LimitPolicy,
  counts: { count: number; resetMs: number }[],
  inFlightBefore: number | undefined,
  denied: number,
): LimitDecision {
  const allowed = denied === 0
  const windows = policy.windows.map((w, i) => {
    const { count, resetMs } = counts[i]!
    const used = allowed ? count + 1 : count
    return {
      name: w.name,
      limit: w.limit,
      windowMs: w.windowMs,
      remaining: Math.max(0, w.limit - used),
      // A first request starts the window: it leaves after a full window.
      resetMs: count === 0 && allowed ? w.windowMs : resetMs,
    }
  })
  const inFlight = inFlightBefore === undefined ? undefined : inFlightBefore + (allowed ? 1 : 0)
  if (allowed) return { allowed, windows, inFlight, retryAfterMs: 0 }
  const exhausted = windows.filter((w) => w.remaining === 0 && w.resetMs > 0)
  const windowWait = exhausted.length > 0 ? Math.max(...exhausted.map((w) => w.resetMs)) : 0
  const byConcurrency = denied > policy.windows.length
  return {
    allowed,
    windows,
    inFlight,
    exceeded: byConcurrency ? 'concurrency' : 'window',
    // A slot frees when some request ends: unknowable, so "try again in a second".
    retryAfterMs: Math.max(windowWait, byConcurrency ? 1000 : 1),
  }
}
