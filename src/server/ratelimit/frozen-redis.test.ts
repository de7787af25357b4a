/**
 * A hung limiter store (docs/auth.md, "Rate limits"): with the private
 * redis-server stopped by SIGSTOP — connections open, nothing answered — a
 * request fails closed with 503 within RATE_LIMIT_TIMEOUT_MS, and once Redis
 * resumes, the checks it queued meanwhile (it runs them then) count for
 * nothing: the next request of the same key passes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApiKey, ensureUser } from '@/server/api/portal/keys/api-keys'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import { startTestRedis, type TestRedis } from '@/test/redis-server'
import { asDatabase, get, serveApi, type TestWeb, uniqueIp } from '@/test/serve-api'

const STATUS = '/v1/indexer/status'
const TIMEOUT_MS = 1000

let tdb: TestDatabase
let redis: TestRedis
let s: TestWeb
let secret: string

beforeAll(async () => {
  tdb = await createTestDatabase()
  redis = await startTestRedis()
  const db = asDatabase(tdb)
  const user = await ensureUser(db, '0x00000000000000000000000000000000000f2ee5')
  secret = (await createApiKey(db, { userId: user.id, address: user.address }, { name: 'frozen' })).secret
  s = await serveApi(tdb.url, {
    REDIS_URL: redis.url,
    TRUST_PROXY: '1',
    RATE_LIMIT_TIMEOUT_MS: String(TIMEOUT_MS),
    RATE_LIMIT_KEY: 'sec=5,min=300,concurrent=10',
    RATE_LIMIT_IP_KEY: 'sec=5,min=300,concurrent=10',
  })
})

afterAll(async () => {
  redis?.thaw()
  try {
    await s?.close()
    await tdb?.drop()
  } finally {
    await redis?.stop()
  }
})

async function timed(ip: string): Promise<{ status: number; code?: string; ms: number }> {
  const started = performance.now()
  const res = await get(s.base, STATUS, { credential: secret, ip, signal: AbortSignal.timeout(10_000) })
  const body = (await res.json()) as { error?: { code?: string } }
  return { status: res.status, code: body.error?.code, ms: performance.now() - started }
}

describe('a frozen Redis', () => {
  it('answers 503 within RATE_LIMIT_TIMEOUT_MS, and what it queued meanwhile does not count once it resumes', async () => {
    const ip = uniqueIp()
    expect((await timed(ip)).status).toBe(200)
    redis.freeze()
    let refused: { status: number; code?: string; ms: number }[]
    try {
      // More than the key's and the address's 5 per second, all while Redis hangs.
      refused = await Promise.all(Array.from({ length: 12 }, () => timed(ip)))
    } finally {
      redis.thaw()
    }
    for (const r of refused) expect(r).toMatchObject({ status: 503, code: 'RATE_LIMITER_UNAVAILABLE' })
    // The documented bound, and room for a loaded machine.
    expect(Math.max(...refused.map((r) => r.ms))).toBeLessThan(TIMEOUT_MS + 400)
    // Redis has run the queued checks by the time it answers this one: none of them holds a unit or a slot.
    const after = await Promise.all(Array.from({ length: 5 }, () => timed(ip)))
    expect(after.map((r) => r.status)).toEqual([200, 200, 200, 200, 200])
  })
})
