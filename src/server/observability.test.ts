/**
 * Health, readiness and metrics of the web process (docs/operations.md,
 * "Health and readiness" and "Metrics"), against real parts: a migrated test
 * database, a closed port where a database or a Redis should be, and the web
 * process itself started as `npm start` starts it.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { type AddressInfo, createServer, type Socket } from 'node:net'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { ConfigError, parseConfig } from '@/config/env'
import { metricsPort } from '@/config/metrics-endpoint'
import { createApiKey, ensureUser } from '@/server/api/portal/keys/api-keys'
import { READINESS_CACHE_MS } from '@/server/services/readiness'
import { TEST_LIMITS } from '@/test/api-client'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import { freePort } from '@/test/free-port'
import { asDatabase, serveApi, type TestWeb } from '@/test/serve-api'

const ROOT = path.resolve(import.meta.dirname, '../..')

let tdb: TestDatabase

beforeAll(async () => {
  tdb = await createTestDatabase()
})

afterAll(async () => {
  await tdb?.drop()
})

async function readyz(
  base: string,
): Promise<{ status: number; body: { status: string; checks: Record<string, string> } }> {
  const res = await fetch(`${base}/readyz`)
  return { status: res.status, body: await res.json() }
}

describe('/healthz and /readyz', () => {
  let s: TestWeb
  beforeAll(async () => {
    s = await serveApi(tdb.url)
  })
  afterAll(async () => {
    await s?.close()
  })

  it('/readyz is 200 with every check named when the database, the limiter and the migrations are there', async () => {
    const res = await readyz(s.base)
    expect(res).toEqual({
      status: 200,
      body: { status: 'ready', checks: { database: 'ok', rate_limiter: 'ok', migrations: 'ok' } },
    })
    const health = await fetch(`${s.base}/healthz`)
    expect(health.status).toBe(200)
    expect(await health.json()).toEqual({ status: 'ok' })
  })

  it('/readyz is 503 and names the migration the database lacks', async () => {
    const { rows } = await tdb.pool.query<{ migration_name: string }>(
      'SELECT migration_name FROM _prisma_migrations ORDER BY migration_name DESC LIMIT 1',
    )
    const last = rows[0]!.migration_name
    await tdb.pool.query('UPDATE _prisma_migrations SET rolled_back_at = now() WHERE migration_name = $1', [
      last,
    ])
    try {
      // The last answer is reused for a moment: wait for a fresh one.
      await sleep(READINESS_CACHE_MS)
      const res = await readyz(s.base)
      expect(res.status).toBe(503)
      expect(res.body).toEqual({
        status: 'not_ready',
        checks: { database: 'ok', rate_limiter: 'ok', migrations: `missing: ${last}` },
      })
      // Alive all the same.
      expect((await fetch(`${s.base}/healthz`)).status).toBe(200)
    } finally {
      await tdb.pool.query('UPDATE _prisma_migrations SET rolled_back_at = NULL WHERE migration_name = $1', [
        last,
      ])
    }
    await sleep(READINESS_CACHE_MS)
    expect((await readyz(s.base)).status).toBe(200)
  })

  it('answers a flood of probes with one round of checks per READINESS_CACHE_MS', async () => {
    await sleep(READINESS_CACHE_MS)
    const query = vi.spyOn(s.services.db.pool, 'query')
    try {
      const started = performance.now()
      const burst = await Promise.all(Array.from({ length: 100 }, () => readyz(s.base)))
      for (let i = 0; i < 100; i++) expect((await readyz(s.base)).status).toBe(200)
      const rounds = 1 + Math.floor((performance.now() - started) / READINESS_CACHE_MS)
      expect(burst.every((r) => r.status === 200)).toBe(true)
      // SELECT 1 and the migration table: two round trips per round of checks, not two per probe (400).
      expect(query.mock.calls.length).toBeLessThanOrEqual(2 * rounds)
      expect(rounds).toBeLessThan(20)
    } finally {
      query.mockRestore()
    }
  })
})

describe('/readyz with a dependency down', () => {
  it('is 503 when the database is unreachable (a closed port), while /healthz stays 200', async () => {
    const closed = await freePort()
    const s = await serveApi(`postgres://postgres@127.0.0.1:${closed}/postgres`)
    try {
      const res = await readyz(s.base)
      expect(res.status).toBe(503)
      expect(res.body.status).toBe('not_ready')
      expect(res.body.checks.database).toBe('unreachable')
      expect(res.body.checks.migrations).toMatch(/^unknown/)
      expect(res.body.checks.rate_limiter).toBe('ok')
      expect((await fetch(`${s.base}/healthz`)).status).toBe(200)
    } finally {
      await s.close()
    }
  })

  it('is 503 when the limiter store (Redis) does not answer', async () => {
    const closed = await freePort()
    const s = await serveApi(tdb.url, { REDIS_URL: `redis://127.0.0.1:${closed}` })
    try {
      const res = await readyz(s.base)
      expect(res.status).toBe(503)
      expect(res.body.checks).toEqual({ database: 'ok', rate_limiter: 'unreachable', migrations: 'ok' })
    } finally {
      await s.close()
    }
  })
})

describe('METRICS_PORT', () => {
  it('is never the public port, nor is the indexer’s METRICS_PORT + 1', () => {
    expect(() => parseConfig({ PORT: '3000', METRICS_PORT: '3000' })).toThrow(ConfigError)
    expect(() => parseConfig({ PORT: '3000', METRICS_PORT: '2999' })).toThrow(
      /METRICS_PORT must differ from PORT/,
    )
    const config = parseConfig({ PORT: '3000', METRICS_PORT: '9464' })
    expect(config.METRICS_HOST).toBe('127.0.0.1')
    expect(metricsPort(config, 'web')).toBe(9464)
    expect(metricsPort(config, 'indexer')).toBe(9465)
    expect(metricsPort(parseConfig({}), 'web')).toBeUndefined()
  })
})

/** The web process as `npm start` runs it (API only: no portal build needed). */
async function startWebProcess(
  env: Record<string, string>,
): Promise<{ child: ChildProcess; output: () => string }> {
  let output = ''
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server/main.ts', '--api-only'], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'info', NODE_ENV: 'production', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  child.stdout!.on('data', (d) => (output += d))
  child.stderr!.on('data', (d) => (output += d))
  const deadline = Date.now() + 60_000
  // Both ports answer before the test starts.
  while (!/"msg":"web server listening"/.test(output) || !/"msg":"metrics listening"/.test(output)) {
    if (child.exitCode !== null) throw new Error(`web process exited (${child.exitCode}): ${output}`)
    if (Date.now() > deadline) throw new Error(`web process did not start: ${output}`)
    await new Promise((r) => setTimeout(r, 100))
  }
  return { child, output: () => output }
}

