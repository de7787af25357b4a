/**
 * Contract tests of every /v1 read endpoint over HTTP, against a real
 * database filled through the indexer's own functions: each success and each
 * listed error status, every response validated against /openapi.json by an
 * independent OpenAPI 3.1 validator and against the specification's field
 * tables.
 */
import { createHash } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SCOPES } from '@/lib/scopes'
import { createApiKey, ensureUser } from '@/server/api/portal/keys/api-keys'
import { type ApiServer, startApiServer } from '@/test/api-client'
import {
  ACTIVITY_TABLE,
  COLLECTION_TABLE,
  expectPageEnvelope,
  expectSpecFields,
  NFT_EXTENSIONS,
  NFT_TABLE,
  OpenApiContract,
  type OpenApiDoc,
  STATUS_EXTENSIONS,
  STATUS_TABLE,
  TRANSFER_EXTENSIONS,
  TRANSFER_TABLE,
} from '@/test/api-contract'
import { buildDataset, c, MAX_UINT256, people } from '@/test/api-dataset'
import { svgDataUri, tempMediaDir, ZERO } from '@/test/api-fixtures'
import { createTestDatabase, type TestDatabase } from '@/test/db'

let db: TestDatabase
let api: ApiServer
let contract: OpenApiContract
let mediaDir: string

// biome-ignore lint/suspicious/noExplicitAny: response bodies are arbitrary JSON, checked field by field
type Json = any

interface Reply<T = Json> {
  status: number
  headers: Headers
  body: T
  text: string
}

/** Calls the API and checks the response against /openapi.json (and, for errors, the envelope). */
async function call<T = Json>(
  path: string,
  options: {
    method?: string
    headers?: Record<string, string>
    auth?: string | null
    server?: ApiServer
  } = {},
): Promise<Reply<T>> {
  const server = options.server ?? api
  const method = options.method ?? 'GET'
  const headers: Record<string, string> = { ...options.headers }
  const auth = options.auth === undefined ? server.token : options.auth
  if (auth !== null) headers.Authorization = `Bearer ${auth}`
  const res = await fetch(`${server.base}${path}`, { method, headers })
  const text = await res.text()
  const isJson = res.headers.get('content-type')?.startsWith('application/json')
  const body = isJson && text !== '' ? JSON.parse(text) : text
  if (method === 'GET' && isJson) await contract.expectResponse('GET', path, res.status, body)
  if (res.status >= 400 && method !== 'HEAD') {
    expect(body).toEqual({
      error: {
        code: expect.any(String),
        message: expect.any(String),
        request_id: res.headers.get('x-request-id'),
      },
    })
  }
  return { status: res.status, headers: res.headers, body, text }
}

async function expectError(
  path: string,
  status: number,
  code: string,
  options: Parameters<typeof call>[1] = {},
) {
  const reply = await call(path, options)
  expect(reply.status, `${path}: ${reply.text}`).toBe(status)
  expect(reply.body.error.code).toBe(code)
  return reply
}

beforeAll(async () => {
  db = await createTestDatabase()
  mediaDir = tempMediaDir()
  await buildDataset(db.pool, mediaDir)
  api = await startApiServer(db.url, { MEDIA_DIR: mediaDir })
  const doc = (await (await fetch(`${api.base}/openapi.json`)).json()) as OpenApiDoc
  contract = await OpenApiContract.load(doc)
})

afterAll(async () => {
  await api?.close()
  await db?.drop()
})

