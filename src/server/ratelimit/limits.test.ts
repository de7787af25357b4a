/**
 * Rate limits over HTTP with a real Redis (a private redis-server) and
 * PostgreSQL: the boundaries of every window and of the concurrency slots,
 * per credential and per client IP (IPv6 per /64), the headers, "a refused
 * request consumes nothing", slots freed by finished and abandoned requests,
 * and failing closed while Redis is down.
 */
import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseConfig } from '@/config/env'
import type { Database } from '@/db/database'
import { routeTable } from '@/server/api/internals/routes'
import { createApiKey, ensureUser } from '@/server/api/portal/keys/api-keys'
import { SNAPSHOT_TTL_MS } from '@/server/api/read/indexer-snapshot'
import { v1Router } from '@/server/api/v1/router'
import { issueDemoToken } from '@/server/credentials/demo-tokens'
import { createTestDatabase, isEmbeddedTestDatabase, type TestDatabase } from '@/test/db'
import { startTestRedis, type TestRedis } from '@/test/redis-server'
import { asDatabase, get, serveApi, type TestWeb, uniqueIp } from '@/test/serve-api'
import { policiesFromConfig } from './policy'
import { RedisLimitStore } from './redis-store'

const STATUS = '/v1/indexer/status'
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

let tdb: TestDatabase
let db: Database
let redis: TestRedis
let user: { id: bigint; address: string }

async function keySecret(): Promise<string> {
  return (await createApiKey(db, { userId: user.id, address: user.address }, { name: 'limits' })).secret
}

async function demoToken(): Promise<string> {
  return (await issueDemoToken(db, { clientIp: '10.0.0.1' })).token
}

let disturbed = false

/**
 * Fires all at once; returns the responses in order of sending. A burst that
 * takes most of a second (a machine loaded by other tests) cannot test a
 * one-second window: it marks the scenario as disturbed (see undisturbed()).
 */
async function burst(n: number, send: (i: number) => Promise<Response>): Promise<Response[]> {
  const started = performance.now()
  const responses = await Promise.all(Array.from({ length: n }, (_, i) => send(i)))
  // Read every body (freeing the sockets) but keep it readable for the test.
  await Promise.all(responses.map((r) => r.clone().arrayBuffer()))
  if (performance.now() - started > 800) disturbed = true
  return responses
}

/** Runs a timing-sensitive scenario (fresh keys and addresses each time) until no burst of it was disturbed; at most 5 times. */
async function undisturbed<T>(scenario: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    disturbed = false
    const result = await scenario()
    if (!disturbed || attempt === 5) return result
  }
}

const count = (responses: Response[], status: number) => responses.filter((r) => r.status === status).length

/** Holds every read of indexer_state until released: requests stay in flight. */
async function holdIndexerState(pool: pg.Pool): Promise<() => Promise<void>> {
  const client = await pool.connect()
  await client.query('BEGIN')
  await client.query('LOCK TABLE indexer_state IN ACCESS EXCLUSIVE MODE')
  // Servers reuse an indexer_state snapshot for SNAPSHOT_TTL_MS; once it has
  // expired, every request has to read the locked table and stays in flight.
  await new Promise((r) => setTimeout(r, SNAPSHOT_TTL_MS + 100))
  return async () => {
    await client.query('COMMIT')
    client.release()
  }
}

beforeAll(async () => {
  tdb = await createTestDatabase({ poolSize: 10 })
  db = asDatabase(tdb)
  redis = await startTestRedis()
  user = await ensureUser(db, '0x000000000000000000000000000000000000beef')
})

afterAll(async () => {
  // The private redis-server is stopped whatever else fails.
  try {
    await tdb?.drop()
  } finally {
    await redis?.stop()
  }
})

