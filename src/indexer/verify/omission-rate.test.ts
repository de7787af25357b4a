import { describe, expect, it } from 'vitest'
import {
  ACCEPTED_RISK,
  ASSUMED_RATE,
  LEARNING_ANSWERS,
  MAX_AGREEING,
  OmissionRate,
  readsNeeded,
  UNSEEN_RATE,
} from './omission-rate'

describe('readsNeeded', () => {
  it('asks two reads of a dense range and three of a sparse one at the assumed rate', () => {
    expect(readsNeeded(10_000, ASSUMED_RATE)).toBe(2)
    expect(readsNeeded(10, ASSUMED_RATE)).toBe(2)
    expect(readsNeeded(9, ASSUMED_RATE)).toBe(3)
    // An empty range may hold one log that every read left out.
    expect(readsNeeded(0, ASSUMED_RATE)).toBe(3)
  })

  it('asks more reads as the omission rate grows, up to MAX_AGREEING', () => {
    expect(readsNeeded(3, 0.3)).toBe(MAX_AGREEING)
    expect(readsNeeded(100, 0.3)).toBe(3)
    expect(readsNeeded(20, 0.05)).toBe(3)
    expect(readsNeeded(1, 1)).toBe(MAX_AGREEING)
  })

  it('keeps the chance that every read leaves out the same log under the accepted risk (below the cap)', () => {
    for (const rate of [0.01, 0.05, 0.1, 0.2])
      for (const logs of [1, 2, 5, 16, 100, 5_000]) {
        const n = readsNeeded(logs, rate)
        if (n < MAX_AGREEING) expect(rate ** n / logs ** (n - 1)).toBeLessThanOrEqual(ACCEPTED_RISK)
        // ...and no more reads than that takes.
        if (n > 2) expect(rate ** (n - 1) / logs ** (n - 2)).toBeGreaterThan(ACCEPTED_RISK)
      }
  })
})

describe('OmissionRate', () => {
  it('assumes one answer in twenty until it has counted enough of its own, then one in a hundred', () => {
    const rate = new OmissionRate()
    expect(rate.estimate()).toBe(UNSEEN_RATE)
    // A range of 40 logs: three reads while the provider is new, two once it has answered cleanly.
    expect(rate.readsNeeded(40)).toBe(3)
    rate.record(LEARNING_ANSWERS - 2, 0)
    expect(rate.estimate()).toBe(UNSEEN_RATE)
    rate.record(2, 0)
    expect(rate.estimate()).toBe(ASSUMED_RATE)
    expect(rate.readsNeeded(40)).toBe(2)
    rate.record(1_000, 0)
    expect(rate.estimate()).toBe(ASSUMED_RATE)
  })

  it("counts a range's unsettled reads fully: one of two answers lacking logs is 50 %", () => {
    expect(new OmissionRate().estimate(2, 1)).toBe(0.5)
  })

  it('shows operators the share observed, without the assumed floor', () => {
    const rate = new OmissionRate()
    expect(rate.observed()).toBe(0)
    rate.record(LEARNING_ANSWERS, 0)
    expect(rate.observed()).toBe(0)
    expect(rate.estimate()).toBe(ASSUMED_RATE)
    rate.record(100, 50)
    expect(rate.observed()).toBe(0.25)
  })

  it('follows a provider that starts and stops leaving logs out', () => {
    const rate = new OmissionRate()
    for (let i = 0; i < 100; i++) rate.record(2, 0)
    for (let i = 0; i < 100; i++) rate.record(3, 1)
    expect(rate.estimate()).toBeGreaterThan(0.25)
    for (let i = 0; i < 500; i++) rate.record(2, 0)
    expect(rate.estimate()).toBeLessThan(0.02)
  })
})