describe('/openapi.json', () => {
  it('is a valid OpenAPI 3.1 document whose examples match their schemas', async () => {
    expect((await contract.validateDocument()).valid).toBe(true)
    expect(await contract.expectExamplesValid()).toBeGreaterThanOrEqual(8)
  })

  it('is enforced: the validator rejects bodies that break the documented schemas', async () => {
    const good = (await call(`/v1/nfts/${c.pioneers}/2`)).body
    const broken = [
      { data: { ...good.data, token_id: 2 } },
      { data: { ...good.data, current_owner: good.data.current_owner.toUpperCase() } },
      { data: { ...good.data, unexpected: true } },
      { data: { ...good.data, is_burned: undefined } },
    ]
    for (const body of broken) {
      await expect(
        contract.expectResponse('GET', `/v1/nfts/${c.pioneers}/2`, 200, JSON.parse(JSON.stringify(body))),
      ).rejects.toThrow()
    }
    await expect(contract.expectResponse('GET', '/v1/activity', 404, {})).rejects.toThrow()
    await expect(
      contract.expectResponse('GET', '/v1/activity', 200, {
        data: [],
        pagination: { limit: 20, has_more: false, next_page_params: { before_id: 1 } },
        coverage: { status: 'complete', start_block: null },
      }),
    ).rejects.toThrow()
  })

  it('documents every read endpoint with its error statuses and the freshness headers', () => {
    const listed = ['400', '401', '403', '429', '503']
    const endpoints: Array<[string, string[]]> = [
      ['/v1/collections', listed],
      ['/v1/collections/{address}', [...listed, '404']],
      ['/v1/collections/{address}/nfts', listed],
      ['/v1/nfts/{address}/{tokenId}', [...listed, '404']],
      ['/v1/owners/{address}/nfts', listed],
      ['/v1/collections/{address}/transfers', listed],
      ['/v1/nfts/{address}/{tokenId}/transfers', listed],
      ['/v1/activity', listed],
      ['/v1/indexer/status', [...listed, '404']],
    ]
    for (const [path, errors] of endpoints) {
      const get = contract.doc.paths[path]?.get as unknown as {
        responses: Record<string, { headers?: Record<string, unknown> }>
      }
      expect(get, path).toBeDefined()
      for (const status of ['200', ...errors]) expect(Object.keys(get.responses), path).toContain(status)
      expect(Object.keys(get.responses['200']!.headers ?? {})).toEqual(
        expect.arrayContaining(['X-Chain-Head', 'X-Confirmed-Block', 'X-Request-Id']),
      )
    }
    const head = contract.doc.paths['/v1/collections']?.head as unknown as {
      responses: Record<string, { content?: unknown }>
    }
    expect(Object.keys(head.responses)).toEqual(expect.arrayContaining(['200', ...listed]))
    expect(head.responses['200']!.content).toBeUndefined()
    const media = contract.doc.paths['/v1/media']?.get as unknown as { responses: Record<string, unknown> }
    expect(Object.keys(media.responses)).toEqual(
      expect.arrayContaining(['200', '206', '304', '400', '404', '416']),
    )
  })

  it('describes every list parameter with its bounds and patterns', () => {
    const params = (path: string) =>
      Object.fromEntries(
        (
          (contract.doc.paths[path]!.get as unknown as { parameters: Array<{ name: string; schema: Json }> })
            .parameters ?? []
        ).map((p) => [p.name, p.schema]),
      )
    const list = params('/v1/collections')
    expect(list.limit).toMatchObject({ type: 'integer', minimum: 1, maximum: 100 })
    expect(list.before_timestamp).toMatchObject({ type: 'integer', minimum: 1 })
    expect(list.before_id).toMatchObject({ type: 'integer', minimum: 1 })
    expect(list.search).toMatchObject({ type: 'string', maxLength: 200 })
    const nfts = params('/v1/collections/{address}/nfts')
    expect(nfts.after_token_id).toMatchObject({ type: 'string', pattern: '^[0-9]{1,78}$' })
    expect(nfts.include_burned).toMatchObject({ type: 'boolean' })
    expect(nfts.address).toMatchObject({ pattern: '^0x[0-9a-f]{40}$' })
    const owner = params('/v1/owners/{address}/nfts')
    expect(owner.after_collection).toMatchObject({ pattern: '^0x[0-9a-f]{40}$' })
    const activity = params('/v1/activity')
    expect(activity.event_type).toMatchObject({ enum: ['mint', 'transfer', 'burn'] })
  })
})

