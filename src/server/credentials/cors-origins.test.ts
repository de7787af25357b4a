/**
 * CORS origins over a real database and a real server: an origin is looked up
 * on its own — never by loading every key's origins — and a change to a key's
 * origins holds for preflights within CREDENTIAL_CACHE_MS.
 * (Lookup time and memory with 200,000 origins: `npm run bench:cors`, bench/cors-origins.ts.)
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { type Database, openDatabase } from '@/db/database'
import { createApiKey, ensureUser, updateApiKey } from '@/server/api/portal/keys/api-keys'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import { asDatabase, serveApi, type TestWeb } from '@/test/serve-api'
import { CorsOrigins } from './cors-origins'

const PUBLIC_URL = 'http://localhost:3000'
const CACHE_MS = 300
const BULK_ORIGINS = 400

let tdb: TestDatabase
let db: Database
let s: TestWeb
let user: { id: bigint; address: string }

beforeAll(async () => {
  tdb = await createTestDatabase()
  db = asDatabase(tdb)
  s = await serveApi(tdb.url, { PUBLIC_URL, CREDENTIAL_CACHE_MS: String(CACHE_MS) })
  user = await ensureUser(db, '0x00000000000000000000000000000000000c0125')
  // Many keys' origins, as on a busy deployment (another account's: one holds at most 25 keys).
  const bulk = await ensureUser(db, '0x00000000000000000000000000000000000b0155')
  await tdb.pool.query(
    `INSERT INTO api_keys (user_id, name, scopes, allowed_origins)
     SELECT $1, 'bulk', ARRAY['read:nfts'], ARRAY['https://app' || g || '.example.com']
     FROM generate_series(1, $2::int) AS g`,
    [bulk.id, BULK_ORIGINS],
  )
})

afterAll(async () => {
  try {
    await s?.close()
  } finally {
    await tdb?.drop()
  }
})

const preflight = (origin: string) =>
  fetch(`${s.base}/v1/indexer/status`, {
    method: 'OPTIONS',
    headers: { Origin: origin, 'Access-Control-Request-Method': 'GET' },
  }).then((res) => res.status)

describe('CORS preflights', () => {
  it('stop passing for an origin removed from its key once CREDENTIAL_CACHE_MS has passed', async () => {
    const { key } = await createApiKey(
      db,
      { userId: user.id, address: user.address },
      {
        name: 'removed origin',
        allowedOrigins: ['https://gone.example.com'],
      },
    )
    expect(await preflight('https://gone.example.com')).toBe(204)
    expect(await preflight('https://gone.example.com')).toBe(204)
    await updateApiKey(
      db,
      { userId: user.id, address: user.address },
      {
        keyId: BigInt(key.id),
        allowedOrigins: [],
      },
    )
    await new Promise((resolve) => setTimeout(resolve, CACHE_MS + 100))
    expect(await preflight('https://gone.example.com')).toBe(403)
  })

  it('pass for an origin added to a key once CREDENTIAL_CACHE_MS has passed', async () => {
    expect(await preflight('https://new.example.com')).toBe(403)
    await createApiKey(
      db,
      { userId: user.id, address: user.address },
      {
        name: 'added origin',
        allowedOrigins: ['https://new.example.com'],
      },
    )
    await new Promise((resolve) => setTimeout(resolve, CACHE_MS + 100))
    expect(await preflight('https://new.example.com')).toBe(204)
    expect(await preflight('https://app17.example.com')).toBe(204)
  })
})

describe('CorsOrigins', () => {
  /** Rows each query on `db` returned while `run` ran. */
  async function rowsPerQuery(run: () => Promise<unknown>): Promise<number[]> {
    const spy = vi.spyOn(db.pool, 'query')
    try {
      await run()
      const results = await Promise.all(spy.mock.results.map((r) => r.value as Promise<{ rowCount: number }>))
      return results.map((r) => r.rowCount)
    } finally {
      spy.mockRestore()
    }
  }

  it('looks an unknown origin up on its own, never loading every key’s origins', async () => {
    const cors = new CorsOrigins(db, PUBLIC_URL, CACHE_MS)
    const rows = await rowsPerQuery(async () => {
      for (let i = 0; i < 5; i++) expect(await cors.isAllowed(`https://unknown${i}.example.org`)).toBe(false)
      expect(await cors.isAllowed('https://app7.example.com')).toBe(true)
    })
    expect(rows).toEqual([1, 1, 1, 1, 1, 1])
  })

  it('asks once for many concurrent preflights of one origin, and answers from memory within the bound', async () => {
    const cors = new CorsOrigins(db, PUBLIC_URL, 60_000)
    const rows = await rowsPerQuery(async () => {
      const answers = await Promise.all(
        Array.from({ length: 20 }, () => cors.isAllowed('https://app9.example.com')),
      )
      expect(answers.every(Boolean)).toBe(true)
      expect(await cors.isAllowed('https://app9.example.com')).toBe(true)
    })
    expect(rows).toEqual([1])
  })

  it('asks about one origin at a time, and answers a flood of invented ones without queueing them on the pool', async () => {
    // The credential pool's size: key lookups share it, so origins must leave them room.
    const small = openDatabase(tdb.url, { max: 2, statementTimeoutMs: 20_000 })
    const locker = await tdb.pool.connect()
    try {
      const cors = new CorsOrigins(small, PUBLIC_URL, CACHE_MS)
      // Until the transaction ends, every lookup waits: the flood piles up where it would.
      await locker.query('BEGIN')
      await locker.query('LOCK TABLE api_keys IN ACCESS EXCLUSIVE MODE')
      const flood = Array.from({ length: 300 }, (_, i) => cors.isAllowed(`https://flood${i}.example.org`))
      await sleep(200)
      expect(small.pool.totalCount - small.pool.idleCount).toBe(1)
      expect(small.pool.waitingCount).toBe(0)
      await locker.query('ROLLBACK')
      expect((await Promise.all(flood)).some(Boolean)).toBe(false)
      // Once the flood has passed, origins are looked up again.
      expect(await cors.isAllowed('https://app3.example.com')).toBe(true)
    } finally {
      await locker.query('ROLLBACK').catch(() => {})
      locker.release()
      await small.close()
    }
  })

  it('never asks the database about its own origin or a value that is no origin', async () => {
    const cors = new CorsOrigins(db, PUBLIC_URL, CACHE_MS)
    const rows = await rowsPerQuery(async () => {
      expect(await cors.isAllowed(PUBLIC_URL)).toBe(true)
      expect(await cors.isAllowed('null')).toBe(false)
      expect(await cors.isAllowed('https://app1.example.com/path')).toBe(false)
    })
    expect(rows).toEqual([])
  })
})
