/**
 * Refreshes asked for in the portal (docs/portal.md, "Token view"), through
 * the /api/trpc handler against real PostgreSQL and a private Redis: accepted
 * requests become a pending row for the indexer, a NOTIFY and an audit event;
 * the per-target window (across users) and the per-user hourly limit answer
 * 429 with Retry-After (header and body) and cost nothing; unknown targets
 * are 404, malformed input 400, signed out 401; /v1 has no mutating route.
 */
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseConfig } from '@/config/env'
import { createLogger } from '@/config/logger'
import { writeTransfers } from '@/indexer/store'
import { routeTable } from '@/server/api/internals/routes'
import { createPortalHandler } from '@/server/api/portal/handler'
import { ensureUser } from '@/server/api/portal/keys/api-keys'
import { REFRESH_LIMITS } from '@/server/api/portal/refresh/refresh'
import { portalRouter } from '@/server/api/portal/router'
import { v1Router } from '@/server/api/v1/router'
import { CLIENT_IP_HEADER } from '@/server/http/client-ip'
import type { SessionUser } from '@/server/portal-auth/session-user'
import { closeWebServices, createWebServices, type Services } from '@/server/services/web-services'
import { createTestDatabase, isEmbeddedTestDatabase, type TestDatabase } from '@/test/db'
import { startTestRedis, type TestRedis } from '@/test/redis-server'
import { asDatabase, uniqueIp } from '@/test/serve-api'

const A = '0x00000000000000000000000000000000000000a1'
const B = '0x00000000000000000000000000000000000000b2'
const UNKNOWN = '0x00000000000000000000000000000000000000c3'
const OWNER = '0x0000000000000000000000000000000000000011'

let tdb: TestDatabase
let redis: TestRedis
let services: Services
let alice: SessionUser
let bob: SessionUser
let carol: SessionUser
let listener: pg.Client
const notifications: string[] = []
let user: SessionUser | null = null
let handler: ReturnType<typeof createPortalHandler>

beforeAll(async () => {
  tdb = await createTestDatabase()
  redis = await startTestRedis()
  const db = asDatabase(tdb)
  alice = await ensureUser(db, '0x00000000000000000000000000000000000a71ce')
  bob = await ensureUser(db, '0x0000000000000000000000000000000000000b0b')
  carol = await ensureUser(db, '0x0000000000000000000000000000000000ca201e')
  // 40 tokens of A, one of B.
  await writeTransfers(tdb.pool, [
    ...Array.from({ length: 40 }, (_, i) => ({
      collection: A,
      tokenId: BigInt(i + 1),
      from: '0x0000000000000000000000000000000000000000',
      to: OWNER,
      blockNumber: 10,
      blockTimestamp: 1_700_000_000,
      transactionHash: `0x${'a'.repeat(62)}${(i + 1).toString(16).padStart(2, '0')}`,
      logIndex: 0,
    })),
    {
      collection: B,
      tokenId: 7n,
      from: '0x0000000000000000000000000000000000000000',
      to: OWNER,
      blockNumber: 11,
      blockTimestamp: 1_700_000_012,
      transactionHash: `0x${'b'.repeat(64)}`,
      logIndex: 0,
    },
  ])
  const config = parseConfig({
    NETWORK: 'devnet',
    LOG_LEVEL: 'silent',
    DATABASE_URL: tdb.url,
    REDIS_URL: redis.url,
    TRUST_PROXY: '1',
    RATE_LIMIT_PORTAL: 'sec=1000,min=100000,concurrent=100',
  } as unknown as NodeJS.ProcessEnv)
  services = createWebServices(config, { logger: createLogger({ level: 'silent' }) })
  await services.access.ready(5000)
  handler = createPortalHandler(services, async () => user)
  listener = new pg.Client({ connectionString: tdb.url })
  await listener.connect()
  listener.on('notification', (m) => notifications.push(m.channel))
  await listener.query('LISTEN metadata_refresh')
})

afterAll(async () => {
  try {
    await listener?.end()
    if (services) await closeWebServices(services)
    await tdb?.drop()
  } finally {
    await redis?.stop()
  }
})

interface Answer {
  status: number
  retryAfter: string | null
  body: {
    result?: { data: Record<string, unknown> }
    error?: { message: string; data: { code: string; httpStatus: number; retryAfter?: number } }
  }
}

