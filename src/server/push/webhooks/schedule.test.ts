/** The retry schedule (docs/push.md, "Attempts and retries"): exponential, capped, jittered upward, over a day. */
import { describe, expect, it } from 'vitest'
import { DEFAULT_RETRY_SCHEDULE, minimumSpanMs, retryDelayMs } from './schedule'

const HOUR = 3_600_000

describe('retry schedule', () => {
  it('waits 10 s, 40 s, 160 s … up to 6 h, and tries for more than a day', () => {
    const waits = Array.from({ length: 11 }, (_, i) => retryDelayMs(DEFAULT_RETRY_SCHEDULE, i + 1, () => 0))
    expect(waits.slice(0, 4)).toEqual([10_000, 40_000, 160_000, 640_000])
    expect(waits.slice(6)).toEqual(Array(5).fill(6 * HOUR))
    expect(retryDelayMs(DEFAULT_RETRY_SCHEDULE, 12)).toBeNull()
    expect(minimumSpanMs(DEFAULT_RETRY_SCHEDULE)).toBeGreaterThan(24 * HOUR)
    expect(minimumSpanMs(DEFAULT_RETRY_SCHEDULE) / HOUR).toBeCloseTo(33.8, 1)
  })

  it('adds up to 25 % at random, never less than the base', () => {
    expect(retryDelayMs(DEFAULT_RETRY_SCHEDULE, 2, () => 0.999_999)).toBe(50_000)
    for (let i = 0; i < 100; i++) {
      const wait = retryDelayMs(DEFAULT_RETRY_SCHEDULE, 3)!
      expect(wait).toBeGreaterThanOrEqual(160_000)
      expect(wait).toBeLessThanOrEqual(200_000)
    }
  })
})