describe('GET /v1/collections', () => {
  it('lists listed collections newest first, with the spec fields', async () => {
    const { status, body, headers } = await call('/v1/collections')
    expect(status).toBe(200)
    expectPageEnvelope(body, ['before_timestamp', 'before_id'])
    for (const item of body.data) expectSpecFields(item, COLLECTION_TABLE, [], 'collection')
    const addresses = body.data.map((x: { contract_address: string }) => x.contract_address)
    expect(addresses).not.toContain(c.anonymous)
    expect(new Set(addresses)).toEqual(new Set([c.pioneers, c.glyphs, c.percent, c.ancient]))
    const created = body.data.map((x: { created_at: string }) => x.created_at)
    expect([...created].sort().reverse()).toEqual(created)
    expect(body.pagination).toEqual({ limit: 20, has_more: false })
    expect(body.coverage).toEqual({ status: 'complete', start_block: '100' })
    expect(headers.get('x-chain-head')).toBe('108')
    expect(headers.get('x-confirmed-block')).toBe('107')
    const pioneers = body.data.find((x: { contract_address: string }) => x.contract_address === c.pioneers)
    expect(pioneers).toMatchObject({
      network: 'devnet',
      name: 'Genesis Pioneers',
      symbol: 'PION',
      description: 'Pioneers of the devnet.',
      image_url: svgDataUri('pioneer 1'),
      contract_type: 'ERC721',
      total_supply: '11',
      unique_holders: '3',
      total_transfers: '19',
      creator_address: people.carol,
    })
    const glyphs = body.data.find((x: { contract_address: string }) => x.contract_address === c.glyphs)
    expect(glyphs.symbol).toBeNull()
  })

  it('pages with before_timestamp + before_id and omits next_page_params on the last page', async () => {
    const seen: string[] = []
    let query = '/v1/collections?limit=1'
    for (let i = 0; i < 10; i++) {
      const { body } = await call(query)
      expectPageEnvelope(body, ['before_timestamp', 'before_id'])
      expect(body.pagination.limit).toBe(1)
      seen.push(...body.data.map((x: { contract_address: string }) => x.contract_address))
      if (!body.pagination.has_more) break
      const p = body.pagination.next_page_params
      expect(Number.isSafeInteger(p.before_timestamp) && Number.isSafeInteger(p.before_id)).toBe(true)
      query = `/v1/collections?limit=1&before_timestamp=${p.before_timestamp}&before_id=${p.before_id}`
    }
    expect(seen).toHaveLength(4)
    expect(new Set(seen).size).toBe(4)
  })

  it('searches name and symbol case-insensitively, with LIKE metacharacters taken literally', async () => {
    const names = async (search: string) =>
      (await call(`/v1/collections?search=${encodeURIComponent(search)}`)).body.data.map(
        (x: { name: string }) => x.name,
      )
    expect(await names('pIoNeEr')).toEqual(['Genesis Pioneers'])
    expect(await names('pion')).toEqual(['Genesis Pioneers'])
    expect(await names('old')).toEqual(['Ancient Relics'])
    expect(await names('%')).toEqual(['100%_Off Club'])
    expect(await names('_')).toEqual(['100%_Off Club'])
    expect(await names('0%_o')).toEqual(['100%_Off Club'])
    expect(await names('p_c')).toEqual(['100%_Off Club'])
    expect(await names('e')).toEqual(expect.arrayContaining(['Genesis Pioneers', 'Ancient Relics']))
    expect(await names('zzz')).toEqual([])
    expect(await names('')).toHaveLength(4)
    // Never a name of a collection with empty metadata.
    expect(await names('0x')).toEqual([])
  })

  it('treats a full contract address as an exact lookup, in any letter case', async () => {
    const one = await call(`/v1/collections?search=${c.ancient}`)
    expect(one.body.data.map((x: { contract_address: string }) => x.contract_address)).toEqual([c.ancient])
    const upper = await call(`/v1/collections?search=0x${c.ancient.slice(2).toUpperCase()}`)
    expect(upper.body.data).toHaveLength(1)
    // Unlisted collections stay out of the list, also by address.
    expect((await call(`/v1/collections?search=${c.anonymous}`)).body.data).toEqual([])
  })

  it('accepts the indexed network and refuses another with 400', async () => {
    expect((await call('/v1/collections?network=devnet')).status).toBe(200)
    await expectError('/v1/collections?network=mainnet', 400, 'INVALID_ARGUMENT')
  })

  it('answers 400 naming the parameter for every malformed value', async () => {
    const cases: Array<[string, string]> = [
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['limit=abc', 'limit'],
      ['limit=1e2', 'limit'],
      ['limit=2.5', 'limit'],
      ['limit=', 'limit'],
      ['before_timestamp=0&before_id=1', 'before_timestamp'],
      ['before_timestamp=1', 'before_id'],
      ['before_id=5', 'before_timestamp'],
      ['before_timestamp=99999999999999999999&before_id=1', 'before_timestamp'],
      [`search=${'a'.repeat(201)}`, 'search'],
      ['sort=asc', "'sort'"],
      ['limit=1&limit=2', 'limit'],
      // Percent-escapes that decode to no UTF-8 text: refused, not searched as something else.
      ['search=%zz', 'search'],
      ['limit=5&search=%ff', 'search'],
      ['search=a%e2%82', 'search'],
    ]
    for (const [query, name] of cases) {
      const reply = await expectError(`/v1/collections?${query}`, 400, 'INVALID_ARGUMENT')
      expect(reply.body.error.message, query).toContain(name)
    }
  })

  it('answers HEAD with 200 and no body, and the same errors', async () => {
    const head = await call('/v1/collections', { method: 'HEAD' })
    expect(head.status).toBe(200)
    expect(head.text).toBe('')
    expect(head.headers.get('x-chain-head')).toBe('108')
    expect((await call('/v1/collections?limit=0', { method: 'HEAD' })).status).toBe(400)
    expect((await call('/v1/collections', { method: 'HEAD', auth: null })).status).toBe(401)
  })
})

