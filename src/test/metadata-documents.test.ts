/**
 * The whole metadata document, end to end (docs/metadata.md, "The whole
 * document"): a local host serves ordinary and hostile documents, the
 * indexer's token job fetches them, and the API serves the normalized fields
 * (include_metadata=true) and the document as fetched
 * (GET /v1/nfts/{address}/{tokenId}/metadata). Hostile documents are capped,
 * stored and served as valid JSON; nothing answers 500 and the queue drains.
 */
import pino from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { normalizeStoredDocuments } from '@/indexer/metadata/stored-documents'
import { json, startServer, type TestServer } from '@/indexer/test/http-server'
import { type ApiServer, startApiServer } from '@/test/api-client'
import { addr, fixturePool, SimulatedChain, tempMediaDir, ZERO } from '@/test/api-fixtures'
import { createTestDatabase, type TestDatabase } from '@/test/db'

const collection = addr('documents')
const owner = addr('document-owner')
const MB_STRING = 'x'.repeat(1_000_000)

/** Token id -> what the host serves for it (a route), and the outcome the queue must record. */
const DOCS: Record<number, { body: string | Buffer; status: string }> = {
  1: {
    status: 'ok',
    body: JSON.stringify({
      name: 'Document #1',
      description: 'An ordinary document.',
      image: 'ipfs://bafyimage/1.png',
      animation_url: 'ipfs://bafyanim/1.mp4',
      external_url: 'https://example.com/tokens/1',
      background_color: '#1F2A44',
      attributes: [
        { trait_type: 'Background', value: 'Blue' },
        { trait_type: 'Level', value: 3, display_type: 'number' },
        { trait_type: 'Shiny', value: true },
      ],
    }),
  },
  // 10,000 attributes and a 500,000-character description (together under the fetcher's 1 MiB cap).
  2: {
    status: 'ok',
    body: JSON.stringify({
      description: MB_STRING.slice(0, 500_000),
      attributes: Array.from({ length: 10_000 }, (_, i) => ({ trait_type: `T${i % 300}`, value: i })),
    }),
  },
  3: { status: 'ok', body: JSON.stringify({ name: 'Long', description: MB_STRING }) },
  // Nesting far beyond what jsonb (or a recursive walk) takes.
  4: {
    status: 'ok',
    body: `{"name":"Deep","attributes":${'['.repeat(200_000)}${']'.repeat(200_000)},"properties":${'{"a":'.repeat(50_000)}1${'}'.repeat(50_000)}}`,
  },
  5: {
    status: 'ok',
    body: '{"__proto__":{"description":"polluted","isAdmin":true},"constructor":{"prototype":{"x":1}},"name":"Proto","attributes":[{"trait_type":"__proto__","value":"a"},{"__proto__":{"trait_type":"x","value":"y"}}]}',
  },
  // Invalid UTF-8 bytes, NUL and unpaired surrogates.
  6: {
    status: 'ok',
    body: Buffer.concat([
      Buffer.from('{"name":"Bytes \\u0000'),
      Buffer.from([0xff, 0xfe, 0xc3]),
      Buffer.from(
        '","description":"\\ud800 lone","attributes":[{"trait_type":"\\udc00","value":"\\ud83d\\ude00"}]}',
      ),
    ]),
  },
  // Duplicated trait types and values of every type.
  7: {
    status: 'ok',
    body: JSON.stringify({
      name: 'Values',
      attributes: [
        { trait_type: 'Accessory', value: 'Hat' },
        { trait_type: 'Accessory', value: 'Hat' },
        { trait_type: 'Accessory', value: 'Scarf' },
        { trait_type: 'Object', value: { nested: [1, 2] } },
        { trait_type: 'Null', value: null },
        { trait_type: 'Array', value: ['a'] },
        { trait_type: 'Number', value: 1.5 },
        { trait_type: 'Big', value: 1e308 },
        { trait_type: 'Bool', value: false },
      ],
    }),
  },
  8: {
    status: 'ok',
    body: JSON.stringify({ name: 'Props', properties: { Color: 'Red', Size: { value: 2 } } }),
  },
  9: {
    status: 'ok',
    body: JSON.stringify({ name: 'Traits', traits: [{ trait_type: 'Eyes', value: 'Laser' }] }),
  },
  10: { status: 'too_large', body: `{"description":"${'y'.repeat(1_100_000)}"}` },
  11: { status: 'invalid_json', body: '{"name": nope' },
  12: { status: 'invalid_json', body: '["an", "array"]' },
}

