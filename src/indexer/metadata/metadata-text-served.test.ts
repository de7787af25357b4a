/**
 * Text of a document as /v1 serves it, end to end (the real token job over
 * data: URIs, the real PostgreSQL, the stored ranking, /v1 over HTTP).
 * docs/metadata.md, "Caps": text is cut by code points, never inside one
 * (a `name` whose 1,000th character is an emoji keeps it whole, no U+FFFD),
 * and control characters take no room under the cap wherever they are: a
 * run of them inside a description or a trait value loses none of the text
 * after it, so values that differ only there are one value to the token,
 * /traits and trait= filters.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ApiServer, startApiServer } from '@/test/api-client'
import { addr, fixturePool, jsonDataUri, SimulatedChain, tempMediaDir, ZERO } from '@/test/api-fixtures'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import { computeRarity } from '@/test/rarity-fixtures'

const collection = addr('served-text')
const owner = addr('served-text-owner')
const CONTROL_RUN = '\u0001'.repeat(3_000)

const DOCS: Record<number, Record<string, unknown>> = {
  // 999 ASCII letters and two emoji: the 1,000th character is an emoji (two UTF-16 units).
  1: { name: `${'a'.repeat(999)}😀😀`, attributes: [{ trait_type: 'Hat', value: 'Top' }] },
  2: { name: 'Plain', attributes: [{ trait_type: 'Hat', value: 'Cap!' }] },
  // The same value, with a run of control characters inside it.
  3: {
    name: 'Noisy',
    description: `Before${'\u0001'.repeat(25_000)} after.`,
    attributes: [{ trait_type: 'Hat', value: `Cap${CONTROL_RUN}!` }],
  },
}

let db: TestDatabase
let api: ApiServer

beforeAll(async () => {
  db = await createTestDatabase()
  const pool = fixturePool(db.url)
  try {
    const chain = new SimulatedChain(pool)
    await chain.init()
    chain.contracts.set(collection, {
      name: 'Served text',
      symbol: 'TXT',
      deployBlock: 1n,
      tokenUri: (id) => jsonDataUri(DOCS[Number(id)]),
    })
    await chain.mine(1, (_b, emit) => {
      for (const id of Object.keys(DOCS)) emit({ collection, tokenId: BigInt(id), from: ZERO, to: owner })
    })
    await chain.describeCollections()
    await chain.fetchTokenMetadata(tempMediaDir())
  } finally {
    await pool.end()
  }
  await computeRarity(db.pool, collection)
  api = await startApiServer(db.url)
}, 120_000)

afterAll(async () => {
  await api?.close()
  await db?.drop()
})

interface NftBody {
  token_id: string
  name?: string
  metadata_status: string
  description?: string
  attributes?: Array<{ trait_type: string; value: unknown }>
}

async function nft(id: number): Promise<NftBody> {
  const { body } = await api.json<{ data: NftBody }>(`/v1/nfts/${collection}/${id}?include_metadata=true`)
  expect(body.data.metadata_status).toBe('ok')
  return body.data
}

describe('text of a document as /v1 serves it', () => {
  it('cuts a long name by code points, never inside one: no U+FFFD the document did not have', async () => {
    const { name } = await nft(1)
    expect(name).not.toContain('\ufffd')
    expect(name).toBe(`${'a'.repeat(999)}😀`)
  })

  it('keeps the text after a run of control characters inside a description', async () => {
    expect((await nft(3)).description).toBe('Before after.')
  })

  it('serves values that differ only in control characters as one value', async () => {
    expect((await nft(3)).attributes).toEqual([{ trait_type: 'Hat', value: 'Cap!' }])
  })

  it('/traits counts them as one value', async () => {
    const { body } = await api.json<{
      data: {
        trait_types: Array<{ trait_type: string; values: Array<{ value: unknown; token_count: number }> }>
      }
    }>(`/v1/collections/${collection}/traits`)
    const hat = body.data.trait_types.find((t) => t.trait_type === 'Hat')!
    expect(hat.values).toEqual(expect.arrayContaining([{ value: 'Cap!', token_count: 2 }]))
  })

  it('trait=Hat:Cap! lists both tokens', async () => {
    const { body } = await api.json<{ data: Array<{ token_id: string }> }>(
      `/v1/collections/${collection}/nfts?trait=${encodeURIComponent('Hat:Cap!')}`,
    )
    expect(body.data.map((t) => t.token_id)).toEqual(['2', '3'])
  })
})