describe('GET /v1/collections/{address}', () => {
  it('serves any seen collection, listed or not, with the list fields', async () => {
    const { status, body } = await call(`/v1/collections/${c.anonymous}`)
    expect(status).toBe(200)
    expectSpecFields(body.data, COLLECTION_TABLE, [], 'collection')
    expect(body.data).toMatchObject({
      contract_address: c.anonymous,
      name: '',
      symbol: null,
      contract_type: 'ERC721',
    })
    const list = await call(`/v1/collections?search=${c.pioneers}`)
    const detail = await call(`/v1/collections/${c.pioneers}?network=devnet`)
    expect(detail.body.data).toEqual(list.body.data[0])
  })

  it('answers 404 for an unknown collection and 400 for a malformed address or network', async () => {
    await expectError(`/v1/collections/0x${'0'.repeat(39)}1`, 404, 'NOT_FOUND')
    await expectError(`/v1/collections/0x${c.pioneers.slice(2).toUpperCase()}`, 400, 'INVALID_ARGUMENT')
    await expectError('/v1/collections/0x1234', 400, 'INVALID_ARGUMENT')
    await expectError(`/v1/collections/${c.pioneers}?network=mainnet`, 400, 'INVALID_ARGUMENT')
    await expectError(`/v1/collections/${c.pioneers}?limit=5`, 400, 'INVALID_ARGUMENT')
  })
})

describe('GET /v1/collections/{address}/nfts', () => {
  it('lists tokens in numeric token order without burned ones by default', async () => {
    const { body } = await call(`/v1/collections/${c.glyphs}/nfts`)
    expectPageEnvelope(body, ['after_token_id', 'after_id'])
    for (const item of body.data) expectSpecFields(item, NFT_TABLE, NFT_EXTENSIONS, 'nft')
    expect(body.data.map((x: { token_id: string }) => x.token_id)).toEqual([
      '0',
      '10',
      MAX_UINT256.toString(),
    ])
    const all = await call(`/v1/collections/${c.glyphs}/nfts?include_burned=true`)
    expect(all.body.data.map((x: { token_id: string }) => x.token_id)).toEqual([
      '0',
      '9',
      '10',
      MAX_UINT256.toString(),
    ])
    const burned = all.body.data.find((x: { token_id: string }) => x.token_id === '9')
    expect(burned).toMatchObject({ is_burned: true, current_owner: ZERO, transfer_count: 2 })
    expect((await call(`/v1/collections/${c.glyphs}/nfts?include_burned=false`)).body.data).toHaveLength(3)
  })

  it('pages with after_token_id + after_id through every token exactly once', async () => {
    const seen: string[] = []
    let query = `/v1/collections/${c.pioneers}/nfts?limit=5&include_burned=true`
    for (;;) {
      const { body } = await call(query)
      expectPageEnvelope(body, ['after_token_id', 'after_id'])
      seen.push(...body.data.map((x: { token_id: string }) => x.token_id))
      if (!body.pagination.has_more) break
      const p = body.pagination.next_page_params
      expect(typeof p.after_token_id).toBe('string')
      query = `/v1/collections/${c.pioneers}/nfts?limit=5&include_burned=true&after_token_id=${p.after_token_id}&after_id=${p.after_id}`
    }
    expect(seen).toEqual(Array.from({ length: 12 }, (_, i) => String(i + 1)))
  })

  it('reports the coverage of the collection: complete inside the window, partial when it predates it', async () => {
    expect((await call(`/v1/collections/${c.pioneers}/nfts`)).body.coverage).toEqual({
      status: 'complete',
      start_block: '100',
    })
    expect((await call(`/v1/collections/${c.ancient}/nfts`)).body.coverage).toEqual({
      status: 'partial',
      start_block: '100',
    })
    const unknown = await call(`/v1/collections/0x${'1'.repeat(40)}/nfts`)
    expect(unknown.status).toBe(200)
    expect(unknown.body.data).toEqual([])
    expect(unknown.body.coverage.status).toBe('unknown')
  })

  it('answers 400 for malformed cursors and flags', async () => {
    const base = `/v1/collections/${c.pioneers}/nfts`
    for (const query of [
      'include_burned=yes',
      'include_burned=1',
      'after_token_id=5',
      'after_id=5',
      'after_token_id=-1&after_id=1',
      `after_token_id=${'9'.repeat(79)}&after_id=1`,
      'after_token_id=5&after_id=0',
      'before_id=1',
    ]) {
      await expectError(`${base}?${query}`, 400, 'INVALID_ARGUMENT')
    }
  })
})

