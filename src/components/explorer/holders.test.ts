import { describe, expect, it } from 'vitest'
import type { CollectionOwner } from '@/client'
import { atBlockParam, formatShare, holdingsTotal } from './holders'

const holder = (token_count: number, balance?: string): CollectionOwner => ({
  owner: `0x${String(token_count).padStart(40, '0')}`,
  token_count,
  ...(balance === undefined ? {} : { balance }),
})

describe('atBlockParam', () => {
  it('keeps what was typed, trimmed, for the API to judge', () => {
    expect(atBlockParam(' 1200 ')).toBe('1200')
    expect(atBlockParam('12abc')).toBe('12abc')
    expect(atBlockParam(['7', '8'])).toBe('7')
    expect(atBlockParam('')).toBeNull()
    expect(atBlockParam('   ')).toBeNull()
    expect(atBlockParam(undefined)).toBeNull()
    expect(atBlockParam('9'.repeat(100))).toHaveLength(40)
  })
})

describe('holdingsTotal', () => {
  const holders = [holder(3, '10'), holder(2, '5'), holder(1, '1')]
  it('sums every holder once the list is complete: tokens, or units for ERC-1155', () => {
    expect(holdingsTotal({ holders, complete: true, edition: false, atBlock: null, totalSupply: '99' })).toBe(
      6n,
    )
    expect(holdingsTotal({ holders, complete: true, edition: true, atBlock: '5', totalSupply: '3' })).toBe(
      16n,
    )
    expect(holdingsTotal({ holders, complete: true, edition: false, atBlock: '5', totalSupply: '99' })).toBe(
      6n,
    )
  })
  it("takes an ERC-721 collection's total supply for its current holders before the last page", () => {
    expect(
      holdingsTotal({ holders, complete: false, edition: false, atBlock: null, totalSupply: '70' }),
    ).toBe(70n)
  })
  it('knows no total for a partial snapshot, partial ERC-1155 holders, or without the collection', () => {
    expect(
      holdingsTotal({ holders, complete: false, edition: false, atBlock: '5', totalSupply: '70' }),
    ).toBeNull()
    expect(
      holdingsTotal({ holders, complete: false, edition: true, atBlock: null, totalSupply: '3' }),
    ).toBeNull()
    expect(
      holdingsTotal({ holders, complete: false, edition: false, atBlock: null, totalSupply: undefined }),
    ).toBeNull()
  })
})

describe('formatShare', () => {
  it('rounds to hundredths below ten percent and to tenths above', () => {
    expect(formatShare(3n, 60n)).toBe('5.00%')
    expect(formatShare(10n, 70n)).toBe('14.3%')
    expect(formatShare(1n, 3n)).toBe('33.3%')
    expect(formatShare(2n, 3n)).toBe('66.7%')
    expect(formatShare(1n, 1n)).toBe('100.0%')
    expect(formatShare(1n, 300n)).toBe('0.33%')
    expect(formatShare(1n, 1_000_000n)).toBe('<0.01%')
    expect(formatShare(0n, 5n)).toBe('0.00%')
  })
  it('handles balances beyond 2^53 exactly', () => {
    expect(formatShare(2n ** 70n, 2n ** 72n)).toBe('25.0%')
  })
  it('has no share without a positive total', () => {
    expect(formatShare(1n, null)).toBeNull()
    expect(formatShare(1n, 0n)).toBeNull()
  })
})
