/**
 * Admission of the portal's tRPC endpoint (docs/portal.md, "Limits"), the
 * handler the /api/trpc route serves, against a real database and the web
 * process's own services: per-IP and per-user rate limits, the batch and body
 * caps, the pool shares it shares with /v1, and a timed-out statement as a
 * retryable 503.
 */
import type { AddressInfo } from 'node:net'
import { createTRPCClient, httpBatchLink } from '@trpc/client'
import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { errorMessage } from '@/components/portal/trpc'
import { parseConfig } from '@/config/env'
import { createLogger } from '@/config/logger'
import { createApiKey, ensureUser } from '@/server/api/portal/keys/api-keys'
import { CLIENT_IP_HEADER } from '@/server/http/client-ip'
import type { SessionUser } from '@/server/portal-auth/session-user'
import { closeWebServices, createWebServices, type Services } from '@/server/services/web-services'
import { createWebServer, type WebServer } from '@/server/web-server'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import { ENDLESS_CHUNK_BYTES, endlessBody } from '@/test/endless-body'
import { asDatabase, get, uniqueIp } from '@/test/serve-api'
import { createPortalHandler, PORTAL_MAX_BATCH, PORTAL_MAX_BODY_BYTES } from './handler'
import type { PortalRouter } from './router'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

let tdb: TestDatabase
let alice: SessionUser
let bob: SessionUser

beforeAll(async () => {
  tdb = await createTestDatabase()
  alice = await ensureUser(asDatabase(tdb), '0x00000000000000000000000000000000000a71ce')
  bob = await ensureUser(asDatabase(tdb), '0x0000000000000000000000000000000000000b0b')
})

afterAll(async () => {
  await tdb?.drop()
})

interface Portal {
  services: Services
  web: WebServer
  base: string
  /** A request to /api/trpc/<path> as `user` (null: signed out) from `ip`. */
  call(path: string, options: { user: SessionUser | null; ip: string; init?: RequestInit }): Promise<Response>
  close(): Promise<void>
}

/** The web process's services on the test database (its own pools and bounds), /v1 served on a port. */
async function startPortal(env: Record<string, string>): Promise<Portal> {
  const config = parseConfig({
    NETWORK: 'devnet',
    LOG_LEVEL: 'silent',
    DATABASE_URL: tdb.url,
    DB_POOL_SIZE: '10',
    TRUST_PROXY: '1',
    RATE_LIMIT_KEY: 'sec=1000,min=100000,concurrent=100',
    ...env,
  } as unknown as NodeJS.ProcessEnv)
  const services = createWebServices(config, { logger: createLogger({ level: 'silent' }) })
  const web = await createWebServer({ services })
  await new Promise<void>((resolve) => web.server.listen(0, '127.0.0.1', resolve))
  let user: SessionUser | null = null
  const handler = createPortalHandler(services, async () => user)
  return {
    services,
    web,
    base: `http://127.0.0.1:${(web.server.address() as AddressInfo).port}`,
    call(path, options) {
      user = options.user
      const headers = new Headers(options.init?.headers)
      headers.set(CLIENT_IP_HEADER, options.ip)
      return handler(new Request(`http://localhost/api/trpc/${path}`, { ...options.init, headers }))
    },
    async close() {
      await web.close()
      await closeWebServices(services)
    },
  }
}

const errorCode = async (res: Response) => ((await res.json()) as { error: { code: string } }).error.code

