import { describe, expect, it } from 'vitest'
import { ProofPolicy } from './proof-sample'

describe('the sample of blocks proven by receipts', () => {
  it('holds about the share asked for', () => {
    const sampled = new ProofPolicy({ rate: 0.01, seed: 7 }).sampled(0n, 99_999n)
    expect(sampled.length).toBeGreaterThan(800)
    expect(sampled.length).toBeLessThan(1_200)
  })

  it('picks each block by its number, however the blocks are split into ranges', () => {
    const policy = new ProofPolicy({ rate: 0.1, seed: 7 })
    const whole = policy.sampled(1_000n, 1_999n)
    const split = [...policy.sampled(1_000n, 1_336n), ...policy.sampled(1_337n, 1_999n)]
    expect(split).toEqual(whole)
  })

  it('picks other blocks under another seed, none at rate 0 and all at rate 1', () => {
    const a = new ProofPolicy({ rate: 0.1, seed: 1 }).sampled(0n, 999n)
    const b = new ProofPolicy({ rate: 0.1, seed: 2 }).sampled(0n, 999n)
    expect(a).not.toEqual(b)
    expect(new ProofPolicy({ rate: 0 }).sampled(0n, 999n)).toEqual([])
    expect(new ProofPolicy({ rate: 1 }).sampled(5n, 9n)).toEqual([5n, 6n, 7n, 8n, 9n])
  })

  it('tells once when the log index stops being trusted', () => {
    let told = 0
    const policy = new ProofPolicy({ rate: 0.01 }, false, () => told++)
    policy.distrust()
    policy.distrust()
    expect(policy.untrusted).toBe(true)
    expect(told).toBe(1)
  })
})
