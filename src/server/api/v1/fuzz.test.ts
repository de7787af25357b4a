/**
 * Property-based tests: random and hostile values in every path and query
 * parameter of every read endpoint (and the media path). Whatever arrives,
 * the answer is a documented status — never a 500 or a 503 — every error is
 * the envelope, every body validates against /openapi.json, and no request
 * is slow.
 */
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ApiServer, startApiServer } from '@/test/api-client'
import { OpenApiContract, type OpenApiDoc } from '@/test/api-contract'
import { buildDataset, c, people } from '@/test/api-dataset'
import { tempMediaDir } from '@/test/api-fixtures'
import { createTestDatabase, type TestDatabase } from '@/test/db'

let db: TestDatabase
let api: ApiServer
let contract: OpenApiContract

/** Longest a single request may take, even a hostile one (the statement timeout is 5 s). */
const SLOW_MS = 1500

beforeAll(async () => {
  db = await createTestDatabase()
  const mediaDir = tempMediaDir()
  await buildDataset(db.pool, mediaDir)
  api = await startApiServer(db.url, { MEDIA_DIR: mediaDir })
  contract = await OpenApiContract.load(
    (await (await fetch(`${api.base}/openapi.json`)).json()) as OpenApiDoc,
  )
}, 120_000)

afterAll(async () => {
  await api?.close()
  await db?.drop()
})

const hostile = fc.constantFrom(
  '',
  ' ',
  '0',
  '-1',
  '1e3',
  '0x10',
  '1.5',
  'NaN',
  'Infinity',
  '9007199254740993',
  '9'.repeat(79),
  '9'.repeat(400),
  'true',
  'null',
  'undefined',
  '__proto__',
  'constructor',
  "' OR 1=1 --",
  "'; DROP TABLE transfers; --",
  '%',
  '%%',
  '_',
  '\\',
  '\\%',
  '\u0000',
  'a\u0000b',
  '\uFFFF',
  '\uD800',
  '😀',
  '../../etc/passwd',
  '<script>alert(1)</script>',
  '{"$gt":""}',
  'a'.repeat(201),
  'a'.repeat(5000),
  c.pioneers,
  c.pioneers.toUpperCase(),
  people.alice,
  '0x0000000000000000000000000000000000000000',
  '115792089237316195423570985008687907853269984665640564039457584007913129639935',
  '1767225600000000',
  'devnet',
  'mint',
  'burn',
)

/** A parameter value: hostile, arbitrary text, or an integer of any size. */
const value = fc.oneof(
  { weight: 3, arbitrary: hostile },
  { weight: 2, arbitrary: fc.string({ maxLength: 60 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) },
  { weight: 2, arbitrary: fc.bigInt({ min: -(2n ** 70n), max: 2n ** 260n }).map(String) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 200 }).map(String) },
)

interface Endpoint {
  path: (p: string[]) => string
  pathParams: number
  query: string[]
}

const QUERY = {
  timeFeed: ['limit', 'before_timestamp', 'before_id'],
  tokens: ['limit', 'after_token_id', 'after_id', 'include_burned', 'include_metadata'],
}

const ENDPOINTS: Record<string, Endpoint> = {
  collections: {
    path: () => '/v1/collections',
    pathParams: 0,
    query: [...QUERY.timeFeed, 'network', 'search'],
  },
  collection: { path: ([a]) => `/v1/collections/${a}`, pathParams: 1, query: ['network'] },
  collectionNfts: { path: ([a]) => `/v1/collections/${a}/nfts`, pathParams: 1, query: QUERY.tokens },
  nft: { path: ([a, t]) => `/v1/nfts/${a}/${t}`, pathParams: 2, query: ['include_metadata'] },
  nftMetadata: { path: ([a, t]) => `/v1/nfts/${a}/${t}/metadata`, pathParams: 2, query: [] },
  ownerNfts: {
    path: ([a]) => `/v1/owners/${a}/nfts`,
    pathParams: 1,
    query: ['limit', 'after_collection', 'after_token_id', 'after_id', 'include_metadata'],
  },
  collectionTransfers: {
    path: ([a]) => `/v1/collections/${a}/transfers`,
    pathParams: 1,
    query: QUERY.timeFeed,
  },
  tokenTransfers: { path: ([a, t]) => `/v1/nfts/${a}/${t}/transfers`, pathParams: 2, query: QUERY.timeFeed },
  activity: {
    path: () => '/v1/activity',
    pathParams: 0,
    query: [...QUERY.timeFeed, 'network', 'collection', 'event_type'],
  },
  status: { path: () => '/v1/indexer/status', pathParams: 0, query: ['network'] },
}