describe('portal rate limits', () => {
  let p: Portal
  beforeAll(async () => {
    p = await startPortal({ RATE_LIMIT_PORTAL: 'sec=3,min=1000,concurrent=10' })
  })
  afterAll(async () => {
    await p?.close()
  })

  it('limits each signed-in user, and each client address, to the portal profile', async () => {
    const ip = uniqueIp()
    const statuses = []
    for (let i = 0; i < 4; i++) statuses.push((await p.call('keys.list', { user: alice, ip })).status)
    expect(statuses).toEqual([200, 200, 200, 429])
    const refused = await p.call('keys.list', { user: alice, ip: uniqueIp() })
    expect(refused.status).toBe(429)
    expect(refused.headers.get('retry-after')).toMatch(/^[1-9][0-9]*$/)
    expect(await refused.json()).toMatchObject({
      error: { code: 'RATE_LIMITED', message: expect.stringContaining('this account') },
    })
    // Another user from that first address: the address's own limit.
    const sameAddress = await p.call('keys.list', { user: bob, ip })
    expect(sameAddress.status).toBe(429)
    expect(await sameAddress.json()).toMatchObject({
      error: { message: expect.stringContaining('this client address') },
    })
    expect((await p.call('keys.list', { user: bob, ip: uniqueIp() })).status).toBe(200)
    // Signed out, the address still counts.
    const anon = uniqueIp()
    const anonymous = []
    for (let i = 0; i < 4; i++) anonymous.push((await p.call('keys.list', { user: null, ip: anon })).status)
    expect(anonymous).toEqual([401, 401, 401, 429])
  })

  it("shows the refusal's sentence in the portal's own client", async () => {
    const ip = uniqueIp()
    const carol = await ensureUser(asDatabase(tdb), '0x0000000000000000000000000000000000ca201e')
    const client = createTRPCClient<PortalRouter>({
      links: [
        httpBatchLink({
          url: 'http://localhost/api/trpc',
          maxItems: PORTAL_MAX_BATCH,
          fetch: (url, init) =>
            p.call(String(url).slice('http://localhost/api/trpc/'.length), {
              user: carol,
              ip,
              init: init as RequestInit,
            }),
        }),
      ],
    })
    // One request each (a batch counts once): the fourth in the second is refused.
    for (let i = 0; i < 3; i++) await client.keys.list.query()
    const refused = await client.keys.list.query().catch((err: unknown) => err)
    expect(errorMessage(refused)).toMatch(
      /^Rate limit exceeded for this (account|client address): at most 3 requests per second/,
    )
  })

  it(`runs at most ${PORTAL_MAX_BATCH} procedures in one request`, async () => {
    // The previous test spent both users' second.
    await sleep(1100)
    const batch = (n: number) =>
      `${Array(n).fill('keys.list').join(',')}?batch=1&input=${encodeURIComponent(JSON.stringify({}))}`
    expect((await p.call(batch(PORTAL_MAX_BATCH), { user: bob, ip: uniqueIp() })).status).toBe(200)
    const tooMany = await p.call(batch(200), { user: alice, ip: uniqueIp() })
    expect(tooMany.status).toBe(400)
    expect(await tooMany.text()).toMatch(/batch/i)
  })

  it(`refuses a body over ${PORTAL_MAX_BODY_BYTES} bytes with 413, reading no more than that`, async () => {
    const big = JSON.stringify({ 0: { name: 'x'.repeat(1024 * 1024) } })
    const declared = await p.call('keys.create?batch=1', {
      user: bob,
      ip: uniqueIp(),
      init: { method: 'POST', body: big, headers: { 'Content-Type': 'application/json' } },
    })
    expect(declared.status).toBe(413)
    expect(await errorCode(declared)).toBe('PAYLOAD_TOO_LARGE')

    // Chunked, with no Content-Length: the read stops past the cap.
    const { stream, pulled } = endlessBody(0x20)
    const chunked = await p.call('keys.create?batch=1', {
      user: bob,
      ip: uniqueIp(),
      init: {
        method: 'POST',
        body: stream,
        headers: { 'Content-Type': 'application/json' },
        duplex: 'half',
      } as RequestInit,
    })
    expect(chunked.status).toBe(413)
    expect(pulled()).toBeLessThan(PORTAL_MAX_BODY_BYTES + 4 * ENDLESS_CHUNK_BYTES)
  })
})

describe('portal database work', () => {
  let p: Portal
  beforeAll(async () => {
    p = await startPortal({ RATE_LIMIT_PORTAL: 'sec=1000,min=100000,concurrent=100' })
  })
  afterAll(async () => {
    await p?.close()
  })

  async function lockAuditEvents(): Promise<pg.PoolClient> {
    const client = await tdb.pool.connect()
    await client.query('BEGIN')
    await client.query('LOCK TABLE audit_events IN ACCESS EXCLUSIVE MODE')
    return client
  }

  it("holds one session's procedures to half the pool, so /v1 clients are served at once", async () => {
    const ip = uniqueIp()
    const { secret } = await createApiKey(
      asDatabase(tdb),
      { userId: bob.id, address: bob.address },
      { name: 'v1' },
    )
    const lock = await lockAuditEvents()
    let stuck: Promise<Response>[] = []
    try {
      stuck = Array.from({ length: 12 }, () => p.call('keys.auditEvents', { user: alice, ip }))
      const deadline = Date.now() + 10_000
      while (Date.now() < deadline) {
        const load = p.services.poolShares.load(`ip:${ip}`)
        if (load.running + load.waiting === 12) break
        await sleep(20)
      }
      // Five run (the address's share, the user's too), seven wait in the address's queue: not the pool's.
      expect(p.services.poolShares.load(`ip:${ip}`)).toEqual({ running: 5, waiting: 7 })
      expect(p.services.poolShares.load(`user:${alice.id}`)).toEqual({ running: 5, waiting: 0 })
      const started = performance.now()
      const v1 = await get(p.base, '/v1/collections', {
        credential: secret,
        ip: uniqueIp(),
        signal: AbortSignal.timeout(5000),
      })
      expect(v1.status).toBe(200)
      expect(performance.now() - started).toBeLessThan(2000)
    } finally {
      await lock.query('COMMIT')
      lock.release()
    }
    const statuses = await Promise.all(stuck.map((r) => r.then((x) => x.status)))
    expect(statuses).toEqual(Array(12).fill(200))
    expect(p.services.poolShares.load(`user:${alice.id}`)).toEqual({ running: 0, waiting: 0 })
  })
})

describe('a portal statement past DB_STATEMENT_TIMEOUT_MS', () => {
  it('answers 503 SERVICE_UNAVAILABLE, which a client may retry, not 500', async () => {
    const p = await startPortal({ DB_STATEMENT_TIMEOUT_MS: '200' })
    const lock = await tdb.pool.connect()
    try {
      await lock.query('BEGIN')
      await lock.query('LOCK TABLE audit_events IN ACCESS EXCLUSIVE MODE')
      const res = await p.call('keys.auditEvents', { user: alice, ip: uniqueIp() })
      expect(res.status).toBe(503)
      expect(await res.json()).toMatchObject({ error: { data: { code: 'SERVICE_UNAVAILABLE' } } })
    } finally {
      await lock.query('ROLLBACK')
      lock.release()
      await p.close()
    }
  })
})
