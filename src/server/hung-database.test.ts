/**
 * A hung PostgreSQL (docs/operations.md, "Database connections"): with the
 * database frozen behind a proxy that stops forwarding — as a SIGSTOPped
 * primary looks from here — a request on an already-open pooled connection
 * answers 503 in the envelope within twice DB_STATEMENT_TIMEOUT_MS, its
 * concurrency slot comes back (no 429 follows), and the service recovers
 * once the database answers again.
 */
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseConfig } from '@/config/env'
import { createLogger } from '@/config/logger'
import { createApiKey, ensureUser } from '@/server/api/portal/keys/api-keys'
import { createReadiness } from '@/server/services/readiness'
import { closeWebServices, createWebServices, type Services } from '@/server/services/web-services'
import { createWebServer, type WebServer } from '@/server/web-server'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import { type PausableProxy, startPausableProxy } from '@/test/pausable-proxy'
import { asDatabase, get } from '@/test/serve-api'

const STATEMENT_TIMEOUT_MS = 500
/** Reads the tokens table: a query per request. */
const OWNER_NFTS = '/v1/owners/0x00000000000000000000000000000000000000a1/nfts'

let tdb: TestDatabase
let proxy: PausableProxy
let services: Services
let web: WebServer
let base: string
let secret: string

beforeAll(async () => {
  tdb = await createTestDatabase()
  const target = new URL(tdb.url)
  proxy = await startPausableProxy({ host: target.hostname, port: Number(target.port || 5432) })
  const proxied = new URL(tdb.url)
  proxied.hostname = '127.0.0.1'
  proxied.port = String(proxy.port)
  const db = asDatabase(tdb)
  const user = await ensureUser(db, '0x00000000000000000000000000000000000f4023')
  secret = (await createApiKey(db, { userId: user.id, address: user.address }, { name: 'frozen' })).secret
  const config = parseConfig({
    NETWORK: 'devnet',
    LOG_LEVEL: 'silent',
    DATABASE_URL: proxied.toString(),
    DB_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS),
    TRUST_PROXY: '1',
    // One request at a time: a slot a hung request kept would show as a 429.
    RATE_LIMIT_KEY: 'sec=1000,min=100000,concurrent=1',
    RATE_LIMIT_IP_KEY: 'sec=1000,min=100000,concurrent=1',
  } as unknown as NodeJS.ProcessEnv)
  // The web process's own pools, with their bounds, on the proxied database.
  services = createWebServices(config, { logger: createLogger({ level: 'silent' }) })
  web = await createWebServer({ services })
  await new Promise<void>((resolve) => web.server.listen(0, '127.0.0.1', resolve))
  base = `http://127.0.0.1:${(web.server.address() as AddressInfo).port}`
})

afterAll(async () => {
  proxy?.thaw()
  await web?.close()
  if (services) await closeWebServices(services)
  await proxy?.close()
  await tdb?.drop()
})

async function timedGet(): Promise<{ status: number; code: string | undefined; ms: number }> {
  const started = performance.now()
  // Well past the bound: a request the bound does not end fails here, not by hanging the run.
  const res = await get(base, OWNER_NFTS, {
    credential: secret,
    ip: '192.0.2.40',
    signal: AbortSignal.timeout(15_000),
  })
  const body = (await res.json()) as { error?: { code?: string } }
  return { status: res.status, code: body.error?.code, ms: performance.now() - started }
}

describe('a frozen database', () => {
  it('answers 503 within twice the statement timeout, gives the slot back, and recovers', async () => {
    // Open connections first: the frozen requests use pooled ones, as in production.
    for (let i = 0; i < 3; i++) expect((await timedGet()).status).toBe(200)

    proxy.freeze()
    try {
      for (let i = 0; i < 3; i++) {
        const frozen = await timedGet()
        expect(frozen).toMatchObject({ status: 503, code: 'SERVICE_UNAVAILABLE' })
        // Twice DB_STATEMENT_TIMEOUT_MS, plus room for a loaded machine.
        expect(frozen.ms).toBeLessThan(2 * STATEMENT_TIMEOUT_MS + 1500)
      }
    } finally {
      proxy.thaw()
    }
    // The hung connections were ended, not returned to the pool: the next requests get fresh ones.
    let recovered = 0
    for (let i = 0; i < 20 && recovered === 0; i++) {
      if ((await timedGet()).status === 200) recovered++
    }
    expect(recovered).toBe(1)
  })
})

describe('readiness probes on a frozen database', () => {
  it('keep at most one connection waiting on it, however often they come', async () => {
    // Answers reused for 50 ms, each check bounded at 100 ms: far shorter than a hung query's bound (1 s).
    const readiness = createReadiness(services, { timeoutMs: 100, cacheMs: 50 })
    expect((await readiness()).ready).toBe(true)
    const pool = services.db.pool
    proxy.freeze()
    try {
      let mostBusy = 0
      for (let i = 0; i < 5; i++) {
        // Past the reused answer: each probe runs the checks again.
        await new Promise((resolve) => setTimeout(resolve, 60))
        const report = await readiness()
        expect(report.checks.database).toBe('no answer within 100 ms')
        mostBusy = Math.max(mostBusy, pool.totalCount - pool.idleCount)
      }
      expect(mostBusy).toBe(1)
    } finally {
      proxy.thaw()
    }
    // Once the database answers, so does readiness.
    await new Promise((resolve) => setTimeout(resolve, 2 * STATEMENT_TIMEOUT_MS + 100))
    expect((await readiness()).ready).toBe(true)
  })
})
