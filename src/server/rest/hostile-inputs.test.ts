/**
 * Hostile inputs that once broke the error specification (every bad input a
 * clear 4xx in the envelope naming the parameter; never a 500; docs/api.md
 * "Parameters", "Errors and limits"), one test each; the fuzz tests
 * (src/server/api/v1/fuzz.test.ts) cover the rest.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ApiServer, startApiServer } from '@/test/api-client'
import { buildDataset, c, people } from '@/test/api-dataset'
import { tempMediaDir } from '@/test/api-fixtures'
import { createTestDatabase, type TestDatabase } from '@/test/db'

let db: TestDatabase
let api: ApiServer

beforeAll(async () => {
  db = await createTestDatabase()
  const { chain } = await buildDataset(db.pool, tempMediaDir())
  await chain.mine(2, () => {}, { confirmations: 1n })
  await chain.describeCollections()
  api = await startApiServer(db.url)
}, 180_000)

afterAll(async () => {
  await api?.close()
  await db?.drop()
})

// biome-ignore lint/suspicious/noExplicitAny: error bodies are checked field by field
async function call(path: string, init?: RequestInit): Promise<{ status: number; body: any }> {
  const res = await api.request(path, init)
  const text = await res.text()
  return { status: res.status, body: text ? JSON.parse(text) : undefined }
}

describe('hostile inputs', () => {
  it('after_token_count above 2^31 - 1 is not a 500 (collection owners)', async () => {
    const { status, body } = await call(
      `/v1/collections/${c.pioneers}/owners?after_token_count=2147483648&after_owner=${people.alice}`,
    )
    expect(status).toBe(400)
    expect(body.error.message).toBe('after_token_count: must be at most 2147483647')
  })

  it('a non-numeric at_block is 400 naming at_block, not "The request is malformed."', async () => {
    for (const path of [
      `/v1/collections/${c.pioneers}/owners?at_block=abc`,
      `/v1/owners/${people.alice}/nfts?at_block=1e3`,
      `/v1/nfts/${c.pioneers}/1?at_block=1.5`,
    ]) {
      const { status, body } = await call(path)
      expect(status, path).toBe(400)
      expect(body.error.message, path).toMatch(/^at_block: /)
    }
  })

  it('a query parameter named like a path parameter is refused, not silently ignored', async () => {
    const owners = await call(`/v1/collections/${c.pioneers}/owners?address=garbage`)
    expect(owners.status).toBe(400)
    expect(owners.body.error.message).toContain("'address'")
    const nft = await call(`/v1/nfts/${c.pioneers}/1?tokenId=abc`)
    expect(nft.status).toBe(400)
    expect(nft.body.error.message).toContain("'tokenId'")
  })

  it('an unknown query parameter on POST /v1/demo-token is 400', async () => {
    const { status, body } = await call('/v1/demo-token?foo=1', { method: 'POST' })
    expect(status).toBe(400)
    expect(body.error.message).toContain("'foo'")
  })

  it('min_confirmations=-0 on the live stream is 400 (decimal digits only)', async () => {
    const abort = new AbortController()
    const res = await api.request('/v1/activity/stream?min_confirmations=-0', { signal: abort.signal })
    abort.abort()
    expect(res.status).toBe(400)
  })

  it('wrong methods on /openapi.json, /healthz and /readyz are 405 with Allow, not the document', async () => {
    for (const path of ['/openapi.json', '/healthz', '/readyz'])
      for (const method of ['POST', 'DELETE', 'PUT']) {
        const res = await fetch(`${api.base}${path}`, { method })
        expect(res.status, `${method} ${path}`).toBe(405)
        expect(res.headers.get('allow')).toBe('GET, HEAD, OPTIONS')
        expect((await res.json()).error.code).toBe('METHOD_NOT_ALLOWED')
      }
    const head = await fetch(`${api.base}/openapi.json`, { method: 'HEAD' })
    expect(head.status).toBe(200)
    const options = await fetch(`${api.base}/openapi.json`, { method: 'OPTIONS' })
    expect(options.status).toBe(204)
    expect(options.headers.get('access-control-allow-origin')).toBe('*')
  })

  it('OPTIONS answers the path’s own methods, and 404 for a path with no endpoint', async () => {
    const unknown = await fetch(`${api.base}/v1/no/such/endpoint`, { method: 'OPTIONS' })
    expect(unknown.status).toBe(404)
    expect((await unknown.json()).error.code).toBe('NOT_FOUND')
    for (const [path, allow] of [
      [`/v1/collections/${c.pioneers}`, 'GET, HEAD, OPTIONS'],
      ['/v1/demo-token', 'POST, OPTIONS'],
      ['/v1/activity/stream', 'GET, OPTIONS'],
    ]) {
      const res = await fetch(`${api.base}${path}`, { method: 'OPTIONS' })
      await res.body?.cancel()
      expect(res.status, path).toBe(204)
      expect(res.headers.get('allow'), path).toBe(allow)
    }
  })
})
