import { describe, expect, it } from 'vitest'
import { PrimaryWalHistory, parseLsn } from './replica-lag'

describe('parseLsn', () => {
  it('reads both halves of an LSN', () => {
    expect(parseLsn('0/3000000')).toBe(0x3000000n)
    expect(parseLsn('16/B374D848')).toBe((0x16n << 32n) | 0xb374d848n)
    expect(parseLsn('16/B374D848') > parseLsn('15/FFFFFFFF')).toBe(true)
  })

  it('refuses anything else', () => {
    expect(() => parseLsn('')).toThrow('not an LSN')
    expect(() => parseLsn('16-B374D848')).toThrow('not an LSN')
  })
})

describe('PrimaryWalHistory', () => {
  it('knows no lag before the primary was read', () => {
    expect(new PrimaryWalHistory(10_000).lagMs(5n, 1000)).toBeUndefined()
  })

  it('is 0 for a replica that holds the newest position', () => {
    const history = new PrimaryWalHistory(10_000)
    history.record(0, 100n)
    history.record(1000, 200n)
    expect(history.lagMs(200n, 1500)).toBe(0)
    expect(history.lagMs(250n, 1500)).toBe(0)
  })

  it('is the age of the oldest position the replica lacks', () => {
    const history = new PrimaryWalHistory(10_000)
    history.record(0, 100n)
    history.record(1000, 200n)
    history.record(2000, 300n)
    // Holds 200, lacks 300 (read at 2000).
    expect(history.lagMs(250n, 2500)).toBe(500)
    // Lacks 200 (read at 1000) and everything after.
    expect(history.lagMs(150n, 2500)).toBe(1500)
  })

  it('does not count a quiet primary as lag: an unchanged position keeps its first time', () => {
    const history = new PrimaryWalHistory(10_000)
    history.record(0, 100n)
    for (let t = 1000; t <= 60_000; t += 1000) history.record(t, 100n)
    expect(history.lagMs(100n, 60_000)).toBe(0)
    // A replica that lacks that position has lacked it since it was first seen.
    expect(history.lagMs(99n, 60_000)).toBe(60_000)
  })

  it('keeps the window it was given, and always the newest position', () => {
    const history = new PrimaryWalHistory(3000)
    for (let t = 0; t <= 10_000; t += 1000) history.record(t, BigInt(t + 1))
    // Older samples are gone: a replica behind them all is known to lag at least the window.
    expect(history.lagMs(0n, 10_000)).toBe(3000)
    const quiet = new PrimaryWalHistory(3000)
    quiet.record(0, 100n)
    quiet.record(60_000, 100n)
    expect(quiet.lagMs(100n, 60_000)).toBe(0)
  })

  it('starts over when the primary reports an earlier position (another server)', () => {
    const history = new PrimaryWalHistory(10_000)
    history.record(0, 500n)
    history.record(1000, 50n)
    expect(history.lagMs(60n, 1500)).toBe(0)
    expect(history.lagMs(40n, 1500)).toBe(500)
  })
})
