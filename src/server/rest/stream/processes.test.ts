/**
 * The live stream behind two web processes (`src/server/main.ts`, as
 * `npm start` runs them) sharing one database and one Redis: each has its own
 * journal listener and both send the same events with the same ids; a demo
 * token's one stream holds across them; a process that stops ends its streams.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Database } from '@/db/database'
import { createApiKey, ensureUser } from '@/server/api/portal/keys/api-keys'
import { issueDemoToken } from '@/server/credentials/demo-tokens'
import { createTestDatabase, isEmbeddedTestDatabase, type TestDatabase } from '@/test/db'
import { JournalWriter } from '@/test/journal-writes'
import { startTestRedis, type TestRedis } from '@/test/redis-server'
import { asDatabase } from '@/test/serve-api'
import { openSse, type SseConnection } from '@/test/sse-client'
import { startWebProcess, type WebProcess } from '@/test/web-process'

let tdb: TestDatabase
let db: Database
let redis: TestRedis
let a: WebProcess
let b: WebProcess
let secret: string
const open: SseConnection[] = []

// Several processes on one database need a server PostgreSQL (the embedded one is single-session).
describe.skipIf(isEmbeddedTestDatabase())('the live stream behind two web processes', () => {
  beforeAll(async () => {
    tdb = await createTestDatabase({ poolSize: 4 })
    db = asDatabase(tdb)
    redis = await startTestRedis()
    const user = await ensureUser(db, '0x0000000000000000000000000000000000000d0d')
    ;({ secret } = await createApiKey(db, { userId: user.id, address: user.address }, { name: 'streams' }))
    const env = { DATABASE_URL: tdb.url, REDIS_URL: redis.url, LOG_LEVEL: 'info' }
    ;[a, b] = await Promise.all([startWebProcess('A', env), startWebProcess('B', env)])
  }, 120_000)
  afterAll(async () => {
    for (const c of open) c.close()
    await a?.stop()
    await b?.stop()
    await redis?.stop()
    await tdb?.drop()
  })

  const stream = async (p: WebProcess, credential = secret) => {
    const conn = await openSse(`${p.base}/v1/activity/stream`, { credential })
    open.push(conn)
    return conn
  }

  it('both send the same events, with the same ids, in journal order', async () => {
    const journal = new JournalWriter(tdb.pool)
    await journal.reset()
    await journal.commitBlock(1, 1)
    const [fromA, fromB] = await Promise.all([stream(a), stream(b)])
    expect([fromA.status, fromB.status]).toEqual([200, 200])
    for (let block = 2; block <= 5; block++) await journal.commitBlock(block, block)
    await journal.reorgTo(3, 5)
    await Promise.all([fromA.waitFor(6), fromB.waitFor(6)])
    const seqs = (
      await tdb.pool.query<{ seq: string }>('SELECT seq::text AS seq FROM activity_journal j ORDER BY j.seq')
    ).rows.map((r) => r.seq)
    const sent = (c: SseConnection) => c.events.map((e) => `${e.id} ${e.event}`)
    expect(sent(fromA)).toEqual(sent(fromB))
    expect(fromA.events.map((e) => e.id)).toEqual(seqs.slice(1))
    expect(fromA.events.map((e) => e.event).slice(-2)).toEqual(['activity.removed', 'activity.removed'])
  })

  it("a demo token's one stream holds across processes; a process that stops ends its streams", async () => {
    const { token } = await issueDemoToken(db, { clientIp: '192.0.2.9' })
    const first = await stream(a, token)
    expect(first.status).toBe(200)
    // (A demo token makes one request per second.)
    await new Promise((r) => setTimeout(r, 1100))
    const second = await stream(b, token)
    expect(second.status).toBe(429)
    expect(second.body).toContain('live streams per demo token')
    await a.stop()
    await first.ended
    expect(first.isEnded()).toBe(true)
  })
})
