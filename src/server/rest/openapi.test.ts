/**
 * The OpenAPI document says what the REST layer does: every header a live
 * response carries is declared for its operation and status, each error
 * status has an example of its own code in the envelope, HEAD and 304 are
 * documented where the handler answers them, and the schemas carry the
 * formats, enums and defaults of the specification.
 */
import type {
  OpenAPIObject,
  OperationObject,
  ParameterObject,
  ResponseObject,
  SchemaObject,
} from 'openapi3-ts/oas31'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { API_ERROR_STATUS } from '@/server/errors/api-error'
import { type ApiServer, startApiServer } from '@/test/api-client'
import { OpenApiContract, type OpenApiDoc } from '@/test/api-contract'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import { openApiDocument } from './openapi'

/** Headers of HTTP itself, not of this API. */
const TRANSPORT = new Set([
  'content-type',
  'content-length',
  'date',
  'connection',
  'keep-alive',
  'transfer-encoding',
])

let db: TestDatabase
let api: ApiServer
let doc: OpenAPIObject
let contract: OpenApiContract

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
    },
  })
  api = await startApiServer(db.url)
  doc = (await (await fetch(`${api.base}/openapi.json`)).json()) as OpenAPIObject
  contract = await OpenApiContract.load(doc as unknown as OpenApiDoc)
})

afterAll(async () => {
  await api?.close()
  await db?.drop()
})

function operations(): Array<[string, string, OperationObject]> {
  return Object.entries(doc.paths ?? {}).flatMap(([path, item]) =>
    Object.entries(item as Record<string, OperationObject>).map(
      ([method, op]) => [method, path, op] as [string, string, OperationObject],
    ),
  )
}

const operation = (method: string, path: string) =>
  (doc.paths![path] as Record<string, OperationObject>)[method.toLowerCase()]!

/** The live response's API headers are all declared for this operation and status. */
function expectDeclaredHeaders(res: Response, method: string, path: string) {
  const response = operation(method, path).responses?.[String(res.status)] as ResponseObject | undefined
  expect(response, `${method} ${path} declares ${res.status}`).toBeDefined()
  const declared = new Set(Object.keys(response!.headers ?? {}).map((h) => h.toLowerCase()))
  const sent = [...res.headers.keys()].filter((h) => !TRANSPORT.has(h))
  expect(sent.length).toBeGreaterThan(0)
  expect(
    sent.filter((h) => !declared.has(h)),
    `${method} ${path} ${res.status} sends undeclared headers`,
  ).toEqual([])
}