describe('the specification numbers', () => {
  let s: TestWeb
  beforeAll(async () => {
    s = await serveApi(tdb.url, { REDIS_URL: redis.url, TRUST_PROXY: '1' })
  })
  afterAll(async () => s?.close())

  it('lets exactly 5 requests of a portal key pass in a second; the 6th gets 429 with its headers', async () => {
    // Each from its own address: only the key's limit is in play.
    const { secret, responses } = await undisturbed(async () => {
      const secret = await keySecret()
      return {
        secret,
        responses: await burst(6, () => get(s.base, STATUS, { credential: secret, ip: uniqueIp() })),
      }
    })
    expect(count(responses, 200)).toBe(5)
    expect(count(responses, 429)).toBe(1)
    const refused = responses.find((r) => r.status === 429)!
    expect(refused.headers.get('retry-after')).toBe('1')
    expect(refused.headers.get('ratelimit-reset')).toBe('1')
    expect(refused.headers.get('ratelimit-policy')).toBe('"sec";q=5;w=1, "min";q=300;w=60')
    expect(refused.headers.get('ratelimit')).toBe('"sec";r=0;t=1')
    for (const ok of responses.filter((r) => r.status === 200)) {
      expect(ok.headers.get('ratelimit-policy')).toBe('"sec";q=5;w=1, "min";q=300;w=60')
      expect(ok.headers.get('ratelimit')).toMatch(/^"sec";r=[0-4];t=1$/)
      expect(ok.headers.get('retry-after')).toBeNull()
    }
    // After Retry-After the key passes again.
    await sleep(1000)
    expect((await get(s.base, STATUS, { credential: secret, ip: uniqueIp() })).status).toBe(200)
  })

  it('limits a client address to 5 per second across keys', async () => {
    const [first, second] = await undisturbed(async () => {
      const [a, b] = [await keySecret(), await keySecret()]
      const ip = uniqueIp()
      return burst(6, (i) => get(s.base, STATUS, { credential: i < 3 ? a : b, ip })).then((r) => [
        r.slice(0, 3),
        r.slice(3),
      ])
    })
    expect(count([...first, ...second], 200)).toBe(5)
    const refused = [...first, ...second].find((r) => r.status === 429)!
    expect((await refused.json()).error.message).toMatch(/client address/)
  })

  it('limits IPv6 clients per /64', async () => {
    const secret = await keySecret()
    let subnet = 0
    const responses = await undisturbed(() => {
      const net = `2001:db8:${(process.pid & 0xfff).toString(16)}:${++subnet}`
      return burst(6, (i) =>
        get(s.base, STATUS, { credential: i % 2 ? secret : undefined, ip: `${net}::${i + 1}` }),
      )
    })
    // Keyless requests get 401, but count against the address like any other.
    expect(count(responses, 429)).toBe(1)
    expect((await get(s.base, STATUS, { credential: secret, ip: `2001:db8:ffff:2::1` })).status).toBe(200)
  })

  it('lets a demo token make 1 request per second', async () => {
    const responses = await undisturbed(async () => {
      const token = await demoToken()
      return burst(2, () => get(s.base, STATUS, { credential: token, ip: uniqueIp() }))
    })
    const first = responses.find((r) => r.status === 200)!
    expect(first.headers.get('ratelimit-policy')).toBe('"sec";q=1;w=1, "min";q=30;w=60')
    const second = responses.find((r) => r.status === 429)!
    expect(second.headers.get('retry-after')).toBe('1')
    expect(second.headers.get('ratelimit')).toBe('"sec";r=0;t=1')
  })

  it('issues demo tokens with the demo limits', async () => {
    const res = await fetch(`${s.base}/v1/demo-token`, {
      method: 'POST',
      headers: { 'X-Forwarded-For': uniqueIp() },
    })
    expect((await res.json()).data.limits).toEqual({
      requests_per_second: 1,
      requests_per_minute: 30,
      concurrent: 2,
    })
  })
})