describe('GET /v1/nfts/{address}/{tokenId}', () => {
  it('serves one token with the list fields, media and metadata', async () => {
    const { body } = await call(`/v1/nfts/${c.pioneers}/2`)
    expectSpecFields(body.data, NFT_TABLE, NFT_EXTENSIONS, 'nft')
    const image = svgDataUri('pioneer 2')
    expect(body.data).toEqual({
      collection_address: c.pioneers,
      token_id: '2',
      network: 'devnet',
      current_owner: people.bob,
      is_burned: false,
      transfer_count: 1,
      metadata_uri: expect.stringMatching(/^data:application\/json;base64,/),
      image_url: image,
      media_url: `http://api.test/v1/media?url=${encodeURIComponent(image)}`,
      collection_name: 'Genesis Pioneers',
      collection_symbol: 'PION',
      name: 'Pioneer #2',
      media_type: 'image/svg+xml',
      metadata_status: 'ok',
    })
    const list = await call(`/v1/collections/${c.pioneers}/nfts?limit=2`)
    expect(list.body.data[1]).toEqual(body.data)
  })

  it('leaves out optional fields that are unknown, and keeps uint256 ids exact', async () => {
    const { body } = await call(`/v1/nfts/${c.glyphs}/${MAX_UINT256}`)
    expect(body.data.token_id).toBe(MAX_UINT256.toString())
    expect(body.data.collection_symbol).toBe('')
    for (const field of ['name', 'image_url', 'media_url', 'media_type'])
      expect(body.data).not.toHaveProperty(field)
    const noMetadata = await call(`/v1/nfts/${c.pioneers}/5`)
    expect(noMetadata.body.data.metadata_status).toBe('uri_reverted')
    expect(noMetadata.body.data).not.toHaveProperty('media_url')
    // Leading zeros name the same token.
    expect((await call(`/v1/nfts/${c.pioneers}/0002`)).body.data.token_id).toBe('2')
  })

  it('answers 404 for an unknown token and 400 for malformed path parameters', async () => {
    await expectError(`/v1/nfts/${c.pioneers}/999`, 404, 'NOT_FOUND')
    await expectError(`/v1/nfts/${c.pioneers}/${'9'.repeat(78)}`, 404, 'NOT_FOUND')
    await expectError(`/v1/nfts/${c.pioneers}/${'9'.repeat(79)}`, 400, 'INVALID_ARGUMENT')
    await expectError(`/v1/nfts/${c.pioneers}/0x10`, 400, 'INVALID_ARGUMENT')
    await expectError(`/v1/nfts/${c.pioneers}/-1`, 400, 'INVALID_ARGUMENT')
    await expectError(`/v1/nfts/not-an-address/1`, 400, 'INVALID_ARGUMENT')
    await expectError(`/v1/nfts/${c.pioneers}/1?x=1`, 400, 'INVALID_ARGUMENT')
  })
})

describe('GET /v1/owners/{address}/nfts', () => {
  it('lists the tokens held now, by collection then numeric token id', async () => {
    const { body } = await call(`/v1/owners/${people.alice}/nfts`)
    expectPageEnvelope(body, ['after_collection', 'after_token_id', 'after_id'])
    for (const item of body.data) expectSpecFields(item, NFT_TABLE, NFT_EXTENSIONS, 'nft')
    const keys = body.data.map((x: { collection_address: string; token_id: string }) => [
      x.collection_address,
      BigInt(x.token_id),
    ])
    const sorted = [...keys].sort((a, b) =>
      a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0,
    )
    expect(keys).toEqual(sorted)
    for (const item of body.data) expect(item.current_owner).toBe(people.alice)
    expect(keys).toContainEqual([c.glyphs, MAX_UINT256])
    expect(body.coverage).toEqual({ status: 'complete', start_block: '100' })
  })

  it('pages with all three cursor keys, each token once', async () => {
    const seen: string[] = []
    let query = `/v1/owners/${people.carol}/nfts?limit=2`
    for (;;) {
      const { body } = await call(query)
      expectPageEnvelope(body, ['after_collection', 'after_token_id', 'after_id'])
      seen.push(
        ...body.data.map(
          (x: { collection_address: string; token_id: string }) => `${x.collection_address}:${x.token_id}`,
        ),
      )
      if (!body.pagination.has_more) break
      const p = body.pagination.next_page_params
      query = `/v1/owners/${people.carol}/nfts?limit=2&after_collection=${p.after_collection}&after_token_id=${p.after_token_id}&after_id=${p.after_id}`
    }
    const { rows } = await db.pool.query(
      "SELECT collection_address || ':' || token_id::text AS k FROM tokens WHERE current_owner = $1",
      [people.carol],
    )
    expect(seen.sort()).toEqual(rows.map((r) => r.k).sort())
    expect(new Set(seen).size).toBe(seen.length)
  })

  it('requires after_collection, after_token_id and after_id together', async () => {
    const base = `/v1/owners/${people.alice}/nfts`
    for (const query of [
      `after_collection=${c.glyphs}`,
      `after_collection=${c.glyphs}&after_token_id=1`,
      'after_token_id=1&after_id=1',
      `after_collection=${c.glyphs}&after_id=1`,
      'after_collection=0xABC&after_token_id=1&after_id=1',
    ]) {
      await expectError(`${base}?${query}`, 400, 'INVALID_ARGUMENT')
    }
    const empty = await call(`/v1/owners/0x${'2'.repeat(40)}/nfts`)
    expect(empty.status).toBe(200)
    expect(empty.body.data).toEqual([])
  })
})