let db: TestDatabase
let host: TestServer
let api: ApiServer

beforeAll(async () => {
  host = await startServer({
    '/doc/*': (req, res) => {
      const id = Number(req.url!.split('/').pop())
      const doc = DOCS[id]
      if (!doc) return json({ name: `Plain ${id}` })(req, res)
      res.writeHead(200, { 'content-type': 'application/json' }).end(doc.body)
    },
  })
  db = await createTestDatabase()
  const pool = fixturePool(db.url)
  try {
    const chain = new SimulatedChain(pool)
    await chain.init()
    chain.contracts.set(collection, {
      name: 'Documents',
      symbol: 'DOC',
      deployBlock: 1n,
      tokenUri: (id) => `${host.origin}/doc/${id}`,
    })
    await chain.mine(1, (_b, emit) => {
      for (let id = 1n; id <= 13n; id++) emit({ collection, tokenId: id, from: ZERO, to: owner })
    })
    await chain.describeCollections()
    await chain.fetchTokenMetadata(tempMediaDir(), {
      limits: {
        allowHosts: new Set([`127.0.0.1:${host.port}`]),
        timeoutMs: 5_000,
        maxMetadataBytes: 1024 * 1024,
        maxMediaBytes: 1024 * 1024,
      },
      batch: 5,
    })
  } finally {
    await pool.end()
  }
  api = await startApiServer(db.url)
}, 120_000)

afterAll(async () => {
  await api?.close()
  await db?.drop()
  await host?.close()
})

interface NftBody {
  token_id: string
  metadata_status: string
  description?: string
  attributes?: Array<{ trait_type: string; value: unknown; display_type?: string }>
  animation_url?: string
  external_url?: string
  background_color?: string
  metadata_updated_at?: string
  [key: string]: unknown
}

async function getJson(path: string): Promise<{ status: number; text: string; body: unknown }> {
  const res = await api.request(path)
  const text = await res.text()
  return { status: res.status, text, body: JSON.parse(text) }
}

async function nft(id: number): Promise<NftBody> {
  const { status, body } = await getJson(`/v1/nfts/${collection}/${id}?include_metadata=true`)
  expect(status).toBe(200)
  return (body as { data: NftBody }).data
}

async function documentOf(
  id: number,
): Promise<{ status: number; text: string; data: Record<string, unknown> }> {
  const { status, text, body } = await getJson(`/v1/nfts/${collection}/${id}/metadata`)
  return { status, text, data: (body as { data: Record<string, unknown> }).data }
}