async function mutate(as: SessionUser | null, path: string, input: unknown): Promise<Answer> {
  user = as
  const res = await handler(
    new Request(`http://localhost/api/trpc/${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        [CLIENT_IP_HEADER]: uniqueIp(),
        'user-agent': 'refresh-test/1',
      },
      body: JSON.stringify(input),
    }),
  )
  return {
    status: res.status,
    retryAfter: res.headers.get('retry-after'),
    body: (await res.json()) as Answer['body'],
  }
}

const refreshToken = (as: SessionUser | null, address: string, tokenId: string) =>
  mutate(as, 'refresh.token', { address, token_id: tokenId })
const refreshCollection = (as: SessionUser | null, address: string) =>
  mutate(as, 'refresh.collection', { address })

async function requestRow(collection: string, tokenId: string) {
  const { rows } = await tdb.pool.query<{ requested_by: string; applied_at: Date | null }>(
    `SELECT requested_by::text, applied_at FROM metadata_refresh_requests
      WHERE collection_address = $1 AND token_id = $2`,
    [collection, tokenId],
  )
  return rows[0]
}

async function auditOf(u: SessionUser, action: string) {
  const caller = portalRouter.createCaller({
    db: asDatabase(tdb),
    credentials: { clear() {} },
    clientIp: '198.51.100.1',
    userAgent: null,
    user: u,
  })
  return (await caller.keys.auditEvents({ limit: 50, action: action as never })).items
}

const waitFor = async (check: () => boolean, ms = 2000) => {
  const end = Date.now() + ms
  while (!check() && Date.now() < end) await new Promise((r) => setTimeout(r, 20))
  return check()
}

describe('refresh.token', () => {
  it('accepts a refresh: a pending request for the indexer, a notification and an audit event', async () => {
    const before = notifications.length
    const res = await refreshToken(alice, A.toUpperCase().replace('0X', '0x'), '1')
    expect(res.status).toBe(200)
    expect(res.body.result?.data).toMatchObject({
      status: 'accepted',
      target: 'token',
      collection_address: A,
      token_id: '1',
    })
    const data = res.body.result!.data as { requested_at: string; next_allowed_at: string }
    expect(Date.parse(data.next_allowed_at) - Date.parse(data.requested_at)).toBe(
      REFRESH_LIMITS.tokenWindowMs,
    )
    expect(await requestRow(A, '1')).toEqual({ requested_by: alice.id.toString(), applied_at: null })
    // The embedded server (PGlite) accepts LISTEN but delivers no notification to another
    // connection: there the indexer's poll picks requests up (docs/metadata.md, "Refresh requests").
    expect(await waitFor(() => notifications.length > before)).toBe(!isEmbeddedTestDatabase())
    const events = await auditOf(alice, 'token_refresh_requested')
    expect(events).toHaveLength(1)
    expect(events[0]).toMatchObject({
      action: 'token_refresh_requested',
      details: { collection_address: A, token_id: '1' },
      user_agent: 'refresh-test/1',
    })
  })

  it('refuses a second refresh of the token within its window, from any user: 429 with Retry-After', async () => {
    const res = await refreshToken(bob, A, '1')
    expect(res.status).toBe(429)
    expect(res.body.error?.data).toMatchObject({ code: 'TOO_MANY_REQUESTS', httpStatus: 429 })
    const retry = res.body.error!.data.retryAfter!
    expect(retry).toBeGreaterThan(REFRESH_LIMITS.tokenWindowMs / 1000 - 30)
    expect(retry).toBeLessThanOrEqual(REFRESH_LIMITS.tokenWindowMs / 1000)
    expect(res.retryAfter).toBe(String(retry))
    expect(res.body.error?.message).toMatch(/refreshed less than 10 minutes ago/)
    // Nothing recorded for bob, and the request still names alice.
    expect(await auditOf(bob, 'token_refresh_requested')).toEqual([])
    expect((await requestRow(A, '1'))?.requested_by).toBe(alice.id.toString())
  })

  it('accepts the token again once its window has passed', async () => {
    await tdb.pool.query(
      `UPDATE metadata_refresh_requests SET requested_at = now() - interval '11 minutes', applied_at = now()
        WHERE collection_address = $1 AND token_id = 1`,
      [A],
    )
    const res = await refreshToken(bob, A, '1')
    expect(res.status).toBe(200)
    expect(await requestRow(A, '1')).toEqual({ requested_by: bob.id.toString(), applied_at: null })
  })

  it(`limits a user to ${REFRESH_LIMITS.perUserPerHour} accepted refreshes per hour; a refused one costs nothing`, async () => {
    // carol: tokens 2..31 are her first 30.
    const statuses: number[] = []
    for (let id = 2; id < 2 + REFRESH_LIMITS.perUserPerHour; id++)
      statuses.push((await refreshToken(carol, A, String(id))).status)
    expect(statuses).toEqual(Array(REFRESH_LIMITS.perUserPerHour).fill(200))
    const refused = await refreshToken(carol, A, '32')
    expect(refused.status).toBe(429)
    expect(refused.body.error?.message).toMatch(/At most 30 refreshes per hour per account/)
    expect(Number(refused.retryAfter)).toBeGreaterThan(3000)
    // The token was not claimed: someone else may refresh it at once.
    expect(await requestRow(A, '32')).toBeUndefined()
    expect((await refreshToken(alice, A, '32')).status).toBe(200)
    // A limited target does not count against the user either.
    expect((await refreshToken(alice, A, '32')).status).toBe(429)
    expect(await auditOf(carol, 'token_refresh_requested')).toHaveLength(REFRESH_LIMITS.perUserPerHour)
    // Collections count in the same budget.
    expect((await refreshCollection(carol, B)).status).toBe(429)
  })

  it('answers 404 for a token or collection that is not indexed, 400 for malformed input', async () => {
    const unknownToken = await refreshToken(alice, A, '999')
    expect(unknownToken.status).toBe(404)
    expect(unknownToken.body.error?.message).toMatch(/not indexed/)
    expect((await refreshToken(alice, UNKNOWN, '1')).status).toBe(404)
    expect((await refreshCollection(alice, UNKNOWN)).status).toBe(404)
    for (const input of [
      { address: '0x123', token_id: '1' },
      { address: A, token_id: '-1' },
      { address: A, token_id: '1e3' },
      { address: A, token_id: '9'.repeat(79) },
      { address: A },
      { address: A, token_id: '1', extra: true },
    ]) {
      const res = await mutate(alice, 'refresh.token', input)
      expect(res.status, JSON.stringify(input)).toBe(400)
    }
    expect((await mutate(alice, 'refresh.collection', { address: 'not an address' })).status).toBe(400)
    // Nothing of this was claimed.
    const { rows } = await tdb.pool.query(
      `SELECT 1 FROM metadata_refresh_requests WHERE collection_address = $1 OR token_id = 999`,
      [UNKNOWN],
    )
    expect(rows).toEqual([])
  })

  it('needs a signed-in user', async () => {
    expect((await refreshToken(null, A, '40')).status).toBe(401)
    expect((await refreshCollection(null, A)).status).toBe(401)
  })
})

describe('refresh.collection', () => {
  it('accepts one refresh per collection and hour, across users, and audits it', async () => {
    const res = await refreshCollection(alice, B)
    expect(res.status).toBe(200)
    expect(res.body.result?.data).toMatchObject({ status: 'accepted', target: 'collection', token_id: null })
    expect(await requestRow(B, '-1')).toEqual({ requested_by: alice.id.toString(), applied_at: null })
    const again = await refreshCollection(bob, B)
    expect(again.status).toBe(429)
    expect(again.body.error?.data.retryAfter).toBeGreaterThan(REFRESH_LIMITS.collectionWindowMs / 1000 - 30)
    expect(again.body.error?.message).toMatch(/collection was refreshed less than 60 minutes ago/)
    // A token of the collection has a window of its own.
    expect((await refreshToken(bob, B, '7')).status).toBe(200)
    const events = await auditOf(alice, 'collection_refresh_requested')
    expect(events.map((e) => e.details)).toEqual([{ collection_address: B }])
  })
})

describe('/v1', () => {
  it('stays read-only: every route is a GET, except issuing a demo token', () => {
    const routes = routeTable(v1Router).map((r) => `${r.method} ${r.path}`)
    expect(routes.length).toBeGreaterThan(5)
    expect(routes.filter((r) => !r.startsWith('GET '))).toEqual(['POST /v1/demo-token'])
    expect(routes.filter((r) => /refresh/i.test(r))).toEqual([])
  })
})