describe('the web process’s metrics', () => {
  it('serves Prometheus text on METRICS_PORT with the named metrics; the public port does not serve /metrics', async () => {
    const [port, metrics] = [await freePort(), await freePort()]
    const user = await ensureUser(asDatabase(tdb), '0x00000000000000000000000000000000000a11ce')
    const { secret } = await createApiKey(
      asDatabase(tdb),
      { userId: user.id, address: user.address },
      { name: 'metrics' },
    )
    const { child, output } = await startWebProcess({
      DATABASE_URL: tdb.url,
      PORT: String(port),
      METRICS_PORT: String(metrics),
      // The test's few requests come faster than the default 5 per second.
      RATE_LIMIT_KEY: TEST_LIMITS,
      RATE_LIMIT_IP_KEY: TEST_LIMITS,
    })
    try {
      const base = `http://127.0.0.1:${port}`
      const auth = { Authorization: `Bearer ${secret}` }
      for (let i = 0; i < 3; i++) {
        expect(
          (await fetch(`${base}/v1/collections/0x${'ab'.repeat(20)}/transfers`, { headers: auth })).status,
        ).toBe(200)
      }
      expect((await fetch(`${base}/v1/collections/0x${'cd'.repeat(20)}`, { headers: auth })).status).toBe(404)
      expect((await fetch(`${base}/v1/no-such-endpoint`, { headers: auth })).status).toBe(404)
      expect((await fetch(`${base}/v1/collections`)).status).toBe(401)
      expect((await fetch(`${base}/healthz`)).status).toBe(200)

      // The public port has no /metrics.
      const onPublic = await fetch(`${base}/metrics`)
      expect(onPublic.status).toBe(404)
      expect(await onPublic.text()).not.toContain('nft_http_request_duration_seconds')

      const scrape = await fetch(`http://127.0.0.1:${metrics}/metrics`)
      expect(scrape.status).toBe(200)
      expect(scrape.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/)
      const text = await scrape.text()
      // Requests by route template, never the raw path.
      expect(text).toMatch(
        /nft_http_request_duration_seconds_count\{route="\/v1\/collections\/\{address\}\/transfers",method="GET",status="200"\} 3\n/,
      )
      expect(text).toMatch(
        /nft_http_request_duration_seconds_count\{route="\/v1\/collections\/\{address\}",method="GET",status="404"\} 1\n/,
      )
      expect(text).toMatch(
        /nft_http_request_duration_seconds_count\{route="unmatched",method="GET",status="404"\} 1\n/,
      )
      expect(text).toMatch(
        /nft_http_request_duration_seconds_count\{route="\/healthz",method="GET",status="200"\} 1\n/,
      )
      expect(text).not.toContain('abababab')
      // Limiter decisions by policy and scope: every request passed the IP limit, the key's passed the key's.
      expect(text).toMatch(
        /nft_ratelimit_decisions_total\{policy="ipKey",scope="ip",decision="allowed"\} 6\n/,
      )
      expect(text).toMatch(
        /nft_ratelimit_decisions_total\{policy="key",scope="credential",decision="allowed"\} 4\n/,
      )
      // The credential cache: the first use of the key asked the database.
      expect(text).toMatch(/nft_credential_cache_total\{result="miss"\} [1-9]/)
      expect(text).toMatch(/nft_credential_cache_total\{result="hit"\} \d/)
      for (const gauge of [
        'nft_db_pool_connections',
        'nft_db_pool_idle_connections',
        'nft_db_pool_waiting_requests',
        'nft_db_pool_max_connections',
        'nft_webhook_jobs_held',
      ]) {
        expect(text).toMatch(new RegExp(`# TYPE ${gauge} gauge\\n${gauge} \\d+\\n`))
      }
      expect(text).toMatch(/nft_webhook_attempts_in_flight\{endpoints="failing"\} \d+\n/)
      expect((await fetch(`http://127.0.0.1:${metrics}/`)).status).toBe(404)
      // JSON log lines when stdout is not a terminal.
      const lines = output().trim().split('\n')
      for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow()
    } finally {
      child.kill('SIGTERM')
      await new Promise((r) => child.once('exit', r))
    }
  }, 90_000)
})

