/**
 * Credentials over HTTP against real PostgreSQL and Redis: 401 / 403 for
 * every kind of bad credential, scopes, origins and CORS, the order of
 * checks, demo-token issuance, and key-use tracking.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import type { Database } from '@/db/database'
import { sha256Hex } from '@/db/sha256'
import { SCOPES } from '@/lib/scopes'
import { createApiKey, ensureUser, revokeApiKey, rotateApiKey } from '@/server/api/portal/keys/api-keys'
import { portalRouter } from '@/server/api/portal/router'
import { issueDemoToken } from '@/server/credentials/demo-tokens'
import { generateApiKeySecret } from '@/server/credentials/secrets'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import { startTestRedis, type TestRedis } from '@/test/redis-server'
import { asDatabase, get, serveApi, type TestWeb, uniqueIp } from '@/test/serve-api'

const PUBLIC_URL = 'http://portal.test:3000'
const GENEROUS = 'sec=1000,min=100000,concurrent=100'
const STATUS = '/v1/indexer/status'

let tdb: TestDatabase
let db: Database
let redis: TestRedis
let s: TestWeb
let user: { id: bigint; address: string }

async function newKey(options: { scopes?: (typeof SCOPES)[number][]; allowedOrigins?: string[] } = {}) {
  return createApiKey(db, { userId: user.id, address: user.address }, { name: 'test', ...options })
}

async function envelope(res: Response) {
  const body = (await res.json()) as { error: { code: string; message: string; request_id: string } }
  expect(body.error.request_id).toBe(res.headers.get('x-request-id'))
  return body.error
}

beforeAll(async () => {
  tdb = await createTestDatabase()
  db = asDatabase(tdb)
  redis = await startTestRedis()
  s = await serveApi(tdb.url, {
    REDIS_URL: redis.url,
    TRUST_PROXY: '1',
    PUBLIC_URL,
    RATE_LIMIT_KEY: GENEROUS,
    RATE_LIMIT_DEMO: GENEROUS,
  })
  user = await ensureUser(db, '0x00000000000000000000000000000000000a11ce')
})

afterAll(async () => {
  // The private redis-server is stopped whatever else fails.
  try {
    await s?.close()
    await tdb?.drop()
  } finally {
    await redis?.stop()
  }
})

describe('401: missing, malformed, unknown, expired, revoked', () => {
  it('refuses a request without a credential', async () => {
    const res = await get(s.base, STATUS, { ip: uniqueIp() })
    expect(res.status).toBe(401)
    expect((await envelope(res)).code).toBe('UNAUTHORIZED')
  })

  it('refuses malformed Authorization headers', async () => {
    const { secret } = await newKey()
    for (const header of [
      'Basic abc',
      'Bearer',
      `Bearer ${secret} extra`,
      `Token ${secret}`,
      'Bearer nftk_short',
      'Bearer demo_x',
    ]) {
      const res = await get(s.base, STATUS, { ip: uniqueIp(), headers: { Authorization: header } })
      expect(res.status, header).toBe(401)
    }
  })

  it('refuses a key whose checksum does not verify before any database lookup', async () => {
    const { secret } = await newKey()
    const last = secret.at(-1) === 'A' ? 'B' : 'A'
    const tampered = `${secret.slice(0, -1)}${last}`
    const spy = vi.spyOn(s.services.access.verifier, 'verify')
    try {
      const res = await get(s.base, STATUS, { ip: uniqueIp(), credential: tampered })
      expect(res.status).toBe(401)
      expect(spy).not.toHaveBeenCalled()
      // The untampered key does reach the verifier.
      expect((await get(s.base, STATUS, { ip: uniqueIp(), credential: secret })).status).toBe(200)
      expect(spy).toHaveBeenCalledTimes(1)
    } finally {
      spy.mockRestore()
    }
  })

  it('refuses a well-formed key that was never issued', async () => {
    const res = await get(s.base, STATUS, { ip: uniqueIp(), credential: generateApiKeySecret().secret })
    expect(res.status).toBe(401)
  })

  it('refuses an unknown demo token and an expired one', async () => {
    const unknown = await get(s.base, STATUS, { ip: uniqueIp(), credential: `demo_${'A'.repeat(43)}` })
    expect(unknown.status).toBe(401)
    // Issued through the real issuing function, 16 minutes ago: expired a minute ago.
    const { token, expiresAt } = await issueDemoToken(db, {
      clientIp: '10.0.0.1',
      now: new Date(Date.now() - 16 * 60_000),
    })
    expect(expiresAt.getTime()).toBeLessThan(Date.now())
    const expired = await get(s.base, STATUS, { ip: uniqueIp(), credential: token })
    expect(expired.status).toBe(401)
    expect((await envelope(expired)).message).toMatch(/expired/)
    // One issued now works.
    const fresh = await issueDemoToken(db, { clientIp: '10.0.0.1' })
    expect((await get(s.base, STATUS, { ip: uniqueIp(), credential: fresh.token })).status).toBe(200)
  })

  it('refuses a demo token that expires while cached', async () => {
    // Expires 300 ms from now: accepted, then refused although the verifier cached it.
    const { token } = await issueDemoToken(db, {
      clientIp: '10.0.0.1',
      now: new Date(Date.now() - 15 * 60_000 + 300),
    })
    expect((await get(s.base, STATUS, { ip: uniqueIp(), credential: token })).status).toBe(200)
    await new Promise((r) => setTimeout(r, 400))
    expect((await get(s.base, STATUS, { ip: uniqueIp(), credential: token })).status).toBe(401)
  })

  it('refuses a revoked key within a second, and a rotated-out secret', async () => {
    const actor = { userId: user.id, address: user.address }
    const { key, secret } = await newKey()
    expect((await get(s.base, STATUS, { ip: uniqueIp(), credential: secret })).status).toBe(200)
    const rotated = await rotateApiKey(db, actor, { keyId: BigInt(key.id) })
    await new Promise((r) => setTimeout(r, 1000))
    expect((await get(s.base, STATUS, { ip: uniqueIp(), credential: secret })).status).toBe(401)
    expect((await get(s.base, STATUS, { ip: uniqueIp(), credential: rotated.secret })).status).toBe(200)
    await revokeApiKey(db, actor, { keyId: BigInt(key.id) })
    await new Promise((r) => setTimeout(r, 1000))
    const res = await get(s.base, STATUS, { ip: uniqueIp(), credential: rotated.secret })
    expect(res.status).toBe(401)
    expect((await envelope(res)).message).toMatch(/revoked/)
  })

  it('refuses a key revoked in the portal at once: the portal clears the credential cache /v1 reads', async () => {
    // A cache of a full second: without the portal clearing it, the revoked key would still be served.
    const web = await serveApi(tdb.url, {
      REDIS_URL: redis.url,
      TRUST_PROXY: '1',
      PUBLIC_URL,
      RATE_LIMIT_KEY: GENEROUS,
      CREDENTIAL_CACHE_MS: '1000',
    })
    try {
      const { key, secret } = await newKey()
      expect((await get(web.base, STATUS, { ip: uniqueIp(), credential: secret })).status).toBe(200)
      // The portal's procedure, with the context /api/trpc gives it: the web process's own services.
      const portal = portalRouter.createCaller({
        db: web.services.db,
        credentials: web.services.access.verifier,
        clientIp: '203.0.113.7',
        userAgent: null,
        user,
      })
      await portal.keys.revoke({ id: key.id })
      expect((await get(web.base, STATUS, { ip: uniqueIp(), credential: secret })).status).toBe(401)
    } finally {
      await web.close()
    }
  })

  it('keeps a rotated-out secret working during the grace period the user chose', async () => {
    const actor = { userId: user.id, address: user.address }
    const { key, secret } = await newKey()
    const rotated = await rotateApiKey(db, actor, { keyId: BigInt(key.id), graceSeconds: 3600 })
    expect(rotated.key.active_secrets).toHaveLength(2)
    await new Promise((r) => setTimeout(r, 1000))
    expect((await get(s.base, STATUS, { ip: uniqueIp(), credential: secret })).status).toBe(200)
    expect((await get(s.base, STATUS, { ip: uniqueIp(), credential: rotated.secret })).status).toBe(200)
  })
})

describe('403: scopes and origins', () => {
  it('refuses a key without the endpoint scope', async () => {
    const { secret } = await newKey({ scopes: ['read:collections'] })
    const res = await get(s.base, STATUS, { ip: uniqueIp(), credential: secret })
    expect(res.status).toBe(403)
    const error = await envelope(res)
    expect(error.code).toBe('FORBIDDEN')
    expect(error.message).toContain('read:status')
  })

  it('refuses a portal key from a browser origin that is not in its allowlist (empty by default)', async () => {
    const { secret } = await newKey()
    const res = await get(s.base, STATUS, {
      ip: uniqueIp(),
      credential: secret,
      origin: 'https://app.example.com',
    })
    expect(res.status).toBe(403)
    expect(res.headers.get('access-control-allow-origin')).toBeNull()
    // PUBLIC_URL's origin is not implied for portal keys either.
    expect(
      (await get(s.base, STATUS, { ip: uniqueIp(), credential: secret, origin: PUBLIC_URL })).status,
    ).toBe(403)
    // Without an Origin header (server-side use) the key works.
    expect((await get(s.base, STATUS, { ip: uniqueIp(), credential: secret })).status).toBe(200)
  })

  it('serves a portal key from an allowed origin with CORS headers', async () => {
    const { secret } = await newKey({ allowedOrigins: ['https://dapp.example.org'] })
    // The set of CORS origins is re-read at most once a second.
    await new Promise((r) => setTimeout(r, 1000))
    const res = await get(s.base, STATUS, {
      ip: uniqueIp(),
      credential: secret,
      origin: 'https://dapp.example.org',
    })
    expect(res.status).toBe(200)
    expect(res.headers.get('access-control-allow-origin')).toBe('https://dapp.example.org')
    const exposed = res.headers.get('access-control-expose-headers') ?? ''
    for (const h of ['RateLimit', 'RateLimit-Policy', 'RateLimit-Reset', 'Retry-After', 'X-Request-Id']) {
      expect(exposed).toContain(h)
    }
    expect(res.headers.get('vary')).toContain('Origin')
    const other = await get(s.base, STATUS, {
      ip: uniqueIp(),
      credential: secret,
      origin: 'https://evil.example.org',
    })
    expect(other.status).toBe(403)
  })

  it('accepts demo tokens from PUBLIC_URL only', async () => {
    const { token } = await issueDemoToken(db, { clientIp: '10.0.0.2' })
    const ok = await get(s.base, STATUS, { ip: uniqueIp(), credential: token, origin: PUBLIC_URL })
    expect(ok.status).toBe(200)
    expect(ok.headers.get('access-control-allow-origin')).toBe(PUBLIC_URL)
    const elsewhere = await get(s.base, STATUS, {
      ip: uniqueIp(),
      credential: token,
      origin: 'https://evil.example.org',
    })
    expect(elsewhere.status).toBe(403)
  })

  it('answers CORS preflights for allowed origins only', async () => {
    await newKey({ allowedOrigins: ['https://preflight.example.net'] })
    await new Promise((r) => setTimeout(r, 1000))
    const preflight = (origin: string) =>
      fetch(`${s.base}${STATUS}`, {
        method: 'OPTIONS',
        headers: {
          Origin: origin,
          'Access-Control-Request-Method': 'GET',
          'Access-Control-Request-Headers': 'authorization',
        },
      })
    for (const origin of [PUBLIC_URL, 'https://preflight.example.net']) {
      const res = await preflight(origin)
      expect(res.status, origin).toBe(204)
      expect(res.headers.get('access-control-allow-origin')).toBe(origin)
      expect(res.headers.get('access-control-allow-methods')).toContain('GET')
      expect(res.headers.get('access-control-allow-headers')).toMatch(/Authorization/i)
    }
    const refused = await preflight('https://evil.example.org')
    expect(refused.status).toBe(403)
    expect(refused.headers.get('access-control-allow-origin')).toBeNull()
  })
})

describe('order of checks', () => {
  it('credential (401) before parameters (400)', async () => {
    const res = await get(s.base, `${STATUS}?bogus=1`, { ip: uniqueIp() })
    expect(res.status).toBe(401)
  })

  it('scope (403) before parameters (400)', async () => {
    const { secret } = await newKey({ scopes: ['read:nfts'] })
    const res = await get(s.base, `${STATUS}?bogus=1`, { ip: uniqueIp(), credential: secret })
    expect(res.status).toBe(403)
  })

  it('parameters (400) before the handler (404)', async () => {
    const { secret } = await newKey()
    const ip = uniqueIp()
    expect((await get(s.base, `${STATUS}?bogus=1`, { ip, credential: secret })).status).toBe(400)
    expect((await get(s.base, `${STATUS}?network=othernet`, { ip, credential: secret })).status).toBe(404)
  })

  it('the per-IP limit (429) comes before the credential (401) and before unknown paths (404)', async () => {
    const strict = await serveApi(tdb.url, { REDIS_URL: redis.url, TRUST_PROXY: '1', PUBLIC_URL })
    try {
      const ip = uniqueIp()
      const statuses = []
      for (let i = 0; i < 6; i++) statuses.push((await get(strict.base, STATUS, { ip })).status)
      expect(statuses).toEqual([401, 401, 401, 401, 401, 429])
      expect((await get(strict.base, '/v1/nowhere', { ip })).status).toBe(429)
      expect((await get(strict.base, '/v1/nowhere', { ip: uniqueIp() })).status).toBe(404)
    } finally {
      await strict.close()
    }
  })

  it('the credential limit (429) comes before scope (403)', async () => {
    const strict = await serveApi(tdb.url, { REDIS_URL: redis.url, TRUST_PROXY: '1', PUBLIC_URL })
    try {
      const { secret } = await newKey({ scopes: ['read:nfts'] })
      const statuses = []
      // Different client addresses: only the key's own limit (5/s) applies.
      for (let i = 0; i < 6; i++)
        statuses.push((await get(strict.base, STATUS, { ip: uniqueIp(), credential: secret })).status)
      expect(statuses).toEqual([403, 403, 403, 403, 403, 429])
    } finally {
      await strict.close()
    }
  })
})

describe('POST /v1/demo-token', () => {
  const issue = (ip: string, init: RequestInit = {}) =>
    fetch(`${s.base}/v1/demo-token`, {
      method: 'POST',
      ...init,
      headers: { 'X-Forwarded-For': ip, ...init.headers },
    })

  it('issues a token without a credential, not to be cached, storing only its hash', async () => {
    const res = await issue(uniqueIp())
    expect(res.status).toBe(200)
    expect(res.headers.get('cache-control')).toBe('no-store')
    const body = (await res.json()) as {
      data: { token: string; expires_at: string; scopes: string[]; limits: unknown }
    }
    expect(body.data.token).toMatch(/^demo_[A-Za-z0-9_-]{43}$/)
    expect(body.data.scopes).toEqual([...SCOPES])
    // The configured demo limits (this server's are generous; the defaults are the spec's: see limits.test.ts).
    expect(body.data.limits).toEqual({
      requests_per_second: 1000,
      requests_per_minute: 100000,
      concurrent: 100,
    })
    const ttl = Date.parse(body.data.expires_at) - Date.now()
    expect(ttl).toBeGreaterThan(14 * 60_000)
    expect(ttl).toBeLessThanOrEqual(15 * 60_000)
    const rows = await tdb.pool.query('SELECT token_hash FROM demo_tokens')
    const stored = JSON.stringify(rows.rows)
    expect(stored).toContain(sha256Hex(body.data.token))
    expect(stored).not.toContain(body.data.token.slice(5))
    // The token works on every read endpoint's scope.
    expect((await get(s.base, STATUS, { ip: uniqueIp(), credential: body.data.token })).status).toBe(200)
  })

  it('ignores a bearer header and any body', async () => {
    const ip = uniqueIp()
    expect((await issue(ip, { headers: { Authorization: 'Bearer garbage' } })).status).toBe(200)
    expect((await issue(ip, { headers: { Authorization: 'Bearer demo_x' } })).status).toBe(200)
    expect((await issue(ip, { body: 'not json', headers: { 'Content-Type': 'text/plain' } })).status).toBe(
      200,
    )
    expect(
      (await issue(ip, { body: '{"a":1}', headers: { 'Content-Type': 'application/json' } })).status,
    ).toBe(200)
  })

  it('issues 5 per minute per client IP, then 429 with Retry-After', async () => {
    const ip = uniqueIp()
    for (let i = 0; i < 5; i++) expect((await issue(ip)).status).toBe(200)
    const refused = await issue(ip)
    expect(refused.status).toBe(429)
    expect((await envelope(refused)).code).toBe('RATE_LIMITED')
    const retry = Number(refused.headers.get('retry-after'))
    expect(retry).toBeGreaterThanOrEqual(55)
    expect(retry).toBeLessThanOrEqual(60)
    expect(refused.headers.get('ratelimit-reset')).toBe(String(retry))
    expect(refused.headers.get('ratelimit-policy')).toBe('"min";q=5;w=60')
    // Another address is not affected.
    expect((await issue(uniqueIp())).status).toBe(200)
  })
})

describe('key use', () => {
  it('records last use without a write per request', async () => {
    const { key, secret } = await newKey()
    const lastUsed = async () =>
      (await tdb.prisma.apiKey.findUniqueOrThrow({ where: { id: BigInt(key.id) } })).lastUsedAt?.getTime() ??
      null
    expect(await lastUsed()).toBeNull()
    expect((await get(s.base, STATUS, { ip: uniqueIp(), credential: secret })).status).toBe(200)
    await vi.waitFor(async () => expect(await lastUsed()).not.toBeNull(), { timeout: 5000, interval: 100 })
    const first = await lastUsed()
    for (let i = 0; i < 3; i++) await get(s.base, STATUS, { ip: uniqueIp(), credential: secret })
    await new Promise((r) => setTimeout(r, 1500))
    // Within a minute of the recorded use nothing more is written.
    expect(await lastUsed()).toBe(first)
  })
})
