/** Sign-in nonces per client: an IPv6 client is its /64, as for /v1's per-IP limits. */
import { describe, expect, it } from 'vitest'
import { allowNonceRequest, NONCES_PER_MINUTE } from './siwe-nonce-limit'

/** How many of `count` requests, each from the next address, are accepted. */
function accepted(addresses: (i: number) => string, count: number, now: number): number {
  let allowed = 0
  for (let i = 0; i < count; i++) if (allowNonceRequest(addresses(i), now).allowed) allowed++
  return allowed
}

describe('allowNonceRequest', () => {
  const now = Date.now()

  it('limits one /64 as one client, whichever of its addresses asks', () => {
    const inOneNet = (i: number) => `2001:db8:1:2:${(i + 1).toString(16)}::1`
    expect(accepted(inOneNet, 200, now)).toBe(NONCES_PER_MINUTE)
    // Another /64 has its own allowance.
    expect(allowNonceRequest('2001:db8:1:3::1', now).allowed).toBe(true)
  })

  it('limits an IPv4 address by itself, and frees it after the minute', () => {
    expect(accepted(() => '198.51.100.23', NONCES_PER_MINUTE + 5, now)).toBe(NONCES_PER_MINUTE)
    const refused = allowNonceRequest('198.51.100.23', now)
    expect(refused).toEqual({ allowed: false, retryAfterS: 60 })
    expect(allowNonceRequest('198.51.100.24', now).allowed).toBe(true)
    expect(allowNonceRequest('198.51.100.23', now + 60_000).allowed).toBe(true)
  })
})