describe('live responses carry only declared headers', () => {
  it('200, 304 and HEAD of a read endpoint', async () => {
    const first = await api.request('/v1/indexer/status')
    expect(first.status).toBe(200)
    expect(first.headers.get('x-chain-head')).toBe('120')
    expectDeclaredHeaders(first, 'GET', '/v1/indexer/status')
    const again = await api.request('/v1/indexer/status', {
      headers: { 'If-None-Match': first.headers.get('etag')! },
    })
    expect(again.status).toBe(304)
    expectDeclaredHeaders(again, 'GET', '/v1/indexer/status')
    const head = await api.request('/v1/collections', { method: 'HEAD' })
    expect(head.status).toBe(200)
    expectDeclaredHeaders(head, 'HEAD', '/v1/collections')
  })

  it('the demo token (200, and 400 to a parameter), and errors 400, 401, 403 (with CORS), 404', async () => {
    const demo = await fetch(`${api.base}/v1/demo-token`, { method: 'POST' })
    expect(demo.status).toBe(200)
    expectDeclaredHeaders(demo, 'POST', '/v1/demo-token')
    // The demo token takes no parameter: one is refused, with a 400 the document declares.
    const demoWithQuery = await fetch(`${api.base}/v1/demo-token?scope=read:nfts`, { method: 'POST' })
    expect(demoWithQuery.status).toBe(400)
    expectDeclaredHeaders(demoWithQuery, 'POST', '/v1/demo-token')
    await contract.expectResponse('POST', '/v1/demo-token', 400, await demoWithQuery.json())
    const bad = await api.request('/v1/activity?limit=1000')
    expect(bad.status).toBe(400)
    expectDeclaredHeaders(bad, 'GET', '/v1/activity')
    const anonymous = await fetch(`${api.base}/v1/activity`)
    expect(anonymous.status).toBe(401)
    expectDeclaredHeaders(anonymous, 'GET', '/v1/activity')
    // The site's own origin passes CORS, but a key allows no origin by default: 403 with CORS headers.
    const browser = await api.request('/v1/activity', { headers: { Origin: api.config.PUBLIC_URL } })
    expect(browser.status).toBe(403)
    expect(browser.headers.get('access-control-allow-origin')).toBe(api.config.PUBLIC_URL)
    expectDeclaredHeaders(browser, 'GET', '/v1/activity')
    const missing = await api.request(`/v1/collections/0x${'ab'.repeat(20)}`)
    expect(missing.status).toBe(404)
    expectDeclaredHeaders(missing, 'GET', '/v1/collections/{address}')
    const media = await fetch(`${api.base}/v1/media?url=ipfs%3A%2F%2Fnothing`)
    expect(media.status).toBe(404)
    expectDeclaredHeaders(media, 'GET', '/v1/media')
  })

  it('the live stream: 200 (text/event-stream), 400, 401, 405', async () => {
    const controller = new AbortController()
    const live = await api.request('/v1/activity/stream', { signal: controller.signal })
    expect(live.status).toBe(200)
    expect(live.headers.get('content-type')).toBe('text/event-stream; charset=utf-8')
    expectDeclaredHeaders(live, 'GET', '/v1/activity/stream')
    controller.abort()
    await live.body?.cancel().catch(() => undefined)
    const bad = await api.request('/v1/activity/stream', { headers: { 'Last-Event-ID': 'x' } })
    expect(bad.status).toBe(400)
    expectDeclaredHeaders(bad, 'GET', '/v1/activity/stream')
    const anonymous = await fetch(`${api.base}/v1/activity/stream`)
    expect(anonymous.status).toBe(401)
    expectDeclaredHeaders(anonymous, 'GET', '/v1/activity/stream')
    const head = await api.request('/v1/activity/stream', { method: 'HEAD' })
    expect(head.status).toBe(405)
    expectDeclaredHeaders(head, 'GET', '/v1/activity/stream')
  })

  it('429 with Retry-After and RateLimit-Reset', async () => {
    const limited = await startApiServer(db.url, { RATE_LIMIT_KEY: 'sec=1,min=100,concurrent=10' })
    try {
      let res = await limited.request('/v1/activity')
      for (let i = 0; i < 5 && res.status !== 429; i++) res = await limited.request('/v1/activity')
      expect(res.status).toBe(429)
      expect(res.headers.get('retry-after')).toMatch(/^[1-9][0-9]*$/)
      expect(res.headers.get('ratelimit-reset')).toBe(res.headers.get('retry-after'))
      expectDeclaredHeaders(res, 'GET', '/v1/activity')
    } finally {
      await limited.close()
    }
  })
})

