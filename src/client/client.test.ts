/**
 * The typed client against the real service (PostgreSQL, the REST layer,
 * real keys) over the API test dataset: lists walked through the client's
 * iterators equal a manual walk that copies `next_page_params` by hand;
 * single resources, HEAD, the demo token, and failures as NftDataApiError.
 * Retries against a real local HTTP server that answers 429 and 503.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ApiServer, startApiServer } from '@/test/api-client'
import { buildDataset, c, people } from '@/test/api-dataset'
import { tempMediaDir } from '@/test/api-fixtures'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import {
  createNftDataClient,
  type ListPath,
  NftDataApiError,
  type NftDataClient,
  retryAfterMs,
  retryDelayMs,
} from './index'

let db: TestDatabase
let api: ApiServer
let client: NftDataClient

beforeAll(async () => {
  db = await createTestDatabase()
  const mediaDir = tempMediaDir()
  await buildDataset(db.pool, mediaDir)
  api = await startApiServer(db.url, { MEDIA_DIR: mediaDir })
  client = createNftDataClient({ baseUrl: api.base, apiKey: api.token })
})

afterAll(async () => {
  await api?.close()
  await db?.drop()
})

/** A list walked by hand: fetch, copy next_page_params into the query, until has_more is false. */
async function manualWalk(path: string, query: Record<string, string>) {
  const items: unknown[] = []
  let pages = 0
  let params = { ...query }
  for (;;) {
    const { body } = await api.json<{
      data: unknown[]
      pagination: { has_more: boolean; next_page_params?: Record<string, string | number> }
    }>(`${path}?${new URLSearchParams(params)}`)
    pages++
    items.push(...body.data)
    if (!body.pagination.has_more) return { items, pages }
    params = {
      ...params,
      ...Object.fromEntries(
        Object.entries(body.pagination.next_page_params!).map(([k, v]) => [k, String(v)]),
      ),
    }
  }
}

async function collect<T>(iterator: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = []
  for await (const item of iterator) out.push(item)
  return out
}

