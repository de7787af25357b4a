/**
 * Usage per key over HTTP with a real Redis limiter and PostgreSQL: answers of
 * requests with a valid key are counted by status class (2xx / 4xx / 429) in
 * memory, written to api_key_usage_hourly only by the flush (adding to what
 * is there), kept 7 days, and shown to the key's owner only (keys.usage).
 */
import { TRPCError } from '@trpc/server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Database } from '@/db/database'
import { createApiKey, ensureUser } from '@/server/api/portal/keys/api-keys'
import { portalRouter } from '@/server/api/portal/router'
import type { PortalContext } from '@/server/api/trpc/portal'
import type { SessionUser } from '@/server/portal-auth/session-user'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import { startTestRedis, type TestRedis } from '@/test/redis-server'
import { asDatabase, get, serveApi, type TestWeb, uniqueIp } from '@/test/serve-api'
import { hourStart, KeyUsageCounter, readKeyUsage } from './key-usage'

const HOUR = 3600_000
let tdb: TestDatabase
let db: Database
let redis: TestRedis
let s: TestWeb
let alice: SessionUser
let bob: SessionUser

async function usageRows(keyId: string) {
  const { rows } = await tdb.pool.query(
    `SELECT hour, ok_count, client_error_count, rate_limited_count, server_error_count, ip_rate_limited_count
       FROM api_key_usage_hourly WHERE key_id = $1 ORDER BY hour`,
    [keyId],
  )
  return rows
}

function keys(user: SessionUser) {
  const ctx: PortalContext = {
    db,
    credentials: { clear() {} },
    clientIp: '203.0.113.1',
    userAgent: 't',
    user,
  }
  return portalRouter.createCaller(ctx).keys
}

beforeAll(async () => {
  tdb = await createTestDatabase({ poolSize: 10 })
  db = asDatabase(tdb)
  redis = await startTestRedis()
  alice = await ensureUser(db, '0x00000000000000000000000000000000000a11ce')
  bob = await ensureUser(db, '0x0000000000000000000000000000000000000b0b')
  // Three requests a minute per key; the per-IP limit out of the way.
  s = await serveApi(tdb.url, {
    REDIS_URL: redis.url,
    TRUST_PROXY: '1',
    RATE_LIMIT_KEY: 'sec=3,min=3,concurrent=10',
    RATE_LIMIT_IP_KEY: 'sec=100,min=1000,concurrent=50',
  })
})

afterAll(async () => {
  try {
    await s?.close()
    await tdb?.drop()
  } finally {
    await redis?.stop()
  }
})