describe('stopping the web process', () => {
  it('finishes an in-flight request on SIGHUP (a closed terminal), as on SIGTERM, then exits 0', async () => {
    const [port, metrics] = [await freePort(), await freePort()]
    const { child } = await startWebProcess({
      DATABASE_URL: tdb.url,
      PORT: String(port),
      METRICS_PORT: String(metrics),
    })
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
    const locker = await tdb.pool.connect()
    try {
      // Issuing a demo token writes demo_tokens: held locked, the request stays in flight.
      await locker.query('BEGIN')
      await locker.query('LOCK TABLE demo_tokens IN ACCESS EXCLUSIVE MODE')
      const answer = fetch(`http://127.0.0.1:${port}/v1/demo-token`, { method: 'POST' }).then(
        (r) => r.status,
        (err: Error) => err.message,
      )
      await new Promise((r) => setTimeout(r, 500))
      child.kill('SIGHUP')
      await new Promise((r) => setTimeout(r, 300))
      await locker.query('COMMIT')
      expect(await answer).toBe(200)
      expect(await exited).toBe(0)
    } finally {
      locker.release()
      if (child.exitCode === null) child.kill('SIGKILL')
    }
  }, 90_000)
})

describe('a database that takes connections and never answers', () => {
  it('answers 503 within twice DB_STATEMENT_TIMEOUT_MS instead of holding the request', async () => {
    // A TCP server that accepts and stays silent: no PostgreSQL greeting, no reset.
    const sockets = new Set<Socket>()
    const silent = createServer((socket) => sockets.add(socket))
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
    const url = `postgres://postgres@127.0.0.1:${(silent.address() as AddressInfo).port}/postgres`
    const [port, metrics] = [await freePort(), await freePort()]
    const { child } = await startWebProcess({
      DATABASE_URL: url,
      DB_STATEMENT_TIMEOUT_MS: '500',
      PORT: String(port),
      METRICS_PORT: String(metrics),
    })
    try {
      const started = Date.now()
      const res = await fetch(`http://127.0.0.1:${port}/v1/demo-token`, { method: 'POST' })
      expect(res.status).toBe(503)
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('SERVICE_UNAVAILABLE')
      expect(Date.now() - started).toBeLessThan(5_000)
    } finally {
      child.kill('SIGKILL')
      for (const socket of sockets) socket.destroy()
      await new Promise((resolve) => silent.close(resolve))
    }
  }, 90_000)
})
