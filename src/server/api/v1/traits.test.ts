/**
 * Traits, exact (docs/api.md, "Traits"): tokens with random attributes are
 * inserted straight into a scratch database, and GET
 * /v1/collections/{address}/traits is compared with counts computed here,
 * independently, from the inserted data, once the collection's counts and
 * ranking are computed and stored as the indexer's rarity worker does.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { traitParam } from '@/client/trait-param'
import { selectCollectionTraits } from '@/db/queries/traits'
import { mulberry32 } from '@/lib/random'
import { type ApiServer, startApiServer } from '@/test/api-client'
import { addr } from '@/test/api-fixtures'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import { computeRarity } from '@/test/rarity-fixtures'

type Value = string | number | boolean
interface Attribute {
  trait_type: string
  value: Value
}
interface InsertedToken {
  tokenId: number
  burned: boolean
  status: string
  attributes: Attribute[] | null
}

const SEED = 42_042
const TYPES = ['Background', 'Eyes', 'Hat', 'Level', 'Shiny', 'Mouth:Style', 'Ünïcode 😀']
// Values of every kind, and look-alikes that are different JSON values: 1 and "1", true and "true".
const VALUES: Value[] = ['Blue', 'Red', 'Green', 1, '1', 2, 2.5, true, false, 'true', 'a:b', 'Ünï 😀', '']

function randomTokens(count: number, rand: () => number): InsertedToken[] {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!
  const tokens: InsertedToken[] = []
  for (let i = 0; i < count; i++) {
    const r = rand()
    const status = r < 0.08 ? 'pending' : r < 0.12 ? 'http_error' : 'ok'
    let attributes: Attribute[] | null = null
    if (rand() > 0.05) {
      attributes = []
      for (const type of TYPES) {
        // Each type present with its own probability; sometimes twice (duplicated trait type).
        if (rand() < 0.2 + TYPES.indexOf(type) * 0.1)
          attributes.push({ trait_type: type, value: pick(VALUES) })
        if (rand() < 0.05) attributes.push({ trait_type: type, value: pick(VALUES) })
      }
    }
    tokens.push({ tokenId: i * 3 + 1, burned: rand() < 0.1, status, attributes })
  }
  return tokens
}

async function insert(db: TestDatabase, address: string, tokens: InsertedToken[]): Promise<void> {
  await db.pool.query(
    `INSERT INTO collections (address, name, symbol, listed) VALUES ($1, 'Traits', 'TRT', true)`,
    [address],
  )
  await db.pool.query(
    `INSERT INTO tokens (collection_address, token_id, current_owner, is_burned, metadata_status, attributes)
     SELECT $1, x.token_id, $2, x.burned, x.status, x.attributes
       FROM jsonb_to_recordset($3::jsonb) AS x(token_id numeric, burned boolean, status text, attributes jsonb)`,
    [
      address,
      addr('traits-owner'),
      JSON.stringify(
        tokens.map((t) => ({
          token_id: t.tokenId,
          burned: t.burned,
          status: t.status,
          attributes: t.attributes,
        })),
      ),
    ],
  )
}

/** A JSON value's identity as the API compares values. */
const key = (v: Value) => JSON.stringify(v)

/** The expected /traits counts: type -> { tokens with the type, value key -> tokens }. */
function expectedTraits(tokens: InsertedToken[]) {
  const counted = tokens.filter((t) => !t.burned && t.status === 'ok')
  const types = new Map<string, { tokens: number; values: Map<string, number> }>()
  for (const token of counted) {
    const seenTypes = new Set<string>()
    const seenPairs = new Set<string>()
    for (const a of token.attributes ?? []) {
      const type = types.get(a.trait_type) ?? { tokens: 0, values: new Map() }
      types.set(a.trait_type, type)
      if (!seenTypes.has(a.trait_type)) {
        seenTypes.add(a.trait_type)
        type.tokens++
      }
      const pair = `${a.trait_type}\u0000${key(a.value)}`
      if (!seenPairs.has(pair)) {
        seenPairs.add(pair)
        type.values.set(key(a.value), (type.values.get(key(a.value)) ?? 0) + 1)
      }
    }
  }
  return { tokens: counted.length, types }
}

interface TraitsBody {
  data: {
    contract_address: string
    token_count: number
    trait_types: Array<{
      trait_type: string
      token_count: number
      missing_count: number
      value_count: number
      values: Array<{ value: Value; token_count: number }>
      values_omitted: number
    }>
    trait_types_omitted: number
  }
}

