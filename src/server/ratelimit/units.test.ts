/** Pure parts of credentials and limits: formats, checksums, IP subjects, headers, the in-process store. */
import { describe, expect, it } from 'vitest'
import { sha256Hex } from '@/db/sha256'
import {
  claimedKind,
  displayPrefix,
  generateApiKeySecret,
  generateDemoToken,
  isWellFormedApiKey,
  parseAuthorization,
  sameHash,
} from '@/server/credentials/secrets'
import { rateLimitHeaders, retryHeaders } from './headers'
import { ipSubject } from './ip'
import { MemoryLimitStore } from './memory-store'
import type { LimitDecision, LimitPolicy } from './policy'

describe('API key format', () => {
  it('is nftk_ + 43 base62 random characters + a 6-character checksum', () => {
    const seen = new Set<string>()
    for (let i = 0; i < 200; i++) {
      const { secret, prefix, hash } = generateApiKeySecret()
      expect(secret).toMatch(/^nftk_[0-9A-Za-z]{49}$/)
      expect(isWellFormedApiKey(secret)).toBe(true)
      expect(prefix).toBe(secret.slice(0, 13))
      expect(displayPrefix(secret)).toBe(prefix)
      expect(hash).toBe(sha256Hex(secret))
      seen.add(secret)
    }
    expect(seen.size).toBe(200)
  })

  it('refuses any single-character change (checksum)', () => {
    const { secret } = generateApiKeySecret()
    const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
    let refused = 0
    for (let pos = 5; pos < secret.length; pos++) {
      const c = secret[pos]!
      const other = alphabet[(alphabet.indexOf(c) + 7) % 62]!
      const tampered = secret.slice(0, pos) + other + secret.slice(pos + 1)
      if (!isWellFormedApiKey(tampered)) refused++
    }
    expect(refused).toBe(secret.length - 5)
  })

  it('parses Authorization headers without touching the secret', () => {
    const { secret } = generateApiKeySecret()
    const { token } = generateDemoToken()
    expect(parseAuthorization(undefined)).toEqual({ kind: 'missing' })
    expect(parseAuthorization('')).toEqual({ kind: 'missing' })
    expect(parseAuthorization(`Bearer ${secret}`)).toEqual({ kind: 'key', secret })
    expect(parseAuthorization(`bearer  ${secret}`)).toEqual({ kind: 'key', secret })
    expect(parseAuthorization(`Bearer ${token}`)).toEqual({ kind: 'demo', secret: token })
    for (const bad of [
      secret,
      `Basic ${secret}`,
      `Bearer ${secret}x`,
      `Bearer ${token}=`,
      'Bearer abc',
      'Bearer',
    ]) {
      expect(parseAuthorization(bad).kind, bad).toBe('malformed')
    }
    expect(claimedKind(`Bearer ${token}`)).toBe('demo')
    expect(claimedKind(`Bearer ${secret}`)).toBe('key')
    expect(claimedKind(undefined)).toBe('key')
  })

  it('compares hashes in constant time', () => {
    const h = sha256Hex('x')
    expect(sameHash(h, h)).toBe(true)
    expect(sameHash(h, sha256Hex('y'))).toBe(false)
    expect(sameHash(h, '')).toBe(false)
  })

  it('makes demo tokens of demo_ + 32 random bytes in base64url', () => {
    const { token, hash } = generateDemoToken()
    expect(token).toMatch(/^demo_[A-Za-z0-9_-]{43}$/)
    expect(Buffer.from(token.slice(5), 'base64url')).toHaveLength(32)
    expect(hash).toBe(sha256Hex(token))
  })
})

describe('IP subjects', () => {
  it('keeps IPv4 addresses and groups IPv6 by /64', () => {
    expect(ipSubject('203.0.113.9')).toBe('ip:203.0.113.9')
    expect(ipSubject('2001:db8:1:2::1')).toBe('ip:2001:db8:1:2::/64')
    expect(ipSubject('2001:0db8:0001:0002:ffff:ffff:ffff:ffff')).toBe('ip:2001:db8:1:2::/64')
    expect(ipSubject('2001:db8:1:3::1')).toBe('ip:2001:db8:1:3::/64')
    expect(ipSubject('::1')).toBe('ip:0:0:0:0::/64')
    expect(ipSubject('::ffff:198.51.100.7')).toBe('ip:198.51.100.7')
    expect(ipSubject('fe80::1%eth0')).toBe('ip:fe80:0:0:0::/64')
  })
})

