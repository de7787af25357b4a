/**
 * Admission before waiting (docs/auth.md): while API queries are stuck behind
 * a held table lock, a key at its concurrency limit is refused at once, other
 * clients are served at once and a new credential is verified at once.
 * Credential checks run on a pool of their own, and one subject never holds
 * more than half of the API pool; the rest of its requests wait in its own queue.
 */
import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Database } from '@/db/database'
import { createApiKey, ensureUser } from '@/server/api/portal/keys/api-keys'
import { PoolShares } from '@/server/ratelimit/pool-shares'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import { startTestRedis, type TestRedis } from '@/test/redis-server'
import { asDatabase, get, serveApi, type TestWeb, uniqueIp } from '@/test/serve-api'

const STATUS = '/v1/indexer/status'
/** Reads the tokens table, which the test locks. */
const OWNER_NFTS = '/v1/owners/0x00000000000000000000000000000000000000a1/nfts'
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

async function timed(request: Promise<Response>): Promise<{ status: number; ms: number }> {
  const started = performance.now()
  const res = await request
  await res.arrayBuffer()
  return { status: res.status, ms: performance.now() - started }
}

describe('PoolShares', () => {
  it('runs at most `share` requests of a subject; the next waits for one to leave; subjects are independent', async () => {
    const shares = new PoolShares(2)
    expect(shares.enter('a')).toBeUndefined()
    expect(shares.enter('a')).toBeUndefined()
    let third = false
    void shares.enter('a')!.then(() => {
      third = true
    })
    expect(shares.enter('b')).toBeUndefined()
    expect(shares.load('a')).toEqual({ running: 2, waiting: 1 })
    await sleep(5)
    expect(third).toBe(false)
    shares.leave('a')
    await sleep(0)
    expect(third).toBe(true)
    expect(shares.load('a')).toEqual({ running: 2, waiting: 0 })
    shares.leave('a')
    shares.leave('a')
    shares.leave('b')
    expect(shares.load('a')).toEqual({ running: 0, waiting: 0 })
    expect(shares.load('b')).toEqual({ running: 0, waiting: 0 })
  })

  it('gives the place back when the work fails', async () => {
    const shares = new PoolShares(1)
    await expect(shares.run(['a'], () => Promise.reject(new Error('query failed')))).rejects.toThrow(
      'query failed',
    )
    expect(shares.load('a')).toEqual({ running: 0, waiting: 0 })
    await expect(shares.run(['a'], async () => 7)).resolves.toBe(7)
  })
})