let db: TestDatabase
let api: ApiServer
const collection = addr('traits')
const bare = addr('traits-bare')
let tokens: InsertedToken[]

beforeAll(async () => {
  db = await createTestDatabase()
  tokens = randomTokens(600, mulberry32(SEED))
  await insert(db, collection, tokens)
  await insert(db, bare, [{ tokenId: 1, burned: false, status: 'pending', attributes: null }])
  // Counts and ranks are the stored ones, which the indexer's rarity worker computes (src/indexer/store/rarity.ts).
  await computeRarity(db.pool, collection)
  api = await startApiServer(db.url)
}, 60_000)

afterAll(async () => {
  await api?.close()
  await db?.drop()
})

describe('GET /v1/collections/{address}/traits', () => {
  it('counts every type and value exactly as computed from the inserted tokens', async () => {
    const { body } = await api.json<TraitsBody>(`/v1/collections/${collection}/traits`)
    const expected = expectedTraits(tokens)
    expect(body.data.contract_address).toBe(collection)
    expect(body.data.token_count).toBe(expected.tokens)
    expect(body.data.trait_types_omitted).toBe(0)
    const served = new Map(
      body.data.trait_types.map((t) => {
        expect(t.values_omitted).toBe(0)
        expect(t.value_count).toBe(t.values.length)
        expect(t.missing_count).toBe(expected.tokens - t.token_count)
        return [
          t.trait_type,
          { tokens: t.token_count, values: new Map(t.values.map((v) => [key(v.value), v.token_count])) },
        ]
      }),
    )
    expect(served).toEqual(expected.types)
    // 1 and "1" are two values; so are true and "true".
    const level = body.data.trait_types.find((t) => t.trait_type === 'Level')!.values.map((v) => v.value)
    expect(level).toEqual(expect.arrayContaining([1, '1', true, 'true']))
  })

  it('orders types and values by token count, most first', async () => {
    const { body } = await api.json<TraitsBody>(`/v1/collections/${collection}/traits`)
    const types = body.data.trait_types
    for (let i = 1; i < types.length; i++)
      expect(types[i - 1]!.token_count).toBeGreaterThanOrEqual(types[i]!.token_count)
    for (const type of types)
      for (let i = 1; i < type.values.length; i++)
        expect(type.values[i - 1]!.token_count).toBeGreaterThanOrEqual(type.values[i]!.token_count)
  })

  it('answers an empty list for a collection without counted tokens, 404 for an unknown one', async () => {
    const { body } = await api.json<TraitsBody>(`/v1/collections/${bare}/traits`)
    expect(body.data).toMatchObject({ token_count: 0, trait_types: [], trait_types_omitted: 0 })
    const unknown = await api.request(`/v1/collections/${addr('traits-unknown')}/traits`)
    expect(unknown.status).toBe(404)
    const error = (await unknown.json()) as { error: { code: string; message: string } }
    expect(error.error).toMatchObject({
      code: 'NOT_FOUND',
      message: expect.stringContaining(addr('traits-unknown')),
    })
    const malformed = await api.request('/v1/collections/0x1234/traits')
    expect(malformed.status).toBe(400)
    expect(((await malformed.json()) as { error: { code: string } }).error.code).toBe('INVALID_ARGUMENT')
  })

  it('caps types and values, counting the rest', async () => {
    const rows = await selectCollectionTraits(db, { address: collection, maxTypes: 2, maxValues: 3 })
    const expected = expectedTraits(tokens)
    const byCount = [...expected.types].sort((a, b) => b[1].tokens - a[1].tokens)
    const kept = [...new Set(rows.map((r) => r.trait_type))]
    expect(kept).toHaveLength(2)
    expect(Number(rows[0]!.types)).toBe(expected.types.size)
    for (const type of kept) {
      const of = rows.filter((r) => r.trait_type === type)
      expect(of).toHaveLength(3)
      expect(Number(of[0]!.type_values)).toBe(expected.types.get(type!)!.values.size)
      // The kept values are the most frequent ones.
      const top = [...expected.types.get(type!)!.values.values()].sort((a, b) => b - a).slice(0, 3)
      expect(of.map((r) => Number(r.value_count))).toEqual(top)
    }
    expect(kept.map((t) => expected.types.get(t!)!.tokens)).toEqual(
      byCount.slice(0, 2).map(([, t]) => t.tokens),
    )
  })

  it('lists fewer values with values_limit and only the types asked for with trait_type, the counts whole', async () => {
    const path = `/v1/collections/${collection}/traits`
    const { body: whole } = await api.json<TraitsBody>(path)
    const types = whole.data.trait_types
    for (const limit of [0, 1, 3]) {
      const { body } = await api.json<TraitsBody>(`${path}?values_limit=${limit}`)
      expect(body.data.trait_types_omitted).toBe(0)
      expect(body.data.trait_types.map((t) => t.trait_type)).toEqual(types.map((t) => t.trait_type))
      for (const [i, type] of body.data.trait_types.entries()) {
        const all = types[i]!
        expect(type.values).toEqual(all.values.slice(0, limit))
        expect(type.value_count).toBe(all.value_count)
        expect(type.values_omitted).toBe(all.value_count - Math.min(limit, all.value_count))
        expect(type.token_count).toBe(all.token_count)
      }
    }
    // Exact names, a colon and non-ASCII included; an unknown type is left out; the order is by count.
    const asked = ['Ünïcode 😀', 'Mouth:Style', 'Background', 'No such type', 'background']
    const { body: some } = await api.json<TraitsBody>(
      `${path}?${asked.map((t) => `trait_type=${encodeURIComponent(t)}`).join('&')}&values_limit=2`,
    )
    const expectedTypes = types.filter((t) => asked.includes(t.trait_type))
    expect(expectedTypes).toHaveLength(3)
    expect(some.data.trait_types).toEqual(
      expectedTypes.map((t) => ({ ...t, values: t.values.slice(0, 2), values_omitted: t.value_count - 2 })),
    )
    expect(some.data.trait_types_omitted).toBe(types.length - 3)
    expect(some.data.token_count).toBe(whole.data.token_count)
    // One parameter is a list of one; none of the collection's types: no types, all omitted.
    const { body: one } = await api.json<TraitsBody>(`${path}?trait_type=Hat`)
    expect(one.data.trait_types).toEqual(types.filter((t) => t.trait_type === 'Hat'))
    const { body: none } = await api.json<TraitsBody>(`${path}?trait_type=Nothing`)
    expect(none.data).toMatchObject({ trait_types: [], trait_types_omitted: types.length })
  })

  it('answers 400 in the envelope for a bad values_limit or trait_type, never 500', async () => {
    const path = `/v1/collections/${collection}/traits`
    const bad = [
      'values_limit=-1',
      'values_limit=1001',
      'values_limit=abc',
      'values_limit=1.5',
      'values_limit=1&values_limit=2',
      'trait_type=',
      `trait_type=${'T'.repeat(257)}`,
      'trait_type=T%00',
      Array.from({ length: 101 }, (_, i) => `trait_type=T${i}`).join('&'),
    ]
    for (const q of bad) {
      const res = await api.request(`${path}?${q}`)
      expect(res.status, q).toBe(400)
      expect(((await res.json()) as { error: { code: string } }).error.code, q).toBe('INVALID_ARGUMENT')
    }
    // A hundred distinct types, 256 characters, and a type repeated are allowed.
    const hundred = Array.from({ length: 100 }, (_, i) => `trait_type=T${i}`).join('&')
    for (const q of [
      hundred,
      `trait_type=${'T'.repeat(256)}`,
      'trait_type=Hat&trait_type=Hat',
      'values_limit=1000',
    ])
      expect((await api.request(`${path}?${q}`)).status, q.slice(0, 40)).toBe(200)
  })
})