describe('RateLimit headers', () => {
  const decision = (windows: [string, number, number, number, number][]): LimitDecision => ({
    allowed: true,
    retryAfterMs: 0,
    windows: windows.map(([name, limit, windowMs, remaining, resetMs]) => ({
      name,
      limit,
      windowMs,
      remaining,
      resetMs,
    })),
  })

  it('lists the policy and reports the window closest to exhaustion', () => {
    const headers = rateLimitHeaders([
      {
        scope: 'credential',
        decision: decision([
          ['sec', 5, 1000, 4, 1000],
          ['min', 300, 60_000, 3, 41_200],
        ]),
      },
    ])
    expect(headers).toEqual({
      'RateLimit-Policy': '"sec";q=5;w=1, "min";q=300;w=60',
      RateLimit: '"min";r=3;t=42',
    })
  })

  it('merges identical IP and credential windows, reporting the more used', () => {
    const headers = rateLimitHeaders([
      { scope: 'ip', decision: decision([['sec', 5, 1000, 1, 300]]) },
      { scope: 'credential', decision: decision([['sec', 5, 1000, 3, 800]]) },
    ])
    expect(headers).toEqual({ 'RateLimit-Policy': '"sec";q=5;w=1', RateLimit: '"sec";r=1;t=1' })
  })

  it('names differing IP windows ip-…', () => {
    const headers = rateLimitHeaders([
      { scope: 'ip', decision: decision([['sec', 8, 1000, 7, 1000]]) },
      { scope: 'credential', decision: decision([['sec', 5, 1000, 4, 1000]]) },
    ])
    expect(headers['RateLimit-Policy']).toBe('"sec";q=5;w=1, "ip-sec";q=8;w=1')
  })

  it('gives whole seconds, at least 1, for Retry-After and RateLimit-Reset', () => {
    expect(retryHeaders(1)).toEqual({ 'Retry-After': '1', 'RateLimit-Reset': '1' })
    expect(retryHeaders(41_001)).toEqual({ 'Retry-After': '42', 'RateLimit-Reset': '42' })
  })
})

describe('in-process store', () => {
  const policy: LimitPolicy = {
    id: 't',
    windows: [
      { name: 'sec', limit: 2, windowMs: 1000 },
      { name: 'min', limit: 3, windowMs: 60_000 },
    ],
    concurrent: 2,
  }

  it('slides windows, refuses without consuming, and expires leases', async () => {
    let now = 1_000_000
    const store = new MemoryLimitStore(() => now)
    try {
      expect((await store.acquire(policy, 's', 'a', 5000)).allowed).toBe(true)
      expect((await store.acquire(policy, 's', 'b', 5000)).allowed).toBe(true)
      const third = await store.acquire(policy, 's', 'c', 5000)
      expect(third).toMatchObject({ allowed: false, exceeded: 'window', retryAfterMs: 1000 })
      now += 1000
      // The window slid; slots are both taken.
      expect(await store.acquire(policy, 's', 'c', 5000)).toMatchObject({
        allowed: false,
        exceeded: 'concurrency',
      })
      await store.release(policy, 's', 'a')
      expect((await store.acquire(policy, 's', 'c', 5000)).allowed).toBe(true)
      // Minute quota (3) is used up; the refusals above consumed nothing.
      const d = await store.acquire(policy, 's', 'd', 5000)
      expect(d.allowed).toBe(false)
      expect(d.windows.find((w) => w.name === 'min')?.remaining).toBe(0)
      // Refund gives everything back.
      await store.refund(policy, 's', 'c')
      now += 5000 // leases of a and b expire
      expect((await store.acquire(policy, 's', 'd', 5000)).allowed).toBe(true)
    } finally {
      await store.close()
    }
  })

  it('keeps exact counts in a long window across many expiries (the log compacts itself)', async () => {
    let now = 2_000_000
    const store = new MemoryLimitStore(() => now)
    const big: LimitPolicy = { ...policy, windows: [{ name: 'min', limit: 50_000, windowMs: 60_000 }] }
    delete big.concurrent
    const remaining = async (token: string) =>
      (await store.acquire(big, 's', token, 1000)).windows[0]!.remaining
    try {
      // 10 arrivals per ms for 4 s: 40,000 in the window.
      for (let ms = 0; ms < 4000; ms++, now++)
        for (let k = 0; k < 10; k++) await store.acquire(big, 's', `${ms}.${k}`, 1000)
      // One more arrival: 40,001 counted.
      expect(await remaining('x')).toBe(50_000 - 40_001)
      // 59 s later the first 3,001 ms of arrivals (30,010) have left the window: most of the log.
      now += 59_000
      expect(await remaining('y')).toBe(50_000 - (40_002 - 30_010))
      // A refund after the log compacted removes exactly that arrival.
      await store.refund(big, 's', '3999.9')
      expect(await remaining('z')).toBe(50_000 - (40_002 - 30_010))
      // Once the whole minute has passed, only the newest arrivals remain.
      now += 60_000
      expect(await remaining('w')).toBe(50_000 - 1)
    } finally {
      await store.close()
    }
  })
})
