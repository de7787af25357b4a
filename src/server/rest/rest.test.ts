/**
 * The /v1 REST layer end to end over HTTP, against a real database: the
 * error envelope for every failure class, HEAD, ETag/304, compression, and
 * the database going away (503) and coming back.
 */
import http from 'node:http'
import net from 'node:net'
import { gunzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ApiServer, startApiServer } from '@/test/api-client'
import { createTestDatabase, isEmbeddedTestDatabase, type TestDatabase } from '@/test/db'

function expectEnvelope(res: Response, body: unknown, code: string) {
  const requestId = res.headers.get('x-request-id')
  expect(requestId).toBeTruthy()
  expect(body).toEqual({ error: { code, message: expect.any(String), request_id: requestId } })
  expect(JSON.stringify(body)).not.toMatch(/select |relation|stack|\.ts:\d|prisma/i)
}

/** A TCP proxy in front of PostgreSQL that a test can cut and restore: a real outage. */
async function startProxy(target: URL) {
  const sockets = new Set<net.Socket>()
  let up = true
  const server = net.createServer((client) => {
    if (!up) return client.destroy()
    const upstream = net.connect(Number(target.port || 5432), target.hostname)
    for (const s of [client, upstream]) {
      sockets.add(s)
      s.on('close', () => sockets.delete(s))
      s.on('error', () => {})
    }
    client.pipe(upstream).pipe(client)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    port: (server.address() as net.AddressInfo).port,
    cut() {
      up = false
      for (const s of sockets) s.destroy()
    },
    restore() {
      up = true
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

function rawGet(url: string, headers: Record<string, string>) {
  return new Promise<{ headers: http.IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
    http
      .get(url, { headers }, (r) => {
        const chunks: Buffer[] = []
        r.on('data', (c) => chunks.push(c))
        r.on('end', () => resolve({ headers: r.headers, body: Buffer.concat(chunks) }))
      })
      .on('error', reject)
  })
}

describe('/v1 REST layer', () => {
  let db: TestDatabase
  let api: ApiServer

  beforeAll(async () => {
    db = await createTestDatabase()
    await db.prisma.indexerState.create({
      data: {
        network: 'devnet',
        chainId: 31337n,
        startBlock: 0n,
        lastSeenBlock: 120n,
        lastIndexedBlock: 118n,
        lastConfirmedBlock: 118n,
        coverageStatus: 'complete',
        coverageStartBlock: 0n,
        coverageVerifiedAt: new Date('2026-01-02T03:04:05Z'),
      },
    })
    api = await startApiServer(db.url)
  })

  afterAll(async () => {
    await api?.close()
    await db?.drop()
  })

  it('serves the indexer status with decimal strings and a request id', async () => {
    const res = await api.request('/v1/indexer/status')
    expect(res.status).toBe(200)
    const body = await res.json()
    expect(body.data).toMatchObject({
      network: 'devnet',
      coverage_status: 'complete',
      coverage_start_block: '0',
      last_seen_block: '120',
      last_confirmed_block: '118',
      coverage_verified_at: '2026-01-02T03:04:05.000Z',
    })
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/)
  })

  it('answers 404 in the envelope for an unknown path', async () => {
    const res = await api.request('/v1/no/such/thing')
    expect(res.status).toBe(404)
    expectEnvelope(res, await res.json(), 'NOT_FOUND')
  })

  it('answers 405 with Allow (every method the path answers, OPTIONS too) for a wrong method', async () => {
    const res = await api.request('/v1/indexer/status', { method: 'DELETE' })
    expect(res.status).toBe(405)
    expect(res.headers.get('allow')).toBe('GET, HEAD, OPTIONS')
    expectEnvelope(res, await res.json(), 'METHOD_NOT_ALLOWED')
  })

  it('answers 400 INVALID_ARGUMENT naming an unknown query parameter', async () => {
    const res = await api.request('/v1/indexer/status?netwrok=devnet')
    expect(res.status).toBe(400)
    const body = await res.json()
    expectEnvelope(res, body, 'INVALID_ARGUMENT')
    expect(body.error.message).toContain("'netwrok'")
  })

  it('reads parameters as trpc-to-openapi does: repeated keys and __proto__ refused, path case and trailing slash ignored', async () => {
    const repeated = await api.request('/v1/indexer/status?network=devnet&network=devnet')
    expect(repeated.status).toBe(400)
    const repeatedBody = await repeated.json()
    expectEnvelope(repeated, repeatedBody, 'INVALID_ARGUMENT')
    expect(repeatedBody.error.message).toContain('network')

    const proto = await api.request('/v1/indexer/status?__proto__=x')
    expect(proto.status).toBe(400)
    const protoBody = await proto.json()
    expectEnvelope(proto, protoBody, 'INVALID_ARGUMENT')
    expect(protoBody.error.message).toContain("'__proto__'")

    for (const path of ['/v1/indexer/status/', '/v1/Indexer/Status'])
      expect((await api.request(path)).status, path).toBe(200)
  })

  it('drains a body sent to POST /v1/demo-token unread and keeps the connection usable', async () => {
    const issued = await api.request('/v1/demo-token', {
      method: 'POST',
      headers: { 'Content-Type': 'text/plain' },
      body: 'x'.repeat(64 * 1024),
    })
    expect(issued.status).toBe(200)
    expect((await issued.json()).data.token).toMatch(/^demo_/)
    expect((await api.request('/v1/indexer/status')).status).toBe(200)
  })

  it('answers 404 for another network on the status endpoint', async () => {
    const res = await api.request('/v1/indexer/status?network=mainnet')
    expect(res.status).toBe(404)
    expectEnvelope(res, await res.json(), 'NOT_FOUND')
  })

  it('answers HEAD without a body', async () => {
    const res = await api.request('/v1/indexer/status', { method: 'HEAD' })
    expect(res.status).toBe(200)
    expect(await res.text()).toBe('')
    expect(res.headers.get('etag')).toBeTruthy()
  })

  it('revalidates with ETag: If-None-Match gives 304 without a body', async () => {
    const first = await api.request('/v1/indexer/status')
    const etag = first.headers.get('etag')!
    const again = await api.request('/v1/indexer/status', { headers: { 'If-None-Match': etag } })
    expect(again.status).toBe(304)
    expect(await again.text()).toBe('')
  })

  it('compresses large responses when asked', async () => {
    const raw = await rawGet(`${api.base}/v1/no/such/endpoint/${'x'.repeat(1200)}`, {
      'Accept-Encoding': 'gzip',
      Authorization: `Bearer ${api.token}`,
    })
    expect(raw.headers['content-encoding']).toBe('gzip')
    expect(JSON.parse(gunzipSync(raw.body).toString()).error.code).toBe('NOT_FOUND')
  })

  it('describes /v1 procedures in /openapi.json with the error envelope', async () => {
    const doc = await (await fetch(`${api.base}/openapi.json`)).json()
    expect(doc.openapi).toMatch(/^3\.1/)
    const status = doc.paths['/v1/indexer/status'].get
    expect(status.responses['200']).toBeDefined()
    expect(status.responses['404'].content['application/json'].schema.$ref).toBe(
      '#/components/schemas/ErrorEnvelope',
    )
  })

  it('answers 500 INTERNAL_ERROR without internals when a query fails unexpectedly', async () => {
    await db.pool.query('ALTER TABLE indexer_state RENAME TO indexer_state_gone')
    try {
      api.refresh()
      const res = await api.request('/v1/indexer/status')
      expect(res.status).toBe(500)
      expectEnvelope(res, await res.json(), 'INTERNAL_ERROR')
    } finally {
      await db.pool.query('ALTER TABLE indexer_state_gone RENAME TO indexer_state')
      api.refresh()
    }
  })

  // A lock held by another session makes the read wait: on the embedded single-process server it would block every session.
  it.skipIf(isEmbeddedTestDatabase())(
    'answers 503 SERVICE_UNAVAILABLE, not 500, when a statement outlives DB_STATEMENT_TIMEOUT_MS',
    async () => {
      const server = await startApiServer(db.url, { DB_STATEMENT_TIMEOUT_MS: '300' })
      const locker = await db.pool.connect()
      try {
        expect((await server.request('/v1/activity')).status).toBe(200)
        await locker.query('BEGIN')
        await locker.query('LOCK TABLE transfers IN ACCESS EXCLUSIVE MODE')
        const started = performance.now()
        const res = await server.request('/v1/activity')
        expect(res.status).toBe(503)
        const body = await res.json()
        expectEnvelope(res, body, 'SERVICE_UNAVAILABLE')
        expect(body.error.message).toMatch(/did not answer in time/)
        expect(performance.now() - started).toBeLessThan(3000)
        await locker.query('ROLLBACK')
        expect((await server.request('/v1/activity')).status).toBe(200)
      } finally {
        await locker.query('ROLLBACK').catch(() => undefined)
        locker.release()
        await server.close()
      }
    },
  )

  it('answers 503 SERVICE_UNAVAILABLE while the database is unreachable, and recovers', async () => {
    const target = new URL(db.url)
    const proxy = await startProxy(target)
    const viaProxy = new URL(db.url)
    viaProxy.hostname = '127.0.0.1'
    viaProxy.port = String(proxy.port)
    const server = await startApiServer(viaProxy.toString())
    try {
      expect((await server.request('/v1/indexer/status')).status).toBe(200)
      proxy.cut()
      server.refresh()
      await new Promise((r) => setTimeout(r, 1100)) // past any credential cache
      const res = await server.request('/v1/indexer/status')
      expect(res.status).toBe(503)
      expectEnvelope(res, await res.json(), 'SERVICE_UNAVAILABLE')
      // Demo tokens that could not be issued do not use up the issuance window (5 a minute).
      const issue = () => fetch(`${server.base}/v1/demo-token`, { method: 'POST' })
      for (let i = 0; i < 6; i++) {
        const refused = await issue()
        expect(refused.status).toBe(503)
        expectEnvelope(refused, await refused.json(), 'SERVICE_UNAVAILABLE')
      }
      proxy.restore()
      server.refresh()
      await expect
        .poll(async () => (await server.request('/v1/indexer/status')).status, { timeout: 10_000 })
        .toBe(200)
      expect((await issue()).status).toBe(200)
    } finally {
      await server.close()
      await proxy.close()
    }
  })
})