interface NftPage {
  data: Array<{ token_id: string }>
  pagination: { has_more: boolean; next_page_params?: Record<string, string | number> }
}

/** Follows next_page_params to the end; the token ids in the order served. */
async function walk(path: string, limit: number): Promise<string[]> {
  const ids: string[] = []
  let query = `${path}&limit=${limit}`
  for (let pages = 0; pages < 1_000; pages++) {
    const { body } = await api.json<NftPage>(query)
    expect(body.data.length).toBeLessThanOrEqual(limit)
    ids.push(...body.data.map((t) => t.token_id))
    if (!body.pagination.has_more) return ids
    const next = new URLSearchParams(
      Object.entries(body.pagination.next_page_params!).map(([k, v]) => [k, String(v)]),
    )
    query = `${path}&limit=${limit}&${next}`
  }
  throw new Error('walk did not end')
}

/** What a `Type:Value` parameter matches, computed here: the string, and the number or boolean it spells. */
function matches(a: Attribute, type: string, text: string): boolean {
  if (a.trait_type !== type) return false
  if (a.value === text) return true
  if (typeof a.value === 'number') return String(a.value) === text
  if (typeof a.value === 'boolean') return String(a.value) === text
  return false
}

/** A filter as a type and the value's text. */
type Filter = [type: string, value: string]