describe('transfer lists', () => {
  it('GET /v1/collections/{address}/transfers: canonical rows newest first, chain order inside a block', async () => {
    const { body, headers } = await call(`/v1/collections/${c.pioneers}/transfers?limit=100`)
    expectPageEnvelope(body, ['before_timestamp', 'before_id'])
    for (const item of body.data) expectSpecFields(item, TRANSFER_TABLE, TRANSFER_EXTENSIONS, 'transfer')
    expect(body.data).toHaveLength(19)
    const positions = body.data.map((x: { block_number: string; log_index: number }) => [
      Number(x.block_number),
      x.log_index,
    ])
    const newestFirst = [...positions].sort((a, b) => b[0] - a[0] || b[1] - a[1])
    expect(positions).toEqual(newestFirst)
    const head = BigInt(headers.get('x-chain-head')!)
    for (const t of body.data) {
      expect(t.confirmations).toBe(Number(head - BigInt(t.block_number)))
      expect(t.event_type).toBe(
        t.from_address === ZERO ? 'mint' : t.to_address === ZERO ? 'burn' : 'transfer',
      )
    }
    expect(body.data[0]).toMatchObject({
      event_type: 'burn',
      token_id: '4',
      to_address: ZERO,
      block_number: '106',
    })
  })

  it('GET /v1/nfts/{address}/{tokenId}/transfers: the history of one token', async () => {
    const { body } = await call(`/v1/nfts/${c.pioneers}/4/transfers`)
    expect(body.data.map((x: { event_type: string }) => x.event_type)).toEqual(['burn', 'transfer', 'mint'])
    for (const item of body.data) expectSpecFields(item, TRANSFER_TABLE, TRANSFER_EXTENSIONS, 'transfer')
    const none = await call(`/v1/nfts/${c.pioneers}/999/transfers`)
    expect(none.status).toBe(200)
    expect(none.body.data).toEqual([])
  })

  it('pages newest first with before_timestamp + before_id, each row once', async () => {
    const seen: string[] = []
    let query = `/v1/collections/${c.pioneers}/transfers?limit=4`
    for (;;) {
      const { body } = await call(query)
      seen.push(
        ...body.data.map(
          (x: { transaction_hash: string; log_index: number }) => `${x.transaction_hash}:${x.log_index}`,
        ),
      )
      if (!body.pagination.has_more) break
      const p = body.pagination.next_page_params
      query = `/v1/collections/${c.pioneers}/transfers?limit=4&before_timestamp=${p.before_timestamp}&before_id=${p.before_id}`
    }
    expect(seen).toHaveLength(19)
    expect(new Set(seen).size).toBe(19)
  })

  it('reports partial coverage with start_block for a collection older than the window', async () => {
    const { body } = await call(`/v1/collections/${c.ancient}/transfers`)
    expect(body.coverage).toEqual({ status: 'partial', start_block: '100' })
    expect((await call(`/v1/nfts/${c.ancient}/3/transfers`)).body.coverage.status).toBe('partial')
  })

  it('answers 400 for malformed cursors and unknown parameters', async () => {
    for (const path of [`/v1/collections/${c.pioneers}/transfers`, `/v1/nfts/${c.pioneers}/4/transfers`]) {
      await expectError(`${path}?before_timestamp=1`, 400, 'INVALID_ARGUMENT')
      await expectError(`${path}?before_timestamp=abc&before_id=1`, 400, 'INVALID_ARGUMENT')
      await expectError(`${path}?event_type=mint`, 400, 'INVALID_ARGUMENT')
      await expectError(`${path}?network=devnet`, 400, 'INVALID_ARGUMENT')
    }
  })
})