describe('admission with queries stuck behind a table lock', () => {
  let tdb: TestDatabase
  let db: Database
  let redis: TestRedis
  let s: TestWeb
  let user: { id: bigint; address: string }

  const newKey = async () => {
    const { key, secret } = await createApiKey(
      db,
      { userId: user.id, address: user.address },
      { name: 'admission' },
    )
    return { subject: `key:${key.id}`, secret }
  }

  beforeAll(async () => {
    tdb = await createTestDatabase({ poolSize: 4 })
    db = asDatabase(tdb)
    redis = await startTestRedis()
    user = await ensureUser(db, '0x000000000000000000000000000000000000ad31')
    s = await serveApi(tdb.url, {
      REDIS_URL: redis.url,
      TRUST_PROXY: '1',
      // The pool of the report: as many connections as one key's concurrent requests.
      DB_POOL_SIZE: '10',
      CREDENTIAL_CACHE_MS: '500',
      RATE_LIMIT_KEY: 'sec=1000,min=100000,concurrent=10',
      RATE_LIMIT_IP_KEY: 'sec=1000,min=100000,concurrent=100',
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

  async function lockTokens(): Promise<pg.PoolClient> {
    const client = await tdb.pool.connect()
    await client.query('BEGIN')
    await client.query('LOCK TABLE tokens IN ACCESS EXCLUSIVE MODE')
    return client
  }

  it('refuses the 11th request of a key at once, and serves other keys at once, while the first 10 wait', async () => {
    const busy = await newKey()
    const other = await newKey()
    const fresh = await newKey()
    // The other key is known to this process before the lock; the fresh one is not.
    expect((await get(s.base, STATUS, { credential: other.secret, ip: uniqueIp() })).status).toBe(200)

    const lock = await lockTokens()
    let stuck: Promise<Response>[] = []
    try {
      stuck = Array.from({ length: 10 }, () =>
        get(s.base, OWNER_NFTS, { credential: busy.secret, ip: uniqueIp() }),
      )
      // All ten admitted: half the pool runs their queries, the other half waits in the key's own queue.
      const deadline = Date.now() + 10_000
      while (Date.now() < deadline) {
        const load = s.services.poolShares.load(busy.subject)
        if (load.running + load.waiting === 10) break
        await sleep(20)
      }
      expect(s.services.poolShares.load(busy.subject)).toEqual({ running: 5, waiting: 5 })
      // Every cached credential has expired: the next checks must reach the database.
      await sleep(600)

      const eleventh = await timed(get(s.base, OWNER_NFTS, { credential: busy.secret, ip: uniqueIp() }))
      const otherKey = await timed(get(s.base, STATUS, { credential: other.secret, ip: uniqueIp() }))
      const freshKey = await timed(get(s.base, STATUS, { credential: fresh.secret, ip: uniqueIp() }))
      expect(eleventh.status).toBe(429)
      expect(otherKey.status).toBe(200)
      expect(freshKey.status).toBe(200)
      // "At once": the lock is held for seconds more; generous bounds for a loaded machine.
      expect(eleventh.ms).toBeLessThan(2000)
      expect(otherKey.ms).toBeLessThan(2000)
      expect(freshKey.ms).toBeLessThan(2000)
      // The ten are still waiting for the lock.
      expect(s.services.poolShares.load(busy.subject)).toEqual({ running: 5, waiting: 5 })
    } finally {
      await lock.query('COMMIT')
      lock.release()
    }
    const statuses = await Promise.all(stuck.map((p) => p.then((r) => r.status)))
    expect(statuses).toEqual(Array(10).fill(200))
    expect(s.services.poolShares.load(busy.subject)).toEqual({ running: 0, waiting: 0 })
  })

  it('lets one client address hold at most half the pool across its keys; another client is served at once', async () => {
    const first = await newKey()
    const second = await newKey()
    const other = await newKey()
    const ip = uniqueIp()
    const lock = await lockTokens()
    let stuck: Promise<Response>[] = []
    try {
      stuck = [first, second, first, second, first, second, first, second, first, second].map((k) =>
        get(s.base, OWNER_NFTS, { credential: k.secret, ip }),
      )
      const deadline = Date.now() + 10_000
      while (Date.now() < deadline) {
        const load = s.services.poolShares.load(`ip:${ip}`)
        if (load.running + load.waiting === 10) break
        await sleep(20)
      }
      // Five per key would be all ten connections; the address's share is five.
      expect(s.services.poolShares.load(`ip:${ip}`)).toEqual({ running: 5, waiting: 5 })
      const otherClient = await timed(
        get(s.base, '/v1/collections', {
          credential: other.secret,
          ip: uniqueIp(),
          signal: AbortSignal.timeout(5000),
        }),
      )
      expect(otherClient.status).toBe(200)
      expect(otherClient.ms).toBeLessThan(2000)
    } finally {
      await lock.query('COMMIT')
      lock.release()
    }
    const statuses = await Promise.all(stuck.map((p) => p.then((r) => r.status)))
    expect(statuses).toEqual(Array(10).fill(200))
    expect(s.services.poolShares.load(`ip:${ip}`)).toEqual({ running: 0, waiting: 0 })
  })

  it('never admits more overlapping requests of one key than its concurrency limit', async () => {
    const busy = await newKey()
    const lock = await lockTokens()
    let responses: Response[]
    try {
      const pending = Array.from({ length: 25 }, () =>
        get(s.base, OWNER_NFTS, { credential: busy.secret, ip: uniqueIp() }),
      )
      // The refusals come back while the admitted requests are held by the lock.
      await sleep(1500)
      const load = s.services.poolShares.load(busy.subject)
      expect(load.running + load.waiting).toBe(10)
      await lock.query('COMMIT')
      responses = await Promise.all(pending)
    } finally {
      await lock.query('ROLLBACK').catch(() => {})
      lock.release()
    }
    expect(responses.filter((r) => r.status === 200)).toHaveLength(10)
    expect(responses.filter((r) => r.status === 429)).toHaveLength(15)
  })
})
