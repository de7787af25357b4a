/**
 * The per-process fixed-window counter behind the SIWE nonce limit and the refused-sign-in
 * audit (./fixed-window.ts): its limit per key, and its sweep of ended windows, which walks
 * every key and so runs once a window at most, however many new keys arrive in it.
 */
import { describe, expect, it, vi } from 'vitest'
import { FixedWindowCounter } from './fixed-window'

describe('FixedWindowCounter', () => {
  it('allows `limit` events per key in a window, then says when the next is allowed', () => {
    const counter = new FixedWindowCounter(2, 60_000)
    expect(counter.take('a', 0).allowed).toBe(true)
    expect(counter.take('a', 1).allowed).toBe(true)
    expect(counter.take('a', 2)).toEqual({ allowed: false, retryAfterS: 60 })
    expect(counter.take('b', 2).allowed).toBe(true)
    expect(counter.take('a', 60_000).allowed).toBe(true)
  })

  it('sweeps once a window while new keys flood in, and drops the ended windows then', () => {
    const counter = new FixedWindowCounter(5, 60_000, 1_000)
    const sweep = vi.spyOn(counter, 'sweep')
    // 5,000 distinct keys within one window: over the bound from the 1,001st on.
    for (let i = 0; i < 5_000; i++) counter.take(`k${i}`, 1_000 + i)
    expect(sweep).toHaveBeenCalledTimes(1)
    expect(counter.size).toBe(5_000)
    // A window after that sweep the next key sweeps again, and every window that ended goes.
    counter.take('late', 63_000)
    expect(sweep).toHaveBeenCalledTimes(2)
    expect(counter.size).toBe(5_000 - 2_001 + 1)
  })
})