describe('usage per key', () => {
  it('counts 2xx, 4xx and 429 answers in memory and writes them only when flushed', async () => {
    const { key, secret } = await createApiKey(
      db,
      { userId: alice.id, address: alice.address },
      { name: 'counted', scopes: ['read:status'] },
    )
    const send = (path: string) => get(s.base, path, { credential: secret, ip: uniqueIp() })
    const statuses: number[] = []
    statuses.push((await send('/v1/indexer/status')).status)
    statuses.push((await send('/v1/indexer/status')).status)
    // Lacks read:collections: 403 after the credential's limit counted it.
    statuses.push((await send('/v1/collections')).status)
    statuses.push((await send('/v1/indexer/status')).status)
    statuses.push((await send('/v1/indexer/status')).status)
    expect(statuses).toEqual([200, 200, 403, 429, 429])
    // Not attributed: an unknown key, and no key at all.
    // (The last character changed — to one it is not already.)
    const unknown = `${secret.slice(0, -1)}${secret.endsWith('x') ? 'y' : 'x'}`
    await get(s.base, '/v1/indexer/status', { credential: unknown, ip: uniqueIp() })
    await get(s.base, '/v1/indexer/status', { ip: uniqueIp() })

    // No write per request: nothing in the table before the flush.
    expect(await usageRows(key.id)).toEqual([])
    await s.services.access.usage.flush()
    const rows = await usageRows(key.id)
    expect(rows).toHaveLength(1)
    expect(rows[0]).toMatchObject({
      ok_count: 2,
      client_error_count: 1,
      rate_limited_count: 2,
      server_error_count: 0,
      ip_rate_limited_count: 0,
    })
    expect(rows[0].hour.getTime()).toBe(hourStart(Date.now()))
    expect(await tdb.pool.query('SELECT 1 FROM api_key_usage_hourly')).toHaveProperty('rowCount', 1)

    // The owner sees the series, the totals and the last use.
    await s.services.access.lastUsed.flush()
    const usage = await keys(alice).usage({ id: key.id })
    expect(usage.hours).toHaveLength(168)
    expect(usage.hours.at(-1)).toMatchObject({ ok: 2, client_error: 1, rate_limited: 2, server_error: 0 })
    expect(usage.totals).toEqual({
      ok: 2,
      client_error: 1,
      rate_limited: 2,
      server_error: 0,
      rate_limited_ip: 0,
    })
    expect(Date.parse(usage.last_used_at!)).toBeGreaterThan(Date.now() - 60_000)
  })

  it("counts a key's requests refused by the client IP's limit, apart from its own limit's", async () => {
    // Two requests a minute per client IP; the key's own limit out of the way.
    const tight = await serveApi(tdb.url, {
      REDIS_URL: redis.url,
      TRUST_PROXY: '1',
      RATE_LIMIT_KEY: 'sec=100,min=1000,concurrent=50',
      RATE_LIMIT_IP_KEY: 'sec=2,min=2,concurrent=10',
    })
    try {
      const { key, secret } = await createApiKey(
        db,
        { userId: alice.id, address: alice.address },
        { name: 'behind a busy address', scopes: ['read:status'] },
      )
      const ip = uniqueIp()
      const statuses: number[] = []
      for (let i = 0; i < 4; i++)
        statuses.push((await get(tight.base, '/v1/indexer/status', { credential: secret, ip })).status)
      expect(statuses).toEqual([200, 200, 429, 429])
      // Refused by the same limit, not attributed: an unknown key and no key.
      const unknown = `${secret.slice(0, -1)}${secret.endsWith('x') ? 'y' : 'x'}`
      expect((await get(tight.base, '/v1/indexer/status', { credential: unknown, ip })).status).toBe(429)
      expect((await get(tight.base, '/v1/indexer/status', { ip })).status).toBe(429)
      await tight.services.access.usage.flush()
      expect(await usageRows(key.id)).toMatchObject([
        { ok_count: 2, rate_limited_count: 0, ip_rate_limited_count: 2, client_error_count: 0 },
      ])
      expect(
        await tdb.pool.query('SELECT 1 FROM api_key_usage_hourly WHERE ip_rate_limited_count > 0'),
      ).toHaveProperty('rowCount', 1)
      const usage = await keys(alice).usage({ id: key.id })
      expect(usage.totals).toEqual({
        ok: 2,
        client_error: 0,
        rate_limited: 0,
        server_error: 0,
        rate_limited_ip: 2,
      })
    } finally {
      await tight.close()
    }
  })

  it("answers a request the client IP's limit refuses without asking the database about its key", async () => {
    const tight = await serveApi(tdb.url, {
      REDIS_URL: redis.url,
      TRUST_PROXY: '1',
      RATE_LIMIT_KEY: 'sec=100,min=1000,concurrent=50',
      RATE_LIMIT_IP_KEY: 'sec=1,min=1,concurrent=10',
    })
    // Until the transaction ends, a lookup of any secret waits.
    const locker = await tdb.pool.connect()
    try {
      // A valid key this process has never verified (any well-formed secret would do).
      const { key, secret } = await createApiKey(
        db,
        { userId: alice.id, address: alice.address },
        { name: 'never seen here', scopes: ['read:status'] },
      )
      const ip = uniqueIp()
      expect((await get(tight.base, '/v1/indexer/status', { ip })).status).toBe(401)
      await locker.query('BEGIN')
      await locker.query('LOCK TABLE api_key_secrets IN ACCESS EXCLUSIVE MODE')
      // Refused before its credential: one that asked the database would wait for the lock.
      const refused = await get(tight.base, '/v1/indexer/status', {
        credential: secret,
        ip,
        signal: AbortSignal.timeout(3000),
      })
      expect(refused.status).toBe(429)
      await locker.query('ROLLBACK')
      await tight.services.access.usage.flush()
      expect(await usageRows(key.id)).toEqual([])
    } finally {
      await locker.query('ROLLBACK').catch(() => {})
      locker.release()
      await tight.close()
    }
  })

  it('adds each flush to the hour, and keeps 7 days', async () => {
    const { key } = await createApiKey(db, { userId: alice.id, address: alice.address }, { name: 'window' })
    const id = BigInt(key.id)
    const now = Date.now()
    const counter = new KeyUsageCounter(db, undefined, { flushIntervalMs: 60_000 })
    counter.record(id, 200, now)
    counter.record(id, 500, now)
    counter.record(id, 404, now - 6 * 24 * HOUR)
    counter.record(id, 200, now - 8 * 24 * HOUR)
    await counter.flush(now)
    counter.record(id, 204, now)
    counter.record(id, 304, now)
    await counter.close()

    const usage = await readKeyUsage(db, alice.id, id, now)
    expect(usage.hours).toHaveLength(168)
    expect(usage.hours[0]!.hour).toBe(new Date(hourStart(now) - 167 * HOUR).toISOString())
    expect(usage.hours.at(-1)).toMatchObject({ ok: 3, server_error: 1 })
    expect(usage.totals).toEqual({
      ok: 3,
      client_error: 1,
      rate_limited: 0,
      server_error: 1,
      rate_limited_ip: 0,
    })
    // The 8-day-old hour was pruned from the table, not just left out.
    const hours = (await usageRows(key.id)).map((r) => r.hour.getTime())
    expect(hours).toEqual([hourStart(now - 6 * 24 * HOUR), hourStart(now)])
  })

  it("refuses another user's key as not found, and a bad id as bad input", async () => {
    const { key } = await createApiKey(db, { userId: alice.id, address: alice.address }, { name: 'private' })
    await expect(keys(bob).usage({ id: key.id })).rejects.toSatisfy(
      (e) => e instanceof TRPCError && e.code === 'NOT_FOUND',
    )
    await expect(keys(alice).usage({ id: 'x' })).rejects.toSatisfy(
      (e) => e instanceof TRPCError && e.code === 'BAD_REQUEST',
    )
  })
})