describe('the document', () => {
  it('has one example per error status, of that status, in the envelope', async () => {
    let checked = 0
    for (const [method, path, op] of operations()) {
      for (const [status, response] of Object.entries(op.responses ?? {})) {
        if (Number(status) < 400) continue
        const example = (response as ResponseObject).content?.['application/json']?.example as
          | { error: { code: keyof typeof API_ERROR_STATUS } }
          | undefined
        if (method === 'head') {
          expect((response as ResponseObject).content).toBeUndefined()
          continue
        }
        expect(example, `${method} ${path} ${status}`).toBeDefined()
        expect(API_ERROR_STATUS[example!.error.code], `${method} ${path} ${status}`).toBe(Number(status))
        await contract.expectResponse(method, path, Number(status), example)
        checked++
      }
    }
    expect(checked).toBeGreaterThan(50)
    const envelope = doc.components!.schemas!.ErrorEnvelope as SchemaObject
    const error = envelope.properties!.error as SchemaObject
    expect((error.properties!.code as SchemaObject).enum).toEqual(
      expect.arrayContaining(['INVALID_ARGUMENT', 'INVALID_REQUEST', 'SERVICE_UNAVAILABLE', 'UNAVAILABLE']),
    )
  })

  it('documents HEAD for every GET, and 304 with If-None-Match on the JSON ones', () => {
    for (const [method, path, get] of operations()) {
      if (method !== 'get') continue
      // The live stream answers GET only (HEAD: 405).
      if (path === '/v1/activity/stream') {
        expect(operation('HEAD', path)).toBeUndefined()
        expect(Object.keys(get.responses ?? {})).not.toContain('304')
        expect(Object.keys(get.responses ?? {})).toContain('410')
        continue
      }
      const head = operation('HEAD', path)
      expect(head, path).toBeDefined()
      expect(Object.keys(head.responses ?? {})).toEqual(Object.keys(get.responses ?? {}))
      for (const response of Object.values(head.responses ?? {}))
        expect((response as ResponseObject).content).toBeUndefined()
      expect(Object.keys(get.responses ?? {})).toContain('304')
      if (path === '/v1/media') continue
      const names = (get.parameters as ParameterObject[]).map((p) => p.name)
      expect(names, path).toContain('If-None-Match')
    }
  })

  it('names the scope of each operation in its security requirement and description', () => {
    for (const [method, path, op] of operations()) {
      const roles = op.security?.flatMap((requirement) => Object.values(requirement).flat()) ?? []
      if (path === '/v1/demo-token' || path === '/v1/media') {
        expect(op.security, `${method} ${path}`).toEqual([])
        expect(op.description).toContain('Requires no credential.')
      } else {
        expect(roles, `${method} ${path}`).toHaveLength(1)
        expect(op.description).toContain(`Requires scope: \`${roles[0]}\`.`)
      }
    }
    expect(operation('GET', '/v1/owners/{address}/nfts').security).toEqual([{ bearer: ['read:owners'] }])
  })

  it('carries formats, enums, defaults and realistic examples; no unused component', async () => {
    const schemas = doc.components?.schemas as Record<string, SchemaObject>
    const property = (schema: string, field: string) => schemas[schema]!.properties![field] as SchemaObject
    expect(property('Collection', 'created_at').format).toBe('date-time')
    expect(property('Transfer', 'block_timestamp').format).toBe('date-time')
    expect(property('IndexerStatus', 'updated_at').format).toBe('date-time')
    expect(property('DemoToken', 'expires_at').format).toBe('date-time')
    expect(property('Collection', 'image_url').format).toBe('uri-reference')
    expect(property('Nft', 'media_url').format).toBe('uri')
    const param = (path: string, name: string) =>
      (operation('GET', path).parameters as ParameterObject[]).find((p) => p.name === name)!.schema
    expect(param('/v1/collections', 'network')).toMatchObject({ enum: ['devnet'], default: 'devnet' })
    expect(param('/v1/activity', 'limit')).toMatchObject({ default: 20, minimum: 1, maximum: 100 })
    expect(param('/v1/collections/{address}/nfts', 'include_burned')).toMatchObject({
      type: 'boolean',
      default: false,
    })
    const status = schemas.IndexerStatus!.example as Record<string, unknown>
    expect(status.network).toBe('devnet')
    expect(String(status.last_seen_block).length).toBeLessThan(12)
    expect(await contract.expectExamplesValid()).toBeGreaterThanOrEqual(10)
    expect(Object.keys(schemas).filter((name) => name.startsWith('error.'))).toEqual([])
  })

  it("names the deployment's network in the enum and the examples, per document", () => {
    const sepolia = openApiDocument({ PUBLIC_URL: 'https://nft-data.test', NETWORK: 'sepolia' })
    const collection = sepolia.components!.schemas!.Collection as SchemaObject
    expect(collection.example.network).toBe('sepolia')
    const list = (sepolia.paths!['/v1/collections'] as Record<string, OperationObject>).get!
    const network = (list.parameters as ParameterObject[]).find((p) => p.name === 'network')!
    expect(network.schema).toMatchObject({ enum: ['sepolia'], default: 'sepolia' })
    const devnet = openApiDocument({ PUBLIC_URL: 'https://nft-data.test', NETWORK: 'devnet' })
    expect((devnet.components!.schemas!.Collection as SchemaObject).example.network).toBe('devnet')
  })
})
