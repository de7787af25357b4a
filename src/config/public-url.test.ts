/**
 * PUBLIC_URL and MEDIA_ORIGIN are published (src/config/env.ts, `originUrl`): the OpenAPI
 * document's server, every NFT's media_url (`${MEDIA_ORIGIN ?? PUBLIC_URL}/v1/media?url=…`,
 * docs/api.md), the SIWE message's URI, NEXTAUTH_URL, and the `url` of the start-up log
 * lines. A user name and password in them would go out in clear to every client and every
 * log; a query or fragment would swallow every link appended to them. Both are refused
 * with a ConfigError naming the variable and never showing the password.
 */
import { describe, expect, it } from 'vitest'
import { mediaOrigin } from '@/server/api/v1/nfts/nft-shape'
import { ConfigError, parseConfig } from './env'

describe('PUBLIC_URL must be an origin', () => {
  it('refuses a user name and password (they would be published in media_url and logged)', () => {
    let config: ReturnType<typeof parseConfig> | undefined
    let error: unknown
    try {
      config = parseConfig({ PUBLIC_URL: 'https://admin:hunter2-secret@nft.example.com' })
    } catch (err) {
      error = err
    }
    expect(error, `accepted; media_url origin would be ${config ? mediaOrigin(config) : '?'}`).toBeInstanceOf(
      ConfigError,
    )
    expect((error as ConfigError).variable).toBe('PUBLIC_URL')
    expect((error as Error).message).not.toContain('hunter2-secret')
  })

  it.each([
    ['a query', 'https://nft.example.com/?utm=x'],
    ['a fragment', 'https://nft.example.com/#top'],
  ])('refuses %s, to which every link would be appended', (_what, value) => {
    let config: ReturnType<typeof parseConfig> | undefined
    let error: unknown
    try {
      config = parseConfig({ PUBLIC_URL: value })
    } catch (err) {
      error = err
    }
    expect(
      error,
      `accepted; media_url would start ${config ? `${mediaOrigin(config)}/v1/media?url=` : '?'}`,
    ).toBeInstanceOf(ConfigError)
  })

  it('MEDIA_ORIGIN, published the same way, refuses a user name and password too', () => {
    expect(() => parseConfig({ MEDIA_ORIGIN: 'https://cdn:s3cret-cdn@media.example.com' })).toThrow(
      ConfigError,
    )
  })

  it.each([
    ['a user name alone', 'https://deploy@nft.example.com'],
    ['an empty query', 'https://nft.example.com?'],
    ['an empty fragment', 'https://nft.example.com/#'],
  ])('refuses %s too', (_what, value) => {
    expect(() => parseConfig({ PUBLIC_URL: value })).toThrow(ConfigError)
  })

  it('MEDIA_ORIGIN refuses a query, naming MEDIA_ORIGIN', () => {
    let error: unknown
    try {
      parseConfig({ MEDIA_ORIGIN: 'https://media.example.com/?v=1' })
    } catch (err) {
      error = err
    }
    expect(error).toBeInstanceOf(ConfigError)
    expect((error as ConfigError).variable).toBe('MEDIA_ORIGIN')
  })

  it('still takes a plain origin, and a path as before (trailing / dropped)', () => {
    expect(parseConfig({ PUBLIC_URL: 'https://nft.example.com/' }).PUBLIC_URL).toBe('https://nft.example.com')
    expect(parseConfig({ PUBLIC_URL: 'https://example.com/nft/' }).PUBLIC_URL).toBe('https://example.com/nft')
    const config = parseConfig({ MEDIA_ORIGIN: 'https://media.example.com:8443' })
    expect(mediaOrigin(config)).toBe('https://media.example.com:8443')
  })
})