describe('lists', () => {
  it('pages() follows next_page_params over a multi-page list, as a manual walk does', async () => {
    const pages = await collect(client.pages('/v1/activity', { query: { limit: 3 } }))
    const manual = await manualWalk('/v1/activity', { limit: '3' })
    expect(pages.length).toBe(manual.pages)
    expect(pages.length).toBeGreaterThan(3)
    expect(pages.flatMap((p) => p.data)).toEqual(manual.items)
    expect(pages.at(-1)!.pagination.has_more).toBe(false)
    expect(pages.slice(0, -1).every((p) => p.pagination.next_page_params)).toBe(true)
  })

  it('items() walks every list endpoint, its filters kept on every page', async () => {
    const lists: Array<[ListPath, string, Record<string, string>, Record<string, unknown>]> = [
      ['/v1/collections', '/v1/collections', { limit: '2' }, {}],
      [
        '/v1/collections/{address}/nfts',
        `/v1/collections/${c.pioneers}/nfts`,
        { limit: '5', include_burned: 'true' },
        { address: c.pioneers },
      ],
      [
        '/v1/owners/{address}/nfts',
        `/v1/owners/${people.alice}/nfts`,
        { limit: '2' },
        { address: people.alice },
      ],
      [
        '/v1/collections/{address}/transfers',
        `/v1/collections/${c.pioneers}/transfers`,
        { limit: '4' },
        { address: c.pioneers },
      ],
      [
        '/v1/nfts/{address}/{tokenId}/transfers',
        `/v1/nfts/${c.pioneers}/4/transfers`,
        { limit: '1' },
        { address: c.pioneers, tokenId: '4' },
      ],
      ['/v1/activity', '/v1/activity', { limit: '4', event_type: 'mint' }, {}],
      [
        '/v1/collections/{address}/owners',
        `/v1/collections/${c.pioneers}/owners`,
        { limit: '1' },
        { address: c.pioneers },
      ],
      [
        '/v1/collections/{address}/owners',
        `/v1/collections/${c.pioneers}/owners`,
        { limit: '1', at_block: '104' },
        { address: c.pioneers },
      ],
      [
        '/v1/owners/{address}/nfts',
        `/v1/owners/${people.alice}/nfts`,
        { limit: '2', at_block: '102' },
        { address: people.alice },
      ],
      [
        '/v1/owners/{address}/collections',
        `/v1/owners/${people.alice}/collections`,
        { limit: '1' },
        { address: people.alice },
      ],
      [
        '/v1/owners/{address}/transfers',
        `/v1/owners/${people.alice}/transfers`,
        { limit: '2', direction: 'out' },
        { address: people.alice },
      ],
    ]
    for (const [template, concrete, query, path] of lists) {
      const manual = await manualWalk(concrete, query)
      expect(manual.pages, concrete).toBeGreaterThan(1)
      const typedQuery = Object.fromEntries(
        Object.entries(query).map(([k, v]) => [
          k,
          k === 'limit' ? Number(v) : k === 'include_burned' ? v === 'true' : v,
        ]),
      )
      const items = await collect(
        client.items(template as '/v1/activity', { path, query: typedQuery } as never),
      )
      expect(items, concrete).toEqual(manual.items)
    }
    const mints = await collect(client.items('/v1/activity', { query: { limit: 4, event_type: 'mint' } }))
    expect(mints.every((e) => e.event_type === 'mint')).toBe(true)
  })

  it('walks the ownership views with their filters: snapshots stay on their block, collections repeat', async () => {
    // A snapshot's pages carry at_block: every page is of block 102, where bob held pioneers 2, 4, … 12.
    const held = await collect(
      client.items('/v1/owners/{address}/nfts', {
        path: { address: people.bob },
        query: { limit: 2, at_block: '102' },
      }),
    )
    expect(held.filter((n) => n.collection_address === c.pioneers).map((n) => n.token_id)).toEqual([
      '2',
      '4',
      '6',
      '8',
      '10',
      '12',
    ])
    const pages = await collect(
      client.pages('/v1/collections/{address}/owners', {
        path: { address: c.pioneers },
        query: { limit: 1, at_block: '101' },
      }),
    )
    // Six tokens each: ties ordered by owner address.
    expect(pages.map((p) => p.data.map((h) => [h.owner, h.token_count]))).toEqual(
      [people.alice, people.bob].sort().map((owner) => [[owner, 6]]),
    )
    expect(pages[0]!.pagination.next_page_params?.at_block).toBe('101')
    // A repeated collection parameter, kept on every page.
    const only = await collect(
      client.items('/v1/owners/{address}/nfts', {
        path: { address: people.alice },
        query: { limit: 1, collection: [c.glyphs, c.percent] },
      }),
    )
    expect(new Set(only.map((n) => n.collection_address))).toEqual(new Set([c.glyphs]))
    expect(only.length).toBe(3)
  })
})

