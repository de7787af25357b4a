/** The origins field of the key forms: each bad line named, and the per-key limit checked before sending. */
import { describe, expect, it } from 'vitest'
import { MAX_ALLOWED_ORIGINS } from '@/lib/origins'
import { parseOrigins } from './parse-origins'

const many = (n: number) => Array.from({ length: n }, (_, i) => `https://a${i}.example.com`)

describe('parseOrigins', () => {
  it('names the line that is not an origin, a pattern included', () => {
    expect(parseOrigins('https://ok.example.com\nhttps://*.example.com').error).toBe(
      '“https://*.example.com” is a pattern: wildcards are not supported, list each origin like https://app.example.com',
    )
  })

  it(`takes at most ${MAX_ALLOWED_ORIGINS} origins, counting a repeat once`, () => {
    expect(parseOrigins(many(MAX_ALLOWED_ORIGINS).join('\n'))).toEqual({ origins: many(MAX_ALLOWED_ORIGINS) })
    expect(
      parseOrigins([...many(MAX_ALLOWED_ORIGINS), 'https://a0.example.com'].join(', ')).error,
    ).toBeUndefined()
    expect(parseOrigins(many(MAX_ALLOWED_ORIGINS + 1).join('\n')).error).toBe(
      `At most ${MAX_ALLOWED_ORIGINS} origins per key (${MAX_ALLOWED_ORIGINS + 1} given).`,
    )
  })
})