/** The tokens a set of filters lists, computed here. */
function expectedIds(filters: Filter[], includeBurned: boolean): string[] {
  const byType = new Map<string, string[]>()
  for (const [type, text] of filters) byType.set(type, [...(byType.get(type) ?? []), text])
  return tokens
    .filter((t) => (includeBurned || !t.burned) && t.status === 'ok')
    .filter((t) =>
      [...byType].every(([type, texts]) =>
        (t.attributes ?? []).some((a) => texts.some((text) => matches(a, type, text))),
      ),
    )
    .map((t) => t.tokenId)
    .sort((a, b) => a - b)
    .map(String)
}

const rawQuery = (params: string[]) => params.map((p) => `trait=${encodeURIComponent(p)}`).join('&')
/** The filters as `trait` parameters, as the explorer writes them (a colon in a type escaped). */
const query = (filters: Filter[]) => rawQuery(filters.map(([type, value]) => traitParam(type, value)))

describe('GET /v1/collections/{address}/nfts?trait=Type:Value', () => {
  it('walks exactly the matching tokens, in token order, for random filters', async () => {
    const rand = mulberry32(SEED + 1)
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!
    let nonEmpty = 0
    for (let round = 0; round < 24; round++) {
      const filters: Filter[] = []
      const n = 1 + Math.floor(rand() * 4)
      for (let i = 0; i < n; i++) filters.push([pick(TYPES), String(pick(VALUES))])
      const includeBurned = round % 4 === 3
      const expected = expectedIds(filters, includeBurned)
      if (expected.length > 0) nonEmpty++
      const path = `/v1/collections/${collection}/nfts?${query(filters)}${includeBurned ? '&include_burned=true' : ''}`
      expect(await walk(path, 1 + Math.floor(rand() * 7)), path).toEqual(expected)
    }
    expect(nonEmpty, 'the random filters matched some tokens').toBeGreaterThan(8)
  })

  it('agrees with /traits: one value of a type lists as many tokens as it counts', async () => {
    const { body } = await api.json<TraitsBody>(`/v1/collections/${collection}/traits`)
    const type = body.data.trait_types.find((t) => t.trait_type === 'Background')!
    const strings = type.values.filter(
      (v) => typeof v.value === 'string' && !/^(true|false|[0-9.]+)$/.test(v.value),
    )
    expect(strings.length).toBeGreaterThan(2)
    for (const v of strings) {
      const ids = await walk(
        `/v1/collections/${collection}/nfts?${query([['Background', String(v.value)]])}`,
        50,
      )
      expect(ids).toHaveLength(v.token_count)
    }
  })

  it('splits at the first colon not escaped and reads URL-encoded types and values', async () => {
    // Type "Eyes", value "a:b"; "Mouth:Style:a:b" is type "Mouth" (none has it), "Mouth\:Style:a:b" type "Mouth:Style".
    const cases: Array<[string, Filter]> = [
      ['Eyes:a:b', ['Eyes', 'a:b']],
      ['Mouth:Style:a:b', ['Mouth', 'Style:a:b']],
      ['Mouth\\:Style:a:b', ['Mouth:Style', 'a:b']],
      ['Ünïcode 😀:Ünï 😀', ['Ünïcode 😀', 'Ünï 😀']],
      ['Hat:', ['Hat', '']],
    ]
    for (const [param, filter] of cases) {
      const ids = await walk(`/v1/collections/${collection}/nfts?${rawQuery([param])}`, 10)
      expect(ids, param).toEqual(expectedIds([filter], false))
      if (filter[0] === 'Mouth') expect(ids).toEqual([])
      else expect(ids.length, param).toBeGreaterThan(0)
    }
  })

  it('answers 400 in the envelope for malformed filters, never 500', async () => {
    const bad = [
      'trait=NoColon',
      'trait=%3Avalue',
      `trait=${'T'.repeat(257)}%3Av`,
      `trait=T%3A${'v'.repeat(1_025)}`,
      'trait=T%3A%00',
      'trait=%E0%A4%A',
      Array.from({ length: 21 }, (_, i) => `trait=T${i}%3Av`).join('&'),
    ]
    for (const q of bad) {
      const res = await api.request(`/v1/collections/${collection}/nfts?${q}`)
      expect(res.status, q).toBe(400)
      const body = (await res.json()) as { error: { code: string; message: string } }
      expect(body.error.code, q).toBe('INVALID_ARGUMENT')
    }
    // Twenty parameters are allowed.
    const twenty = Array.from({ length: 20 }, (_, i) => `trait=T${i}%3Av`).join('&')
    expect((await api.request(`/v1/collections/${collection}/nfts?${twenty}`)).status).toBe(200)
  })

  it('without trait or sort, serves the plain list: every live token in token order, no extension fields', async () => {
    const ids = await walk(`/v1/collections/${collection}/nfts?include_burned=false`, 50)
    expect(ids).toEqual(tokens.filter((t) => !t.burned).map((t) => String(t.tokenId)))
    const text = await (await api.request(`/v1/collections/${collection}/nfts?limit=5`)).text()
    expect(text).not.toMatch(/attributes|rarity_/)
  })
})