describe('single resources and failures', () => {
  it('get() answers typed bodies; HEAD goes through the openapi-fetch client', async () => {
    const nft = await client.get('/v1/nfts/{address}/{tokenId}', {
      path: { address: c.pioneers, tokenId: '2' },
    })
    expect(nft.data).toMatchObject({ collection_address: c.pioneers, token_id: '2', is_burned: false })
    const status = await client.get('/v1/indexer/status')
    expect(status.data.network).toBe('devnet')
    const head = await client.api.HEAD('/v1/collections', {})
    expect(head.response.status).toBe(200)
  })

  it('throws NftDataApiError with the envelope, without retrying 400 or 404', async () => {
    const retries: number[] = []
    const strict = createNftDataClient({
      baseUrl: api.base,
      apiKey: api.token,
      retry: { onRetry: ({ status }) => retries.push(status) },
    })
    const missing = await strict
      .get('/v1/collections/{address}', { path: { address: `0x${'ab'.repeat(20)}` } })
      .catch((e: unknown) => e)
    expect(missing).toBeInstanceOf(NftDataApiError)
    const error = missing as NftDataApiError
    expect(error.status).toBe(404)
    expect(error.code).toBe('NOT_FOUND')
    expect(error.retryable).toBe(false)
    expect(error.requestId).toMatch(/^[0-9a-f-]{36}$/)
    expect(error.envelope.error.request_id).toBe(error.requestId)
    const bad = (await strict
      .get('/v1/activity', { query: { limit: 1000 } })
      .catch((e) => e)) as NftDataApiError
    expect([bad.status, bad.canonicalCode]).toEqual([400, 'INVALID_ARGUMENT'])
    expect(bad.envelope.error.message).toContain('limit')
    const anonymous = createNftDataClient({ baseUrl: api.base })
    const unauthorized = (await anonymous.get('/v1/activity').catch((e) => e)) as NftDataApiError
    expect(unauthorized.code).toBe('UNAUTHORIZED')
    expect(retries).toEqual([])
  })

  it('issues a demo token that the client then reads with', async () => {
    const token = await createNftDataClient({ baseUrl: api.base }).issueDemoToken()
    expect(token.token).toMatch(/^demo_/)
    const demo = createNftDataClient({ baseUrl: api.base, apiKey: token.token })
    expect((await demo.get('/v1/indexer/status')).data.network).toBe('devnet')
  })
})

type ScriptStep =
  | { status: number; headers?: Record<string, string>; body: unknown }
  /** cut: headers and half the promised body, then the connection closes; hang: no answer; reset: closed at once. */
  | { fault: 'cut' | 'hang' | 'reset' }

