/**
 * When a failed webhook delivery is tried again (docs/push.md, "Retries"):
 * exponential backoff with jitter, capped, over more than a day.
 */

export interface RetrySchedule {
  /** Attempts in all, the first included. */
  attempts: number
  /** Wait after the first failed attempt. */
  baseMs: number
  /** Each further wait is this many times the previous one … */
  factor: number
  /** … up to this. */
  capMs: number
  /** Up to this share is added at random (0.25: +0–25 %), so receivers that recover are not hit at once. */
  jitter: number
}

/**
 * 12 attempts: waits of 10 s, 40 s, 160 s, ~11 min, ~43 min, ~2.8 h, then 6 h five times
 * (each +0–25 %): the last attempt comes 33.8–42 h after the first.
 */
export const DEFAULT_RETRY_SCHEDULE: RetrySchedule = {
  attempts: 12,
  baseMs: 10_000,
  factor: 4,
  capMs: 6 * 60 * 60 * 1000,
  jitter: 0.25,
}

/** The wait before the next attempt after `failedAttempts` failures, or null when none is left. */
export function retryDelayMs(
  schedule: RetrySchedule,
  failedAttempts: number,
  random: () => number = Math.random,
): number | null {
  if (failedAttempts >= schedule.attempts) return null
  const base = Math.min(schedule.capMs, schedule.baseMs * schedule.factor ** Math.max(0, failedAttempts - 1))
  return Math.round(base * (1 + schedule.jitter * random()))
}

/** The shortest time from the first attempt to the last (no jitter). */
export function minimumSpanMs(schedule: RetrySchedule): number {
  let total = 0
  for (let n = 1; n < schedule.attempts; n++) total += retryDelayMs(schedule, n, () => 0)!
  return total
}
