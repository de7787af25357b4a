import { encodeAbiParameters, type Hex, stringToHex } from 'viem'
import { describe, expect, it } from 'vitest'
import { FetchFailure } from './outcome'
import { uriOf } from './token-job'
import { cleanText, decodeLooseString, decodeUriResult, expandIdPlaceholder } from './token-uri'

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

  it('cuts at 1,000 characters by code points, never inside one (no U+FFFD the text did not have)', () => {
    // The 1,000th character is an emoji: two UTF-16 units.
    expect(cleanText(`${'a'.repeat(999)}😀😀`)).toBe(`${'a'.repeat(999)}😀`)
    expect(decodeLooseString(abiString(`${'a'.repeat(999)}😀😀`))).toBe(`${'a'.repeat(999)}😀`)
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

describe('ERC-1155 URIs', () => {
  it('replaces every {id} by the id as 64 lowercase hex digits, no 0x (EIP-1155 "Metadata")', () => {
    expect(expandIdPlaceholder('https://x.test/{id}.json', 314592n)).toBe(
      'https://x.test/000000000000000000000000000000000000000000000000000000000004cce0.json',
    )
    expect(expandIdPlaceholder('ipfs://Qm/{id}/{id}', 255n)).toBe(
      `ipfs://Qm/${'0'.repeat(62)}ff/${'0'.repeat(62)}ff`,
    )
    expect(expandIdPlaceholder('x/{id}', 2n ** 256n - 1n)).toBe(`x/${'f'.repeat(64)}`)
    expect(expandIdPlaceholder('x/{id}', 0n)).toBe(`x/${'0'.repeat(64)}`)
    // Only the exact placeholder: no other case or spelling, and a URI without one is kept.
    expect(expandIdPlaceholder('x/{ID}/{ id }/{id', 1n)).toBe('x/{ID}/{ id }/{id')
    expect(expandIdPlaceholder('https://x.test/7.json', 7n)).toBe('https://x.test/7.json')
  })

  it('takes the URI event over uri(id), expands either, and leaves ERC-721 tokenURIs as they are', () => {
    const template = abiString('https://x.test/{id}.json')
    const hex10 = `${'0'.repeat(63)}a`
    expect(uriOf({ erc1155: true, eventUri: null, result: template }, 10n, 1000)).toBe(
      `https://x.test/${hex10}.json`,
    )
    expect(uriOf({ erc1155: true, eventUri: 'ipfs://Qm/{id}', result: template }, 10n, 1000)).toBe(
      `ipfs://Qm/${hex10}`,
    )
    expect(uriOf({ erc1155: false, eventUri: null, result: template }, 10n, 1000)).toBe(
      'https://x.test/{id}.json',
    )
    expect(outcome(() => uriOf({ erc1155: true, eventUri: null, result: null }, 1n, 1000))).toBe(
      'uri_reverted',
    )
    // The expanded URI is held to the size limit too.
    expect(outcome(() => uriOf({ erc1155: true, eventUri: '{id}{id}', result: null }, 1n, 100))).toBe(
      'too_large',
    )
  })
})