/** Path parameters: mostly valid-looking ones, sometimes anything. */
const pathParam = fc.oneof(fc.constantFrom(c.pioneers, c.glyphs, people.alice, '1', '2', '0'), value)

function requestArbitrary(endpoint: Endpoint) {
  const known = fc
    .subarray(endpoint.query)
    .chain((names) => fc.tuple(...names.map((name) => value.map((v) => [name, v] as [string, string]))))
  const unknown = fc.array(fc.tuple(fc.constantFrom('sort', 'offset', 'page', 'x', 'limit'), value), {
    maxLength: 2,
  })
  return fc.record({
    params: fc.array(pathParam, { minLength: endpoint.pathParams, maxLength: endpoint.pathParams }),
    query: known,
    extra: fc.oneof(
      { weight: 4, arbitrary: fc.constant([] as Array<[string, string]>) },
      { weight: 1, arbitrary: unknown },
    ),
    head: fc.boolean(),
  })
}

async function expectWellBehaved(path: string, head: boolean) {
  const started = performance.now()
  const res = await api.request(path, { method: head ? 'HEAD' : 'GET' })
  const text = await res.text()
  const elapsed = performance.now() - started
  expect(elapsed, `${path} took ${elapsed.toFixed(0)} ms`).toBeLessThan(SLOW_MS)
  expect([200, 400, 404], `${path} answered ${res.status}: ${text.slice(0, 300)}`).toContain(res.status)
  if (head) {
    expect(text).toBe('')
    return
  }
  const body = JSON.parse(text)
  if (res.status >= 400) {
    expect(body).toEqual({
      error: {
        code: expect.any(String),
        message: expect.any(String),
        request_id: res.headers.get('x-request-id'),
      },
    })
    expect(text).not.toMatch(/select |relation|syntax|stack|\.ts:\d/i)
  }
  if (path.startsWith('/v1/'))
    await contract.expectResponse('GET', path.replace(/\/+$/, ''), res.status, body)
}

describe('hostile parameters', () => {
  for (const [name, endpoint] of Object.entries(ENDPOINTS)) {
    it(`${name}: never a 500, always the envelope, never slow`, async () => {
      await fc.assert(
        fc.asyncProperty(requestArbitrary(endpoint), async ({ params, query, extra, head }) => {
          // A path segment that decodes to nothing or to a slash changes the route, not the parameter.
          fc.pre(params.every((p) => p !== '' && !p.includes('/') && p !== '.' && p !== '..'))
          // Lone surrogates cannot be percent-encoded; a client sends U+FFFD instead.
          const path = endpoint.path(
            params.map((p) => encodeURIComponent(Buffer.from(p, 'utf8').toString('utf8'))),
          )
          const search = new URLSearchParams([...query, ...extra]).toString()
          await expectWellBehaved(search ? `${path}?${search}` : path, head)
        }),
        { numRuns: 80, interruptAfterTimeLimit: 25_000 },
      )
    }, 60_000)
  }

  it('media: never a 500, always the envelope', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.constantFrom('url', 'url', 'url', 'x'), value), { maxLength: 3 }),
        // Header values must be visible ASCII (fetch refuses anything else).
        fc.option(
          fc
            .oneof(
              hostile,
              fc.string({ maxLength: 20 }).map((s) => `bytes=${s}`),
            )
            .filter((v) => /^[\x21-\x7e][\x20-\x7e]*$/.test(v)),
        ),
        async (query, range) => {
          const search = new URLSearchParams(query).toString()
          const res = await fetch(`${api.base}/v1/media${search ? `?${search}` : ''}`, {
            headers: range === null ? {} : { Range: range },
          })
          expect([400, 404]).toContain(res.status)
          const body = await res.json()
          expect(body.error.request_id).toBe(res.headers.get('x-request-id'))
        },
      ),
      { numRuns: 100 },
    )
  })
})
