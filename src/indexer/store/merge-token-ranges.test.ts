/**
 * ERC-4906 / URI ranges merged before the refetch UPDATE (transfers.ts, mergeTokenRanges): a
 * thousand copies of a whole-collection BatchMetadataUpdate in one block cost one range, and
 * no token named by any event is left out.
 */
import type { Hex } from 'viem'
import { describe, expect, it } from 'vitest'
import { mergeTokenRanges } from './transfers'

const A = '0x000000000000000000000000000000000000000a' as Hex
const B = '0x000000000000000000000000000000000000000b' as Hex
const range = (collection: Hex, from: bigint, to: bigint) => ({
  collection,
  fromTokenId: from,
  toTokenId: to,
})
const MAX = 2n ** 256n - 1n

describe('mergeTokenRanges', () => {
  it('a thousand whole-collection updates are one range', () => {
    expect(mergeTokenRanges(Array.from({ length: 1_000 }, () => range(A, 0n, MAX)))).toEqual([
      range(A, 0n, MAX),
    ])
  })

  it('merges overlapping and touching ranges per collection, keeps the others apart, drops reversed ones', () => {
    const merged = mergeTokenRanges([
      range(B, 5n, 5n),
      range(A, 10n, 20n),
      range(A, 0n, 3n),
      range(A, 4n, 6n),
      range(A, 15n, 30n),
      range(A, 40n, 40n),
      range(B, 7n, 9n),
      range(A, 50n, 45n),
    ])
    expect(merged).toEqual([
      range(A, 0n, 6n),
      range(A, 10n, 30n),
      range(A, 40n, 40n),
      range(B, 5n, 5n),
      range(B, 7n, 9n),
    ])
    // Every token an event named (and no other) is in a merged range.
    const named = (c: Hex, id: bigint) =>
      merged.some((r) => r.collection === c && r.fromTokenId <= id && id <= r.toTokenId)
    expect([0n, 3n, 4n, 6n, 10n, 30n, 40n].every((id) => named(A, id))).toBe(true)
    expect([7n, 9n, 31n, 39n, 41n, 47n].some((id) => named(A, id))).toBe(false)
    expect(named(B, 6n)).toBe(false)
  })
})