// Requests are held in flight by a table lock that other connections wait on; the
// embedded single-session database would stall every connection instead, so this
// suite needs a server PostgreSQL (DATABASE_URL, as in CI).
describe.skipIf(isEmbeddedTestDatabase())(
  'minute windows and concurrency (per-second limits raised to isolate them)',
  () => {
    let s: TestWeb
    beforeAll(async () => {
      s = await serveApi(tdb.url, {
        REDIS_URL: redis.url,
        TRUST_PROXY: '1',
        RATE_LIMIT_KEY: 'sec=10000,min=300,concurrent=10',
        RATE_LIMIT_DEMO: 'sec=10000,min=30,concurrent=2',
      })
    })
    afterAll(async () => s?.close())

    it('lets exactly 300 requests of a portal key pass in a minute; the 301st gets 429', async () => {
      const secret = await keySecret()
      const started = Date.now()
      let passed = 0
      for (let batch = 0; batch < 30; batch++) {
        const responses = await burst(10, () => get(s.base, STATUS, { credential: secret, ip: uniqueIp() }))
        passed += count(responses, 200)
      }
      expect(passed).toBe(300)
      const refused = await get(s.base, STATUS, { credential: secret, ip: uniqueIp() })
      expect(refused.status).toBe(429)
      // Until the first of the 300 leaves the window.
      const retry = Number(refused.headers.get('retry-after'))
      expect(retry).toBeGreaterThanOrEqual(60 - Math.ceil((Date.now() - started) / 1000) - 1)
      expect(retry).toBeLessThanOrEqual(60)
      expect(refused.headers.get('ratelimit-reset')).toBe(String(retry))
      expect(refused.headers.get('ratelimit')).toBe(`"min";r=0;t=${retry}`)
    })

    it('lets exactly 30 requests of a demo token pass in a minute; the 31st gets 429', async () => {
      const token = await demoToken()
      let passed = 0
      for (let batch = 0; batch < 15; batch++) {
        passed += count(await burst(2, () => get(s.base, STATUS, { credential: token, ip: uniqueIp() })), 200)
      }
      expect(passed).toBe(30)
      const refused = await get(s.base, STATUS, { credential: token, ip: uniqueIp() })
      expect(refused.status).toBe(429)
      expect(refused.headers.get('ratelimit')).toMatch(/^"min";r=0;t=\d+$/)
    })

    it('lets 10 requests of a key run at once, refuses the 11th, and frees a slot when a request ends — not before, even if its client leaves', async () => {
      const secret = await keySecret()
      const release = await holdIndexerState(tdb.pool)
      try {
        const aborts = Array.from({ length: 10 }, () => new AbortController())
        const held = aborts.map((a) =>
          get(s.base, STATUS, { credential: secret, ip: uniqueIp(), signal: a.signal }).catch(
            (e: Error) => e,
          ),
        )
        await sleep(500)
        const eleventh = await get(s.base, STATUS, { credential: secret, ip: uniqueIp() })
        expect(eleventh.status).toBe(429)
        expect(eleventh.headers.get('retry-after')).toBe('1')
        expect((await eleventh.json()).error.message).toMatch(/concurrent/)

        // A client disconnects mid-request: its query still waits for the lock, so
        // its slot stays taken (leaving cannot make room for more queries of the key).
        aborts[0]!.abort()
        await sleep(300)
        expect((await get(s.base, STATUS, { credential: secret, ip: uniqueIp() })).status).toBe(429)

        await release()
        const done = await Promise.all(held.slice(1))
        expect(done.map((r) => (r instanceof Response ? r.status : 'error'))).toEqual(Array(9).fill(200))
        expect(await held[0]).toBeInstanceOf(Error)
      } finally {
        await release().catch(() => {})
      }
      // Finished and abandoned requests gave their slots back: 10 at once pass again.
      const again = await burst(10, () => get(s.base, STATUS, { credential: secret, ip: uniqueIp() }))
      expect(count(again, 200)).toBe(10)
    })

    it('lets 2 requests of a demo token run at once and refuses the 3rd', async () => {
      const token = await demoToken()
      const release = await holdIndexerState(tdb.pool)
      try {
        const held = [0, 1].map(() => get(s.base, STATUS, { credential: token, ip: uniqueIp() }))
        await sleep(400)
        expect((await get(s.base, STATUS, { credential: token, ip: uniqueIp() })).status).toBe(429)
        await release()
        expect((await Promise.all(held)).map((r) => r.status)).toEqual([200, 200])
      } finally {
        await release().catch(() => {})
      }
      expect((await get(s.base, STATUS, { credential: token, ip: uniqueIp() })).status).toBe(200)
    })
  },
)

describe('a refused request consumes nothing', () => {
  let s: TestWeb
  beforeAll(async () => {
    s = await serveApi(tdb.url, {
      REDIS_URL: redis.url,
      TRUST_PROXY: '1',
      RATE_LIMIT_KEY: 'sec=5,min=12,concurrent=100',
      RATE_LIMIT_IP_KEY: 'sec=8,min=1000,concurrent=100',
    })
  })
  afterAll(async () => s?.close())

  it('requests refused by the per-second window do not count against the minute', async () => {
    const passed = await undisturbed(async () => {
      const secret = await keySecret()
      const passed: number[] = []
      for (let round = 0; round < 3; round++) {
        if (round > 0) await sleep(1050)
        passed.push(
          count(await burst(20, () => get(s.base, STATUS, { credential: secret, ip: uniqueIp() })), 200),
        )
      }
      return passed
    })
    // 60 sent, 45 refused: had they counted, the minute's 12 would be gone after the first burst.
    expect(passed).toEqual([5, 5, 2])
  })

  it("requests refused by the key's limit give the client address its share back", async () => {
    const [first, second] = await undisturbed(async () => {
      const [a, b] = [await keySecret(), await keySecret()]
      const ip = uniqueIp()
      const started = performance.now()
      const first = await burst(10, () => get(s.base, STATUS, { credential: a, ip }))
      const second = await burst(10, () => get(s.base, STATUS, { credential: b, ip }))
      if (performance.now() - started > 800) disturbed = true
      return [count(first, 200), count(second, 200)]
    })
    expect(first).toBe(5)
    // The address allows 8 per second and only 5 were served.
    expect(second).toBe(3)
  })
})

