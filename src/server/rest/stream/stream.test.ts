/**
 * GET /v1/activity/stream on a real web server and a real PostgreSQL, the
 * journal written through the indexer's store functions (docs/push.md,
 * "Live stream"): order, reorgs, resume, confirmations, several web
 * processes, limits and every refusal before the stream starts.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { pruneJournal } from '@/db/queries/activity-journal'
import { createApiKey, ensureUser, revokeApiKey, updateApiKey } from '@/server/api/portal/keys/api-keys'
import { issueDemoToken } from '@/server/credentials/demo-tokens'
import { pushEvent } from '@/server/push/activity-event'
import { type ApiServer, startApiServer, TEST_LIMITS } from '@/test/api-client'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import { JournalWriter, OTHER_COLLECTION, upTo } from '@/test/journal-writes'
import { startTestRedis, type TestRedis } from '@/test/redis-server'
import { openSse, type SseConnection } from '@/test/sse-client'

const TIMINGS = { stream: { heartbeatMs: 150, recheckMs: 100, pollMs: 1000 } }

let tdb: TestDatabase
let redis: TestRedis
let api: ApiServer
let other: ApiServer
let journal: JournalWriter
const open: SseConnection[] = []

beforeAll(async () => {
  tdb = await createTestDatabase()
  redis = await startTestRedis()
  // Two web servers sharing the database and one limiter store, as two web processes do.
  // (Request limits raised: the stream's own limits are under test.)
  const env = {
    REDIS_URL: redis.url,
    REDIS_KEY_PREFIX: `stream-${tdb.schema}:`,
    RATE_LIMIT_DEMO: TEST_LIMITS,
    RATE_LIMIT_IP_DEMO: TEST_LIMITS,
    // Streams per client address: as many as its concurrent key requests (10, the default's).
    RATE_LIMIT_IP_KEY: 'sec=100000,min=10000000,concurrent=10',
    TRUST_PROXY: '1',
    // Short leases: a stream's slot must outlive several of them (renewed).
    RATE_LIMIT_LEASE_MS: '1000',
  }
  api = await startApiServer(tdb.url, env, { rest: TIMINGS })
  other = await startApiServer(tdb.url, env, { rest: TIMINGS })
  journal = new JournalWriter(tdb.pool)
}, 60_000)
afterAll(async () => {
  for (const c of open) c.close()
  await api?.close()
  await other?.close()
  await redis?.stop()
  await tdb?.drop()
})
beforeEach(async () => {
  for (const c of open.splice(0)) c.close()
  await journal.reset()
})

async function stream(
  server: ApiServer,
  query = '',
  options: { credential?: string; lastEventId?: string; origin?: string; clientIp?: string } = {},
) {
  const conn = await openSse(`${server.base}/v1/activity/stream${query}`, {
    credential: options.credential ?? server.token,
    lastEventId: options.lastEventId,
    headers: {
      ...(options.origin ? { Origin: options.origin } : {}),
      ...(options.clientIp ? { 'X-Forwarded-For': options.clientIp } : {}),
    },
  })
  open.push(conn)
  return conn
}

const tokens = (conn: SseConnection) =>
  conn.events.map((e) => `${e.event}:${(JSON.parse(e.data) as { data: { token_id: string } }).data.token_id}`)

const journalSeqs = async () =>
  (
    await tdb.pool.query<{ seq: string }>('SELECT seq::text AS seq FROM activity_journal j ORDER BY j.seq')
  ).rows.map((r) => r.seq)

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

async function newKey(label: string, allowedOrigins?: string[]) {
  const user = await ensureUser(api.db, `0x${label.padStart(40, '0')}`)
  const { key, secret } = await createApiKey(
    api.db,
    { userId: user.id, address: user.address },
    { name: label, allowedOrigins },
  )
  return { user, key, secret }
}

describe('the live activity stream', () => {
  it('sends only new events, in order, as the pushEvent JSON with id and event type; retry once, heartbeats', async () => {
    await journal.commitBlock(1, 1)
    const conn = await stream(api)
    expect(conn.status).toBe(200)
    expect(conn.headers.get('content-type')).toBe('text/event-stream; charset=utf-8')
    expect(conn.headers.get('x-request-id')).toBeTruthy()
    await journal.commitBlock(2, 2)
    await journal.commitBlock(3, 3)
    const events = await conn.waitFor(2)
    expect(tokens(conn)).toEqual(['activity.added:2', 'activity.added:3'])
    const seqs = await journalSeqs()
    expect(events.map((e) => e.id)).toEqual(seqs.slice(1))
    for (const e of events) {
      const body = pushEvent.parse(JSON.parse(e.data))
      expect(body.id).toBe(e.id)
      expect(body.type).toBe(e.event)
      expect(body.data.block_hash).toMatch(/^0x[0-9a-f]{64}$/)
    }
    expect(conn.retry).toBe(3000)
    await sleep(400)
    expect(conn.comments).toContain('heartbeat')
  })

  it('sends activity.removed for a sent event that a reorg took away, then the new fork', async () => {
    await journal.commitBlock(1, 1)
    const conn = await stream(api)
    const hash = await journal.commitBlock(2, 2)
    await conn.waitFor(1)
    await journal.reorgTo(1, 2)
    await journal.commitBlock(2, 2, 1)
    await conn.waitFor(3)
    expect(tokens(conn)).toEqual(['activity.added:2', 'activity.removed:2', 'activity.added:1002'])
    const removed = pushEvent.parse(JSON.parse(conn.events[1]!.data))
    expect(removed.data.block_hash).toBe(hash)
  })

  it('resumes from Last-Event-ID (or since) with nothing lost and nothing twice while events keep coming', async () => {
    await journal.commitBlock(1, 1)
    const first = await stream(api)
    let block = 2
    let writing = true
    const writer = (async () => {
      while (writing && block <= 30) {
        await journal.commitBlock(block, block)
        block++
        await sleep(15)
      }
    })()
    await first.waitFor(4)
    first.close()
    await first.ended
    const got = first.events.map((e) => e.id)
    const second = await stream(api, '', { lastEventId: got.at(-1) })
    await second.waitFor(3)
    second.close()
    await second.ended
    got.push(...second.events.map((e) => e.id))
    // `since` resumes the same way (on the other web server).
    const third = await stream(other, `?since=${got.at(-1)}`)
    writing = false
    await writer
    const expected = (await journalSeqs()).slice(1)
    await third.waitFor(expected.length - got.length)
    got.push(...third.events.map((e) => e.id))
    expect(got).toEqual(expected)
  })

  it('with min_confirmations, holds an addition (and what follows) until its block has them', async () => {
    await journal.commitBlock(1, 1)
    const conn = await stream(api, '?min_confirmations=2')
    await journal.commitBlock(2, 2)
    await journal.commitBlock(3, 3)
    await sleep(300)
    expect(conn.events).toEqual([])
    await journal.setHead(4)
    await conn.waitFor(1)
    expect(tokens(conn)).toEqual(['activity.added:2'])
    const body = pushEvent.parse(JSON.parse(conn.events[0]!.data))
    expect(body.data.confirmations).toBe(2)
    await journal.setHead(5)
    await conn.waitFor(2)
    expect(tokens(conn)).toEqual(['activity.added:2', 'activity.added:3'])
  })

  it('with min_confirmations, a resume from the last sent id skips what the stream passed over and resends nothing', async () => {
    await journal.commitBlock(1, 1)
    const first = await stream(api, '?min_confirmations=1')
    await journal.commitBlock(2, 2)
    await journal.commitBlock(3, 3)
    await first.waitFor(1)
    first.close()
    await first.ended
    expect(tokens(first)).toEqual(['activity.added:2'])
    // Block 3 is reorged away before it had a confirmation: neither half is ever sent.
    await journal.reorgTo(2, 3)
    await journal.commitBlock(3, 5, 1)
    const resumed = await stream(api, '?min_confirmations=1', { lastEventId: first.events[0]!.id })
    await resumed.waitFor(1)
    await sleep(200)
    expect(tokens(resumed)).toEqual(['activity.added:1003'])
  })

  it('filters by collection and event type', async () => {
    await journal.commitBlock(1, 1)
    const conn = await stream(api, `?collection=${OTHER_COLLECTION}&event_type=mint`)
    await journal.commitBlock(2, 2)
    await journal.commitBlock(3, 3, 0, OTHER_COLLECTION)
    await conn.waitFor(1)
    await sleep(200)
    expect(tokens(conn)).toEqual(['activity.added:3'])
  })

  it('sends ERC-1155 events only with `standard`, then every event with its amount', async () => {
    await journal.commitBlock(1, 1)
    const plain = await stream(api)
    const all = await stream(api, '?standard=all')
    const only = await stream(api, '?standard=ERC1155')
    await journal.commitBlock(2, 2)
    await journal.insertErc1155(2, 7, 5n)
    await journal.commitBlock(3, 3)
    await plain.waitFor(2)
    await all.waitFor(3)
    await only.waitFor(1)
    await sleep(200)
    const amounts = (conn: SseConnection) =>
      conn.events.map((e) => {
        const body = pushEvent.parse(JSON.parse(e.data))
        return `${body.data.token_id}:${body.data.amount}`
      })
    expect(amounts(plain)).toEqual(['2:undefined', '3:undefined'])
    expect(amounts(all)).toEqual(['2:1', '7:5', '3:1'])
    expect(amounts(only)).toEqual(['7:5'])
  })

  it('two web servers deliver the same events', async () => {
    await journal.commitBlock(1, 1)
    const a = await stream(api)
    const b = await stream(other)
    for (let block = 2; block <= 6; block++) await journal.commitBlock(block, block)
    await a.waitFor(5)
    await b.waitFor(5)
    // The same events; `confirmations` is counted when each server sent it.
    const same = (e: { id?: string; data: string }) => {
      const { data, ...rest } = pushEvent.parse(JSON.parse(e.data))
      return { ...rest, data: { ...data, confirmations: null } }
    }
    expect(b.events.map(same)).toEqual(a.events.map(same))
    expect(b.events.map((e) => e.id)).toEqual((await journalSeqs()).slice(1))
  })
})

describe('refusals of the live stream', () => {
  const envelope = (conn: SseConnection) =>
    JSON.parse(conn.body ?? '{}') as { error: { code: string; message: string; request_id: string } }

  it('no credential: 401 in the envelope', async () => {
    const conn = await openSse(`${api.base}/v1/activity/stream`)
    expect(conn.status).toBe(401)
    expect(envelope(conn).error.code).toBe('UNAUTHORIZED')
    expect(envelope(conn).error.request_id).toBe(conn.headers.get('x-request-id'))
  })

  it('a bad Last-Event-ID, since or parameter: 400 INVALID_ARGUMENT', async () => {
    await journal.commitBlock(1, 1)
    for (const [query, lastEventId] of [
      ['', 'abc'],
      ['', '0'],
      ['', '-3'],
      ['', '99999'],
      ['?since=1.5', undefined],
      ['?since=99999', undefined],
      ['?min_confirmations=65', undefined],
      ['?event_type=sale', undefined],
      ['?limit=3', undefined],
    ] as const) {
      const conn = await stream(api, query, { lastEventId })
      expect(conn.status, `${query} ${lastEventId}`).toBe(400)
      expect(envelope(conn).error.code).toBe('INVALID_ARGUMENT')
    }
    // An empty header is no resume point (a client that has received nothing yet).
    const empty = await stream(api, '', { lastEventId: '' })
    expect(empty.status).toBe(200)
    // The header wins over since: a good header with a bad since is still refused (since is validated), a bad header with a good since too.
    const both = await stream(api, '?since=1', { lastEventId: 'x' })
    expect(both.status).toBe(400)
    expect(envelope(both).error.message).toContain('Last-Event-ID')
  })

  it('a resume point older than the events kept: 410 RESUME_POINT_EXPIRED naming the oldest id', async () => {
    for (let block = 1; block <= 4; block++) await journal.commitBlock(block, block)
    const seqs = await journalSeqs()
    await tdb.pool.query(
      `UPDATE activity_journal SET recorded_at = now() - interval '2 days' WHERE seq <= $1`,
      [seqs[1]],
    )
    expect(await pruneJournal({ pool: tdb.pool })).toBe(2)
    const expired = await stream(api, '', { lastEventId: seqs[0] })
    expect(expired.status).toBe(410)
    expect(envelope(expired).error.code).toBe('RESUME_POINT_EXPIRED')
    expect(envelope(expired).error.message).toContain(`oldest available event id is ${seqs[2]}`)
    // Right before the oldest kept: nothing was lost, the stream starts.
    const fine = await stream(api, '', { lastEventId: seqs[1] })
    expect(fine.status).toBe(200)
    await fine.waitFor(2)
    expect(fine.events.map((e) => e.id)).toEqual(seqs.slice(2))
  })

  it('too many streams of one credential: 429 (a demo token has one, an API key five), across web servers', async () => {
    const { token } = await issueDemoToken(api.db, { clientIp: '192.0.2.7' })
    const first = await stream(api, '', { credential: token })
    expect(first.status).toBe(200)
    const second = await stream(other, '', { credential: token })
    expect(second.status).toBe(429)
    expect(envelope(second).error.code).toBe('RATE_LIMITED')
    expect(envelope(second).error.message).toContain('At most 1 live streams per demo token')
    expect(second.headers.get('retry-after')).toBeTruthy()
    first.close()
    await first.ended
    await sleep(100)
    expect((await stream(other, '', { credential: token })).status).toBe(200)

    const { secret } = await newKey('5')
    const five = await Promise.all(
      [0, 1, 2, 3, 4].map((i) => stream(i % 2 ? api : other, '', { credential: secret })),
    )
    expect(five.map((c) => c.status)).toEqual([200, 200, 200, 200, 200])
    expect((await stream(api, '', { credential: secret })).status).toBe(429)
  })

  it('too many streams from one client address: 429 whatever the keys, across web servers', async () => {
    const keys = await Promise.all(['a1', 'a2', 'a3'].map((label) => newKey(label)))
    const clientIp = '198.51.100.20'
    const ten = await Promise.all(
      upTo(0, 9).map((i) => stream(i % 2 ? api : other, '', { credential: keys[i % 2]!.secret, clientIp })),
    )
    expect(ten.map((c) => c.status)).toEqual(Array(10).fill(200))
    const refused = await stream(api, '', { credential: keys[2]!.secret, clientIp })
    expect(refused.status).toBe(429)
    expect(envelope(refused).error.message).toContain('At most 10 live streams per client address')
    // The key's own slot was given back: from another address it streams.
    expect((await stream(other, '', { credential: keys[2]!.secret, clientIp: '198.51.100.21' })).status).toBe(
      200,
    )
    ten[0]!.close()
    await ten[0]!.ended
    await sleep(100)
    expect((await stream(api, '', { credential: keys[2]!.secret, clientIp })).status).toBe(200)
  })

  it('an open stream keeps its slot past the lease (renewed) and goes on sending', async () => {
    const { token } = await issueDemoToken(api.db, { clientIp: '192.0.2.8' })
    await journal.commitBlock(1, 1)
    const conn = await stream(api, '', { credential: token })
    expect(conn.status).toBe(200)
    await sleep(1600)
    expect((await stream(other, '', { credential: token })).status).toBe(429)
    await journal.commitBlock(2, 2)
    await conn.waitFor(1)
    expect(conn.isEnded()).toBe(false)
  })

  it('a revoked key: its open stream ends within the revocation bound', async () => {
    const { user, key, secret } = await newKey('7')
    const conn = await stream(api, '', { credential: secret })
    expect(conn.status).toBe(200)
    await sleep(200)
    expect(conn.isEnded()).toBe(false)
    const revoked = Date.now()
    await revokeApiKey(api.db, { userId: user.id, address: user.address }, { keyId: BigInt(key.id) })
    await conn.ended
    expect(Date.now() - revoked).toBeLessThan(3000)
    expect((await stream(api, '', { credential: secret })).status).toBe(401)
  })

  it('a key that loses read:activity, or the stream’s origin: its open stream ends within the same bound', async () => {
    const origin = 'https://app.example'
    const scoped = await newKey('8')
    const browser = await newKey('9', [origin])
    const actor = (u: { id: bigint; address: string }) => ({ userId: u.id, address: u.address })
    const withScope = await stream(api, '', { credential: scoped.secret })
    const fromOrigin = await stream(api, '', { credential: browser.secret, origin })
    expect([withScope.status, fromOrigin.status]).toEqual([200, 200])
    await sleep(200)
    expect([withScope.isEnded(), fromOrigin.isEnded()]).toEqual([false, false])
    const changed = Date.now()
    await updateApiKey(api.db, actor(scoped.user), { keyId: BigInt(scoped.key.id), scopes: ['read:nfts'] })
    await updateApiKey(api.db, actor(browser.user), { keyId: BigInt(browser.key.id), allowedOrigins: [] })
    await Promise.all([withScope.ended, fromOrigin.ended])
    expect(Date.now() - changed).toBeLessThan(3000)
    expect((await stream(api, '', { credential: scoped.secret })).status).toBe(403)
    expect((await stream(api, '', { credential: browser.secret, origin })).status).toBe(403)
  })

  it('other methods: 405 with Allow: GET, OPTIONS', async () => {
    const res = await fetch(`${api.base}/v1/activity/stream`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${api.token}` },
    })
    expect(res.status).toBe(405)
    expect(res.headers.get('allow')).toBe('GET, OPTIONS')
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('METHOD_NOT_ALLOWED')
  })
})
