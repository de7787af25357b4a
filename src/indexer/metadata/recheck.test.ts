import { describe, expect, it } from 'vitest'
import { RECHECK_DELAYS_MS, RECHECKED_OUTCOMES, recheckAt } from './recheck'

const HOUR = 3_600_000
const now = 1_000_000_000_000
const wait = (at: Date | null) => (at === null ? null : at.getTime() - now)

describe('re-check schedule', () => {
  it('is 1 h, 6 h, 24 h, then weekly, past the quick retries, with up to a tenth of jitter', () => {
    expect(RECHECK_DELAYS_MS).toEqual([HOUR, 6 * HOUR, 24 * HOUR, 168 * HOUR])
    // A timeout after its 5 quick attempts, then on each re-check.
    const waits = [5, 6, 7, 8, 9, 30].map((attempts) =>
      wait(recheckAt('timeout', attempts, 5, undefined, now)),
    )
    const expected = [HOUR, 6 * HOUR, 24 * HOUR, 168 * HOUR, 168 * HOUR, 168 * HOUR]
    waits.forEach((w, i) => {
      expect(w).toBeGreaterThanOrEqual(expected[i]!)
      expect(w).toBeLessThanOrEqual(expected[i]! * 1.1)
    })
    // An outcome without quick retries (a 404, a reverted tokenURI): its first re-check after 1 h.
    expect(wait(recheckAt('uri_reverted', 1, 1, undefined, now))).toBeLessThanOrEqual(1.1 * HOUR)
    expect(wait(recheckAt('invalid_json', 2, 1, undefined, now))).toBeGreaterThanOrEqual(6 * HOUR)
  })

  it('leaves blocked addresses and oversized documents final', () => {
    for (const outcome of ['blocked_address', 'too_large', 'ok', 'pending'] as const) {
      expect(RECHECKED_OUTCOMES.has(outcome)).toBe(false)
      expect(recheckAt(outcome, 1, 1, undefined, now)).toBeNull()
    }
  })
})