describe('GET /v1/activity', () => {
  it('serves every transfer newest first with collection_name, filtered by collection and event_type', async () => {
    const { body } = await call('/v1/activity?limit=100')
    expectPageEnvelope(body, ['before_timestamp', 'before_id'])
    for (const item of body.data) expectSpecFields(item, ACTIVITY_TABLE, TRANSFER_EXTENSIONS, 'activity')
    const { rows } = await db.pool.query('SELECT count(*)::int AS n FROM transfers')
    expect(body.data).toHaveLength(rows[0].n)
    expect(body.coverage).toEqual({ status: 'complete', start_block: '100' })
    const burns = await call('/v1/activity?event_type=burn')
    expect(burns.body.data.map((x: { token_id: string }) => x.token_id).sort()).toEqual(['4', '9'])
    const glyphMints = await call(`/v1/activity?collection=${c.glyphs}&event_type=mint&network=devnet`)
    expect(glyphMints.body.data).toHaveLength(4)
    for (const item of glyphMints.body.data) {
      expect(item).toMatchObject({
        collection_address: c.glyphs,
        event_type: 'mint',
        collection_name: 'Onchain Glyphs',
      })
    }
    expect((await call(`/v1/activity?collection=${c.ancient}`)).body.coverage.status).toBe('partial')
  })

  it('answers 400 for another network, an unknown event type or a malformed collection', async () => {
    await expectError('/v1/activity?network=mainnet', 400, 'INVALID_ARGUMENT')
    await expectError('/v1/activity?event_type=sale', 400, 'INVALID_ARGUMENT')
    await expectError('/v1/activity?collection=0x12', 400, 'INVALID_ARGUMENT')
    await expectError('/v1/activity?before_id=3', 400, 'INVALID_ARGUMENT')
  })
})

describe('GET /v1/indexer/status', () => {
  it('matches the spec table and answers 404 for another network', async () => {
    const { body } = await call('/v1/indexer/status')
    expectSpecFields(body.data, STATUS_TABLE, STATUS_EXTENSIONS, 'status')
    await expectError('/v1/indexer/status?network=mainnet', 404, 'NOT_FOUND')
  })
})

describe('credentials and availability on every endpoint', () => {
  const endpoints = () => [
    '/v1/collections',
    `/v1/collections/${c.pioneers}`,
    `/v1/collections/${c.pioneers}/nfts`,
    `/v1/nfts/${c.pioneers}/1`,
    `/v1/owners/${people.alice}/nfts`,
    `/v1/collections/${c.pioneers}/transfers`,
    `/v1/nfts/${c.pioneers}/1/transfers`,
    '/v1/activity',
    '/v1/indexer/status',
  ]

  it('401 without a credential, 403 without the scope', async () => {
    const user = await ensureUser(api.db, '0x00000000000000000000000000000000000b0b00')
    const { secret } = await createApiKey(
      api.db,
      { userId: user.id, address: user.address },
      { name: 'status only', scopes: ['read:status'] },
    )
    for (const path of endpoints()) {
      await expectError(path, 401, 'UNAUTHORIZED', { auth: null })
      if (!path.startsWith('/v1/indexer')) await expectError(path, 403, 'FORBIDDEN', { auth: secret })
    }
    expect(SCOPES).toHaveLength(6)
  })

  it('429 past the credential limit', async () => {
    const limited = await startApiServer(db.url, {
      RATE_LIMIT_KEY: 'sec=1,min=1000,concurrent=10',
      MEDIA_DIR: mediaDir,
    })
    try {
      for (const path of endpoints()) {
        // Three at once: at least two fall in the same second, whatever its boundary.
        const replies = await Promise.all([1, 2, 3].map(() => call(path, { server: limited })))
        const refused = replies.find((r) => r.status === 429)
        expect(refused, path).toBeDefined()
        expect(refused!.body.error.code).toBe('RATE_LIMITED')
        expect(refused!.headers.get('retry-after')).toMatch(/^\d+$/)
        await new Promise((r) => setTimeout(r, 1100))
      }
    } finally {
      await limited.close()
    }
  })

  it('503 when the database is unreachable', async () => {
    const down = await startApiServer(db.url)
    try {
      await down.db.pool.end().catch(() => {})
      // A pool that cannot connect: the server's own database handle is gone.
      for (const path of endpoints()) {
        const reply = await call(path, { server: down })
        expect(reply.status, path).toBe(503)
        expect(reply.body.error.code).toBe('SERVICE_UNAVAILABLE')
      }
    } finally {
      await down.web.close()
    }
  })
})