/** The expected ranking, computed here: information content per token, rounded to 6 decimals. */
function expectedRarity(): Array<{ tokenId: string; score: number; rank: number }> {
  const counted = tokens.filter((t) => !t.burned && t.status === 'ok')
  const n = counted.length
  const { types } = expectedTraits(tokens)
  const scored = counted.map((t) => {
    let score = 0
    for (const [type, stats] of types) {
      const values = (t.attributes ?? []).filter((a) => a.trait_type === type).map((a) => key(a.value))
      const p = values.length
        ? Math.min(...values.map((v) => stats.values.get(v)!)) / n
        : (n - stats.tokens) / n
      score += -Math.log2(p)
    }
    return { tokenId: t.tokenId, score: Math.round(score * 1e6) / 1e6 }
  })
  scored.sort((a, b) => b.score - a.score || a.tokenId - b.tokenId)
  return scored.map((s) => ({
    tokenId: String(s.tokenId),
    score: s.score,
    rank: 1 + scored.filter((o) => o.score > s.score).length,
  }))
}

interface RarityPage {
  data: Array<{ token_id: string; rarity_score: number; rarity_rank: number }>
  pagination: { has_more: boolean; next_page_params?: Record<string, string | number> }
}

async function walkRarity(path: string, limit: number) {
  const items: RarityPage['data'] = []
  let query = `${path}&limit=${limit}`
  for (let pages = 0; pages < 1_000; pages++) {
    const { body } = await api.json<RarityPage>(query)
    items.push(...body.data)
    if (!body.pagination.has_more) return items
    const next = new URLSearchParams(
      Object.entries(body.pagination.next_page_params!).map(([k, v]) => [k, String(v)]),
    )
    query = `${path}&limit=${limit}&${next}`
  }
  throw new Error('walk did not end')
}

describe('GET /v1/collections/{address}/nfts?sort=rarity', () => {
  it('ranks every counted token by information content, as computed from the inserted tokens', async () => {
    const expected = expectedRarity()
    const served = await walkRarity(`/v1/collections/${collection}/nfts?sort=rarity`, 37)
    expect(served.map((t) => t.token_id)).toEqual(expected.map((t) => t.tokenId))
    expect(served.map((t) => t.rarity_rank)).toEqual(expected.map((t) => t.rank))
    served.forEach((t, i) => {
      expect(t.rarity_score).toBeCloseTo(expected[i]!.score, 5)
    })
    expect(served[0]!.rarity_rank).toBe(1)
  })

  it('keeps the ranking under trait filters, and refuses include_burned', async () => {
    const params: Filter[] = [
      ['Background', 'Blue'],
      ['Background', 'Red'],
      ['Level', '1'],
    ]
    const allowed = new Set(expectedIds(params, false))
    expect(allowed.size).toBeGreaterThan(1)
    const served = await walkRarity(`/v1/collections/${collection}/nfts?sort=rarity&${query(params)}`, 2)
    expect(served.map((t) => t.token_id)).toEqual(
      expectedRarity()
        .filter((t) => allowed.has(t.tokenId))
        .map((t) => t.tokenId),
    )
    const res = await api.request(`/v1/collections/${collection}/nfts?sort=rarity&include_burned=true`)
    expect(res.status).toBe(400)
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('INVALID_ARGUMENT')
    const plain = await api.json<RarityPage>(`/v1/collections/${collection}/nfts?limit=3`)
    expect(plain.body.data[0]).not.toHaveProperty('rarity_rank')
  })
})