describe('the whole metadata document', () => {
  it('settles every token with a named outcome: the queue drains', async () => {
    const { rows } = await db.pool.query(
      `SELECT token_id::int AS id, metadata_status, metadata_next_attempt_at IS NULL AS final
         FROM tokens WHERE collection_address = $1 ORDER BY token_id`,
      [collection],
    )
    expect(rows.every((r) => r.final)).toBe(true)
    for (const [id, { status }] of Object.entries(DOCS)) {
      expect(rows.find((r) => r.id === Number(id))?.metadata_status, `token ${id}`).toBe(status)
    }
  })

  it('serves the normalized fields with include_metadata=true, and only then', async () => {
    const one = await nft(1)
    expect(one).toMatchObject({
      name: 'Document #1',
      description: 'An ordinary document.',
      animation_url: 'ipfs://bafyanim/1.mp4',
      external_url: 'https://example.com/tokens/1',
      background_color: '1f2a44',
      attributes: [
        { trait_type: 'Background', value: 'Blue' },
        { trait_type: 'Level', value: 3, display_type: 'number' },
        { trait_type: 'Shiny', value: true },
      ],
    })
    expect(one.metadata_updated_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    const plain = (await getJson(`/v1/nfts/${collection}/1`)).body as { data: NftBody }
    for (const field of [
      'description',
      'attributes',
      'animation_url',
      'external_url',
      'background_color',
      'metadata_updated_at',
    ]) {
      expect(plain.data).not.toHaveProperty(field)
    }
    const fields = Object.keys(plain.data)
    expect(
      Object.keys(one)
        .filter((k) => !fields.includes(k))
        .sort(),
    ).toEqual([
      'animation_url',
      'attributes',
      'background_color',
      'description',
      'external_url',
      'metadata_updated_at',
    ])
  })

  it('serves the same fields on both lists', async () => {
    const page = (await getJson(`/v1/collections/${collection}/nfts?include_metadata=true&limit=100`))
      .body as {
      data: NftBody[]
    }
    expect(page.data).toHaveLength(13)
    expect(page.data[0]).toEqual(await nft(1))
    const owned = (await getJson(`/v1/owners/${owner}/nfts?include_metadata=true&limit=100`)).body as {
      data: NftBody[]
    }
    expect(owned.data).toEqual(page.data)
    const bare = (await getJson(`/v1/collections/${collection}/nfts?limit=100`)).body as { data: NftBody[] }
    expect(bare.data.some((t) => 'attributes' in t || 'description' in t)).toBe(false)
    expect((await api.request(`/v1/collections/${collection}/nfts?include_metadata=1`)).status).toBe(400)
  })

  it('caps huge attribute lists and megabyte strings', async () => {
    const two = await nft(2)
    expect(two.attributes).toHaveLength(100)
    expect(two.description).toHaveLength(10_000)
    const three = await nft(3)
    expect(three.description).toHaveLength(10_000)
    // The document itself is kept whole (it is under the fetcher's 1 MiB).
    const doc = await documentOf(3)
    expect(doc.status).toBe(200)
    expect(doc.data.document).toEqual({ name: 'Long', description: MB_STRING })
  })

  it('survives any nesting: stored cut at 64 levels, no attributes', async () => {
    const four = await nft(4)
    expect(four.name).toBe('Deep')
    expect(four.attributes).toBeUndefined()
    const doc = await documentOf(4)
    expect(doc.status).toBe(200)
    let depth = 0
    let node: unknown = (doc.data.document as Record<string, unknown>).properties
    while (node && typeof node === 'object') {
      depth++
      node = (node as { a: unknown }).a
    }
    expect(depth).toBe(64)
  })

  it('keeps __proto__ and constructor as keys, never as prototypes', async () => {
    const five = await nft(5)
    expect(five.description).toBeUndefined()
    expect(five.attributes).toEqual([{ trait_type: '__proto__', value: 'a' }])
    const doc = await documentOf(5)
    expect(doc.status).toBe(200)
    // Parsed as a client does: JSON.parse defines `__proto__` as an own key.
    const document = JSON.parse(doc.text).data.document as Record<string, unknown>
    expect(Object.keys(document).sort()).toEqual(['__proto__', 'attributes', 'constructor', 'name'])
    expect(Object.hasOwn(document, '__proto__')).toBe(true)
    expect(Object.getOwnPropertyDescriptor(document, '__proto__')?.value).toEqual({
      description: 'polluted',
      isAdmin: true,
    })
    expect(document.constructor).toEqual({ prototype: { x: 1 } })
    expect(({} as Record<string, unknown>).isAdmin).toBeUndefined()
  })

  it('serves invalid UTF-8, NUL and lone surrogates as valid JSON', async () => {
    const six = await nft(6)
    expect(six.name).toBe('Bytes \ufffd\ufffd\ufffd')
    expect(six.description).toBe('\ufffd lone')
    expect(six.attributes).toEqual([{ trait_type: '\ufffd', value: '😀' }])
    const doc = await documentOf(6)
    expect(doc.status).toBe(200)
    expect(doc.data.document).toMatchObject({ description: '\ufffd lone' })
    expect(doc.text).not.toMatch(/\\u0000|\\ud800/)
  })

  it('keeps several values of a type, drops repeated pairs and non-scalar values', async () => {
    expect((await nft(7)).attributes).toEqual([
      { trait_type: 'Accessory', value: 'Hat' },
      { trait_type: 'Accessory', value: 'Scarf' },
      { trait_type: 'Number', value: 1.5 },
      { trait_type: 'Big', value: 1e308 },
      { trait_type: 'Bool', value: false },
    ])
    expect((await nft(8)).attributes).toEqual([
      { trait_type: 'Color', value: 'Red' },
      { trait_type: 'Size', value: 2 },
    ])
    expect((await nft(9)).attributes).toEqual([{ trait_type: 'Eyes', value: 'Laser' }])
  })

  it('serves the document with its source and fetch time; 404 in the envelope without one', async () => {
    const doc = await documentOf(1)
    expect(doc.status).toBe(200)
    expect(doc.data).toEqual({
      collection_address: collection,
      token_id: '1',
      document: JSON.parse(DOCS[1]!.body as string),
      source_uri: `${host.origin}/doc/1`,
      fetched_at: (await nft(1)).metadata_updated_at,
      metadata_status: 'ok',
    })
    for (const id of [10, 11, 12, 999]) {
      const res = await api.request(`/v1/nfts/${collection}/${id}/metadata`)
      expect(res.status, `token ${id}`).toBe(404)
      const body = (await res.json()) as { error: { code: string; request_id: string } }
      expect(body.error.code).toBe('NOT_FOUND')
      expect(body.error.request_id).toBe(res.headers.get('x-request-id'))
    }
    const noScope = await fetch(`${api.base}/v1/nfts/${collection}/1/metadata`)
    expect(noScope.status).toBe(401)
  })

  it('never answers 500 on any token, with or without include_metadata', async () => {
    for (let id = 1; id <= 13; id++) {
      for (const path of [
        `/v1/nfts/${collection}/${id}`,
        `/v1/nfts/${collection}/${id}?include_metadata=true`,
        `/v1/nfts/${collection}/${id}/metadata`,
      ]) {
        const res = await api.request(path)
        expect([200, 404], path).toContain(res.status)
        JSON.parse(await res.text())
      }
    }
  })

  it('fills the fields of documents stored before them from the stored document, fetching nothing', async () => {
    const expected = await nft(1)
    const hits = host.hits.length
    const { rows } = await db.pool.query(
      `UPDATE tokens SET description = NULL, attributes = NULL, animation_url = NULL, external_url = NULL,
              background_color = NULL, metadata_updated_at = NULL
        WHERE collection_address = $1 AND token_id IN (1, 2) RETURNING id::text`,
      [collection],
    )
    // A token whose document went with it (a reorganisation) is only taken off the list.
    await db.pool.query(
      'INSERT INTO token_document_backfill (token_id) SELECT unnest($1::bigint[]) UNION SELECT 999999',
      [rows.map((r) => r.id)],
    )
    expect((await nft(1)).attributes).toBeUndefined()
    const silent = pino({ level: 'silent' })
    expect(await normalizeStoredDocuments(db.pool, silent)).toBe(2)
    expect(await nft(1)).toEqual(expected)
    expect((await nft(2)).attributes).toHaveLength(100)
    const left = await db.pool.query('SELECT count(*)::int AS n FROM token_document_backfill')
    expect(left.rows[0].n).toBe(0)
    expect(host.hits.length).toBe(hits)
    expect(await normalizeStoredDocuments(db.pool, silent)).toBe(0)
  })
})