describe('GET /v1/media', () => {
  const image = () => svgDataUri('pioneer 2')
  const mediaPath = () => `/v1/media?url=${encodeURIComponent(image())}`
  const sha = () =>
    createHash('sha256')
      .update(Buffer.from(image().split(',')[1]!, 'base64'))
      .digest('hex')

  it('serves the stored bytes without a credential, with the safety and caching headers', async () => {
    const res = await fetch(`${api.base}${mediaPath()}`)
    expect(res.status).toBe(200)
    const bytes = Buffer.from(await res.arrayBuffer())
    expect(bytes.toString()).toContain('pioneer 2')
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(sha())
    expect(res.headers.get('content-type')).toBe('image/svg+xml')
    expect(res.headers.get('x-content-type-options')).toBe('nosniff')
    expect(res.headers.get('content-security-policy')).toBe(
      "default-src 'none'; style-src 'unsafe-inline'; sandbox",
    )
    expect(res.headers.get('etag')).toBe(`"${sha()}"`)
    expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable')
    expect(res.headers.get('accept-ranges')).toBe('bytes')
    expect(res.headers.get('content-length')).toBe(String(bytes.length))
    const nft = await call(`/v1/nfts/${c.pioneers}/2`)
    expect(new URL(nft.body.data.media_url).search).toBe(new URL(`${api.base}${mediaPath()}`).search)
  })

  it('answers HEAD, If-None-Match (304) and byte ranges (206, 416)', async () => {
    const head = await fetch(`${api.base}${mediaPath()}`, { method: 'HEAD' })
    expect(head.status).toBe(200)
    expect(await head.text()).toBe('')
    const size = Number(head.headers.get('content-length'))
    const cached = await fetch(`${api.base}${mediaPath()}`, { headers: { 'If-None-Match': `"${sha()}"` } })
    expect(cached.status).toBe(304)
    const part = await fetch(`${api.base}${mediaPath()}`, { headers: { Range: 'bytes=0-3' } })
    expect(part.status).toBe(206)
    expect(part.headers.get('content-range')).toBe(`bytes 0-3/${size}`)
    expect(await part.text()).toBe('<svg')
    const tail = await fetch(`${api.base}${mediaPath()}`, { headers: { Range: 'bytes=-6' } })
    expect(tail.status).toBe(206)
    expect(await tail.text()).toBe('</svg>')
    const open = await fetch(`${api.base}${mediaPath()}`, { headers: { Range: `bytes=${size - 2}-` } })
    expect(open.status).toBe(206)
    expect(open.headers.get('content-length')).toBe('2')
    for (const range of [`bytes=${size}-`, `bytes=${size + 10}-${size + 20}`, 'bytes=5-2', 'bytes=abc']) {
      const bad = await fetch(`${api.base}${mediaPath()}`, { headers: { Range: range } })
      expect(bad.status, range).toBe(416)
      expect(bad.headers.get('content-range')).toBe(`bytes */${size}`)
      const body = await bad.json()
      await contract.expectResponse('GET', '/v1/media', 416, body)
    }
    // A stale If-Range sends the whole representation.
    const stale = await fetch(`${api.base}${mediaPath()}`, {
      headers: { Range: 'bytes=0-3', 'If-Range': '"x"' },
    })
    expect(stale.status).toBe(200)
  })

  it('answers 404 for a location with no stored bytes and 400 for a malformed request', async () => {
    for (const [query, status] of [
      [`?url=${encodeURIComponent('https://example.com/never-stored.png')}`, 404],
      ['', 400],
      ['?url=', 400],
      ['?url=a&url=b', 400],
      [`?url=a&other=1`, 400],
      [`?url=${'a'.repeat(9000)}`, 400],
      ['?url=https%3A%2F%2Fexample.com%2F%ff.png', 400],
    ] as const) {
      const res = await fetch(`${api.base}/v1/media${query}`)
      expect(res.status, query.slice(0, 40)).toBe(status)
      const body = await res.json()
      expect(body.error.request_id).toBe(res.headers.get('x-request-id'))
      await contract.expectResponse('GET', '/v1/media', status, body)
    }
    const post = await fetch(`${api.base}${mediaPath()}`, { method: 'POST' })
    expect(post.status).toBe(405)
    expect(post.headers.get('allow')).toBe('GET, HEAD')
  })
})
