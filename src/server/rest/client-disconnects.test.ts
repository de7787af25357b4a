/**
 * Clients that hang up while their request waits (docs/auth.md, "Rate limits"): a request's
 * concurrency slots are held until its response is over and so is its own work, so leaving
 * neither leaks the slots (held until the lease ran out, when the client left during the
 * origin's lookup) nor frees them early (the media path let a client stack stuck queries).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApiKey, ensureUser } from '@/server/api/portal/keys/api-keys'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import { asDatabase, get, serveApi, type TestWeb, uniqueIp } from '@/test/serve-api'

const STATUS = '/v1/indexer/status'
const MEDIA = `/v1/media?url=${encodeURIComponent('https://example.com/a.png')}`
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

let tdb: TestDatabase
let s: TestWeb
let secret: string

beforeAll(async () => {
  tdb = await createTestDatabase({ poolSize: 4 })
  const db = asDatabase(tdb)
  const user = await ensureUser(db, '0x00000000000000000000000000000000000ab047')
  secret = (await createApiKey(db, { userId: user.id, address: user.address }, { name: 'abort' })).secret
  s = await serveApi(tdb.url, {
    REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    REDIS_KEY_PREFIX: `disconnects-${process.pid}:`,
    TRUST_PROXY: '1',
    RATE_LIMIT_KEY: 'sec=100,min=1000,concurrent=1',
    RATE_LIMIT_IP_KEY: 'sec=100,min=1000,concurrent=100',
    RATE_LIMIT_MEDIA: 'sec=100,min=1000,concurrent=1',
  })
})

afterAll(async () => {
  await s?.close()
  await tdb?.drop()
})

describe('client disconnect during the CORS lookup', () => {
  it('gives the key its concurrency slot back once the request has ended', async () => {
    expect((await get(s.base, STATUS, { credential: secret, ip: uniqueIp() })).status).toBe(200)

    // The origin lookup of a never-seen Origin waits (a busy credential pool; here a lock).
    const client = await tdb.pool.connect()
    await client.query('BEGIN')
    await client.query('LOCK TABLE api_keys IN ACCESS EXCLUSIVE MODE')
    const abort = new AbortController()
    const pending = get(s.base, STATUS, {
      credential: secret,
      ip: uniqueIp(),
      origin: 'https://never-seen.example',
      signal: abort.signal,
    }).catch((e: Error) => e)
    await sleep(300)
    abort.abort()
    expect(await pending).toBeInstanceOf(Error)
    await sleep(200)
    await client.query('COMMIT')
    client.release()
    // The abandoned request now runs to its end (limit checks, query, response to a closed socket).
    await sleep(1500)

    // Its work is over: the key's one slot must be free again.
    const next = await get(s.base, STATUS, { credential: secret, ip: uniqueIp() })
    const body = (await next.json()) as { error?: { message?: string } }
    expect({ status: next.status, message: body.error?.message }).toEqual({ status: 200, message: undefined })
  })
})

describe('media: client disconnect while the query runs', () => {
  it('keeps the slot until the query ends (the next request of the address is refused)', async () => {
    const ip = uniqueIp()
    expect((await get(s.base, MEDIA, { ip })).status).toBe(404)
    const client = await tdb.pool.connect()
    await client.query('BEGIN')
    await client.query('LOCK TABLE media_sources IN ACCESS EXCLUSIVE MODE')
    try {
      const abort = new AbortController()
      const first = get(s.base, MEDIA, { ip, signal: abort.signal }).catch((e: Error) => e)
      await sleep(400)
      abort.abort()
      expect(await first).toBeInstanceOf(Error)
      await sleep(300)
      // The first request's query still waits for the lock: its slot must still be taken.
      const second = await get(s.base, MEDIA, { ip, signal: AbortSignal.timeout(1500) }).then(
        (r) => r.status,
        () => 'admitted (hangs on the lock)',
      )
      expect(second).toBe(429)
    } finally {
      await client.query('COMMIT')
      client.release()
    }
  })
})
