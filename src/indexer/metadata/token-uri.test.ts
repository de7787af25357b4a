import { encodeAbiParameters, type Hex, stringToHex } from 'viem'
import { describe, expect, it } from 'vitest'
import { FetchFailure } from './outcome'
import { cleanText, decodeLooseString, decodeUriResult } from './token-uri'

const abiString = (s: string) => encodeAbiParameters([{ type: 'string' }], [s])
const outcome = (fn: () => unknown) => {
  try {
    fn()
    return 'ok'
  } catch (err) {
    return err instanceof FetchFailure ? err.outcome : 'threw'
  }
}

describe('name() / symbol() strings', () => {
  it('reads ABI strings and pre-standard bytes32, else empty', () => {
    expect(decodeLooseString(abiString('Cool Cats'))).toBe('Cool Cats')
    expect(decodeLooseString(stringToHex('CryptoKitties', { size: 32 }))).toBe('CryptoKitties')
    expect(decodeLooseString(null)).toBe('')
    expect(decodeLooseString('0x')).toBe('')
    expect(decodeLooseString('0xdeadbeef')).toBe('')
  })

  it('drops NUL and control characters PostgreSQL or a page cannot show', () => {
    expect(cleanText('a\u0000b\u0007c\td')).toBe('abc\td')
    expect(decodeLooseString(abiString('\u0000\u0000Name\u0000'))).toBe('Name')
  })
})

describe('tokenURI results', () => {
  it('names reverted, garbage and oversized answers', () => {
    expect(decodeUriResult(abiString('ipfs://x/1'), 1000)).toBe('ipfs://x/1')
    expect(outcome(() => decodeUriResult(null, 1000))).toBe('uri_reverted')
    expect(outcome(() => decodeUriResult('0x', 1000))).toBe('uri_reverted')
    expect(outcome(() => decodeUriResult('0xdeadbeefdeadbe' as Hex, 1000))).toBe('invalid_uri')
    expect(outcome(() => decodeUriResult(abiString('x'.repeat(2000)), 1000))).toBe('too_large')
  })
})