/** A real HTTP server answering from a script of responses; the last one repeats. */
async function scriptedServer(script: ScriptStep[]) {
  const requests: number[] = []
  const server = http.createServer((req, res) => {
    requests.push(Date.now())
    req.resume()
    const step = script[Math.min(requests.length - 1, script.length - 1)]!
    if ('fault' in step) {
      if (step.fault === 'reset') req.socket.destroy()
      if (step.fault === 'cut') {
        res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': '100' })
        res.write('{"data":{"network"')
        setTimeout(() => req.socket.destroy(), 20)
      }
      return
    }
    res.writeHead(step.status, { 'Content-Type': 'application/json', ...step.headers })
    res.end(typeof step.body === 'string' ? step.body : JSON.stringify(step.body))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}

const STATUS_BODY = {
  data: {
    network: 'devnet',
    coverage_status: 'complete',
    coverage_start_block: '0',
    last_confirmed_block: '10',
    last_seen_block: '12',
    updated_at: '2026-01-02T03:04:05.000Z',
  },
}
const rateLimited = (retryAfter: string) => ({
  status: 429,
  headers: { 'Retry-After': retryAfter, 'RateLimit-Reset': retryAfter },
  body: { error: { code: 'RATE_LIMITED', message: 'Rate limit exceeded.', request_id: 'r-1' } },
})

describe('retries', () => {
  it('waits Retry-After on 429, then answers the 200', async () => {
    const server = await scriptedServer([rateLimited('1'), { status: 200, body: STATUS_BODY }])
    try {
      const delays: number[] = []
      const retrying = createNftDataClient({
        baseUrl: server.base,
        apiKey: 'k',
        retry: { baseDelayMs: 10, onRetry: ({ delayMs }) => delays.push(delayMs) },
      })
      const body = await retrying.get('/v1/indexer/status')
      expect(body.data.last_seen_block).toBe('12')
      expect(server.requests).toHaveLength(2)
      expect(server.requests[1]! - server.requests[0]!).toBeGreaterThanOrEqual(990)
      // The second asked for, plus the jittered backoff (base 10 ms).
      expect(delays).toHaveLength(1)
      expect(delays[0]).toBeGreaterThanOrEqual(1000)
      expect(delays[0]).toBeLessThan(1010)
    } finally {
      await server.close()
    }
  })

  it('backs off exponentially with jitter on 503, and gives up after the attempts with the last error', async () => {
    const unavailable = { status: 503, body: { error: { code: 'UNAVAILABLE', message: 'down' } } }
    const server = await scriptedServer([unavailable])
    try {
      const events: Array<{ attempt: number; delayMs: number }> = []
      const retrying = createNftDataClient({
        baseUrl: server.base,
        retry: { attempts: 4, baseDelayMs: 40, onRetry: (e) => events.push(e) },
      })
      const error = (await retrying.get('/v1/activity').catch((e) => e)) as NftDataApiError
      expect(error).toBeInstanceOf(NftDataApiError)
      expect([error.status, error.code, error.canonicalCode, error.retryable]).toEqual([
        503,
        'UNAVAILABLE',
        'SERVICE_UNAVAILABLE',
        true,
      ])
      expect(server.requests).toHaveLength(4)
      expect(events.map((e) => e.attempt)).toEqual([1, 2, 3])
      // Full jitter: each wait lies in [0, base * 2^(attempt-1)).
      for (const e of events) expect(e.delayMs).toBeLessThan(40 * 2 ** (e.attempt - 1))
    } finally {
      await server.close()
    }
  })

  it('stops waiting as soon as the signal aborts', async () => {
    const server = await scriptedServer([rateLimited('30')])
    try {
      const retrying = createNftDataClient({ baseUrl: server.base, apiKey: 'k' })
      const controller = new AbortController()
      const started = Date.now()
      setTimeout(() => controller.abort(), 150)
      const error = await retrying.get('/v1/activity', { signal: controller.signal }).catch((e) => e)
      expect((error as Error).name).toBe('AbortError')
      expect(Date.now() - started).toBeLessThan(2000)
      expect(server.requests).toHaveLength(1)
    } finally {
      await server.close()
    }
  })

  it("gives an envelope for a gateway's page, and retries a read's 502", async () => {
    const server = await scriptedServer([{ status: 502, body: '<html>Bad gateway</html>' }])
    try {
      const error = (await createNftDataClient({
        baseUrl: server.base,
        retry: { attempts: 2, baseDelayMs: 10 },
      })
        .get('/v1/activity')
        .catch((e) => e)) as NftDataApiError
      expect(error).toBeInstanceOf(NftDataApiError)
      expect([error.status, error.retryable]).toEqual([502, true])
      expect(error.envelope.error).toMatchObject({
        code: 'BAD_GATEWAY',
        message: expect.stringContaining('502'),
      })
      expect(server.requests).toHaveLength(2)
    } finally {
      await server.close()
    }
  })

  it('throws BAD_RESPONSE for a 200 that is not the API (a captive portal), without retrying', async () => {
    const server = await scriptedServer([
      { status: 200, headers: { 'Content-Type': 'text/html' }, body: '<html>Sign in to the Wi-Fi</html>' },
    ])
    try {
      const client = createNftDataClient({ baseUrl: server.base, retry: { baseDelayMs: 10 } })
      const error = (await client.get('/v1/activity').catch((e) => e)) as NftDataApiError
      expect(error).toBeInstanceOf(NftDataApiError)
      expect([error.status, error.code, error.retryable]).toEqual([200, 'BAD_RESPONSE', false])
      expect(error.message).toContain('<html>Sign in')
      const items = await collect(client.items('/v1/activity')).catch((e) => e)
      expect((items as NftDataApiError).code).toBe('BAD_RESPONSE')
      expect(server.requests).toHaveLength(2)
    } finally {
      await server.close()
    }
  })

  it('retries a body cut short and a reset connection, then answers; gives NETWORK_ERROR when they persist', async () => {
    const server = await scriptedServer([
      { fault: 'cut' },
      { fault: 'reset' },
      { status: 200, body: STATUS_BODY },
    ])
    try {
      const retries: number[] = []
      const client = createNftDataClient({
        baseUrl: server.base,
        retry: { baseDelayMs: 10, onRetry: ({ status }) => retries.push(status) },
      })
      expect((await client.get('/v1/indexer/status')).data.last_seen_block).toBe('12')
      expect(retries).toEqual([0, 0])
      expect(server.requests).toHaveLength(3)
    } finally {
      await server.close()
    }
    const broken = await scriptedServer([{ fault: 'reset' }])
    try {
      const client = createNftDataClient({ baseUrl: broken.base, retry: { attempts: 3, baseDelayMs: 10 } })
      const error = (await client.get('/v1/activity').catch((e) => e)) as NftDataApiError
      expect(error).toBeInstanceOf(NftDataApiError)
      expect([error.status, error.code, error.retryable]).toEqual([0, 'NETWORK_ERROR', true])
      expect(broken.requests).toHaveLength(3)
      // A POST that may have reached the server is not sent again.
      const issued = (await client.issueDemoToken().catch((e) => e)) as NftDataApiError
      expect(issued.code).toBe('NETWORK_ERROR')
      expect(broken.requests).toHaveLength(4)
    } finally {
      await broken.close()
    }
  })

  it('gives up an attempt that gets no answer within timeoutMs, and retries it', async () => {
    const server = await scriptedServer([{ fault: 'hang' }])
    try {
      const client = createNftDataClient({
        baseUrl: server.base,
        retry: { attempts: 2, baseDelayMs: 10, timeoutMs: 300 },
      })
      const started = Date.now()
      const error = (await client.get('/v1/activity').catch((e) => e)) as NftDataApiError
      expect([error.status, error.code, error.retryable]).toEqual([0, 'TIMEOUT', true])
      expect(error.message).toContain('no answer within 300 ms')
      expect(server.requests).toHaveLength(2)
      expect(Date.now() - started).toBeGreaterThanOrEqual(600)
      expect(Date.now() - started).toBeLessThan(5_000)
    } finally {
      await server.close()
    }
  })

  it('refuses a page that says has_more without a new cursor, instead of ending short or looping', async () => {
    const page = (next?: object) => ({
      status: 200,
      body: { data: [{ n: 1 }], pagination: { limit: 1, has_more: true, next_page_params: next } },
    })
    const cursor = { before_timestamp: 5, before_id: 7 }
    for (const script of [[page()], [page(cursor)]]) {
      const server = await scriptedServer(script)
      try {
        const client = createNftDataClient({ baseUrl: server.base })
        const error = (await collect(client.items('/v1/activity')).catch((e) => e)) as NftDataApiError
        expect(error.code).toBe('BAD_RESPONSE')
        expect(error.message).toContain('next_page_params')
        expect(server.requests.length).toBeLessThanOrEqual(2)
      } finally {
        await server.close()
      }
    }
  })
})

describe('retry delays', () => {
  it('adds the jittered backoff to Retry-After, so clients refused together come back apart', () => {
    expect(retryDelayMs(1, '1', { baseDelayMs: 500 }, () => 0)).toBe(1000)
    expect(retryDelayMs(1, '1', { baseDelayMs: 500 }, () => 0.5)).toBe(1250)
    expect(retryDelayMs(3, null, { baseDelayMs: 500 }, () => 0.5)).toBe(1000)
    expect(retryDelayMs(20, null, { baseDelayMs: 500, maxDelayMs: 30_000 }, () => 0.99)).toBe(29_700)
  })

  it('reads Retry-After as seconds or an HTTP date, and nothing else', () => {
    expect(retryAfterMs('2')).toBe(2000)
    expect(retryAfterMs('1.5')).toBeUndefined()
    expect(retryAfterMs('soon')).toBeUndefined()
    // Longer than a timer can wait: capped, not fired at once.
    expect(retryAfterMs('3000000')).toBe(2 ** 31 - 1)
    const inTenSeconds = new Date(Date.now() + 10_000).toUTCString()
    expect(retryAfterMs(inTenSeconds)).toBeGreaterThan(8_000)
    expect(retryAfterMs(inTenSeconds)).toBeLessThanOrEqual(10_000)
  })
})