describe('the in-process store (no REDIS_URL)', () => {
  it('holds the same limits in one process', async () => {
    const s = await serveApi(tdb.url, { TRUST_PROXY: '1' })
    try {
      const responses = await undisturbed(async () => {
        const secret = await keySecret()
        return burst(6, () => get(s.base, STATUS, { credential: secret, ip: uniqueIp() }))
      })
      expect(count(responses, 200)).toBe(5)
      const refused = responses.find((r) => r.status === 429)!
      expect(refused.headers.get('ratelimit-policy')).toBe('"sec";q=5;w=1, "min";q=300;w=60')
      expect(refused.headers.get('retry-after')).toBe('1')
    } finally {
      await s.close()
    }
  })
})

describe('leases', () => {
  it("a crashed process's concurrency slots expire", async () => {
    const store = new RedisLimitStore({
      url: redis.url,
      prefix: `lease-test-${process.pid}:`,
      commandTimeoutMs: 500,
    })
    await store.ready(2000)
    try {
      const policy = { id: 'x', windows: [], concurrent: 1 }
      expect((await store.acquire(policy, 's', 'crashed', 1000)).allowed).toBe(true)
      // Never released (the process "crashed").
      expect((await store.acquire(policy, 's', 'other', 1000)).allowed).toBe(false)
      await sleep(1100)
      expect((await store.acquire(policy, 's', 'other', 1000)).allowed).toBe(true)
    } finally {
      await store.close()
    }
  })

  it('policies follow the configuration', () => {
    const p = policiesFromConfig(parseConfig({} as unknown as NodeJS.ProcessEnv))
    expect(p.key).toEqual({
      id: 'k',
      windows: [
        { name: 'sec', limit: 5, windowMs: 1000 },
        { name: 'min', limit: 300, windowMs: 60_000 },
      ],
      concurrent: 10,
    })
    expect(p.demo.concurrent).toBe(2)
    expect(p.demoIssue.windows).toEqual([{ name: 'min', limit: 5, windowMs: 60_000 }])
    expect(p.ipKey).toEqual({ ...p.key, id: 'ik' })
  })
})

describe('Redis unavailable', () => {
  it('fails closed with 503 RATE_LIMITER_UNAVAILABLE on every endpoint and recovers when Redis returns', async () => {
    const s = await serveApi(tdb.url, {
      REDIS_URL: redis.url,
      TRUST_PROXY: '1',
      RATE_LIMIT_TIMEOUT_MS: '200',
    })
    try {
      const secret = await keySecret()
      const token = await demoToken()
      const paths = routeTable(v1Router)
        .filter((r) => r.method === 'GET' && r.meta.scope)
        .map((r) =>
          r.path.replace('{address}', '0x00000000000000000000000000000000000000aa').replace('{tokenId}', '1'),
        )
      expect(paths).toContain(STATUS)
      expect((await get(s.base, STATUS, { credential: secret, ip: uniqueIp() })).status).toBe(200)

      await redis.stop()
      const started = Date.now()
      const outcomes: string[] = []
      for (const path of paths) {
        for (const credential of [secret, token]) {
          for (const method of ['GET', 'HEAD']) {
            const res = await fetch(`${s.base}${path}`, {
              method,
              headers: { Authorization: `Bearer ${credential}`, 'X-Forwarded-For': uniqueIp() },
            })
            outcomes.push(`${method} ${path} ${res.status}`)
            expect(res.status, `${method} ${path}`).toBe(503)
            expect(res.headers.get('retry-after')).toBe('1')
            if (method === 'GET') expect((await res.json()).error.code).toBe('RATE_LIMITER_UNAVAILABLE')
          }
        }
      }
      const issue = await fetch(`${s.base}/v1/demo-token`, {
        method: 'POST',
        headers: { 'X-Forwarded-For': uniqueIp() },
      })
      expect(issue.status).toBe(503)
      expect((await issue.json()).error.code).toBe('RATE_LIMITER_UNAVAILABLE')
      expect((await get(s.base, STATUS, { ip: uniqueIp() })).status).toBe(503)
      // Fast refusals: no queueing while Redis is away.
      expect((Date.now() - started) / (outcomes.length + 2)).toBeLessThan(250)

      await redis.start()
      let status = 0
      const deadline = Date.now() + 10_000
      while (Date.now() < deadline) {
        status = (await get(s.base, STATUS, { credential: secret, ip: uniqueIp() })).status
        if (status === 200) break
        expect(status).toBe(503)
        await sleep(100)
      }
      expect(status).toBe(200)
    } finally {
      await redis.start().catch(() => {})
      await s.close()
    }
  })
})
