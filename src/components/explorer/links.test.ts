import { describe, expect, it } from 'vitest'
import { canonicalTokenId } from './links'

describe('canonicalTokenId', () => {
  const max = (2n ** 256n - 1n).toString()
  it('is the id as the API writes it: decimal, without leading zeros', () => {
    expect(canonicalTokenId('0')).toBe('0')
    expect(canonicalTokenId('1')).toBe('1')
    expect(canonicalTokenId('0001')).toBe('1')
    expect(canonicalTokenId('000')).toBe('0')
    expect(canonicalTokenId(max)).toBe(max)
    expect(canonicalTokenId(`0${2n ** 255n}`)).toBe(`${2n ** 255n}`)
  })

  it('is null for what no uint256 token can have', () => {
    for (const value of [
      '',
      '-1',
      '+1',
      ' 1',
      '1 ',
      '0x10',
      '1e3',
      '1.5',
      '١',
      (2n ** 256n).toString(),
      '9'.repeat(78),
      `00${max}`,
      '1'.repeat(79),
      '1'.repeat(10_000),
    ])
      expect(canonicalTokenId(value), value.slice(0, 20)).toBeNull()
  })
})
