/**
 * Traits, exact, end to end (docs/api.md, "Traits" and "Rarity";
 * docs/metadata.md, "The whole document"): two ERC-721 collections are
 * minted on anvil, their tokenURIs point at a local HTTP host that serves,
 * per token, a document generated from a seeded PRNG in every shape the
 * indexer reads (`attributes` / `traits` arrays and objects, `properties`,
 * every key spelling, look-alike values, duplicates, entries to skip, caps,
 * documents that are invalid or missing). The indexer fetches and
 * normalizes them; the test then reads `/traits`, `?trait=` pages and
 * `sort=rarity` over HTTP and compares them with what it computes itself
 * from the documents, by the documented rules (not with the indexer's
 * normalizer).
 *
 * Another seed: TRAITS_SEED=<n> npx vitest run -c src/test/vitest.config.ts src/test/traits-end-to-end.test.ts
 */
import type { Address } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestChain, type TestChain } from '@/indexer/test/chain'
import { startServer, type TestServer } from '@/indexer/test/http-server'
import { type RunningIndexer, startIndexer, testConfig } from '@/indexer/test/indexer'
import { waitFor, waitForIndexed } from '@/indexer/test/oracle'
import { mulberry32 } from '@/lib/random'
import { type ApiServer, startApiServer } from '@/test/api-client'
import { createTestDatabase, type TestDatabase } from '@/test/db'

const SEED = Number(process.env.TRAITS_SEED ?? 20_261_128)
/** Every assertion message carries the seed, so a failure replays with TRAITS_SEED. */
const seedNote = (what: string) => `${what} (TRAITS_SEED=${SEED})`

type Value = string | number | boolean
interface Attribute {
  trait_type: string
  value: Value
  display_type?: string
}

// ---------------------------------------------------------------------------
// The expected normalization, written from docs/metadata.md ("The whole
// document", "Caps"), independently of src/indexer/metadata/normalize.ts.
// ---------------------------------------------------------------------------

const CAPS = { kept: 100, scanned: 1_000, type: 256, value: 1_024, display: 64 }

/** Control characters other than tab and newlines removed, trimmed, cut to `max` code points. */
function clean(text: string, max: number): string {
  const kept = [...text].filter((ch) => {
    const c = ch.codePointAt(0)!
    return !((c < 0x20 && ch !== '\t' && ch !== '\n' && ch !== '\r') || c === 0x7f)
  })
  return [...kept.join('').trim()].slice(0, max).join('').trim()
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v)

/** The first of the spellings the entry has (a null one counts as absent). */
function spelled(entry: Record<string, unknown>, keys: string[]): unknown {
  for (const k of keys) if (Object.hasOwn(entry, k) && entry[k] !== null) return entry[k]
  return undefined
}

function scalarOf(raw: unknown): Value | undefined {
  if (typeof raw === 'string') return clean(raw, CAPS.value) || undefined
  if (typeof raw === 'number' || typeof raw === 'boolean') return raw
  return undefined
}

function displayOf(raw: unknown): string | undefined {
  return typeof raw === 'string' ? clean(raw, CAPS.display) || undefined : undefined
}

function withDisplay(trait_type: string, value: Value, display: string | undefined): Attribute {
  return display === undefined ? { trait_type, value } : { trait_type, value, display_type: display }
}

/** An array entry: `{trait_type, value, display_type?}` in any documented spelling. */
function readEntry(entry: unknown): Attribute | undefined {
  if (!isObject(entry)) return undefined
  const rawType = spelled(entry, ['trait_type', 'traitType', 'type', 'key', 'name'])
  const type =
    typeof rawType === 'string'
      ? clean(rawType, CAPS.type)
      : typeof rawType === 'number'
        ? String(rawType)
        : ''
  const value = scalarOf(spelled(entry, ['value', 'trait_value', 'traitValue']))
  if (!type || value === undefined) return undefined
  return withDisplay(type, value, displayOf(spelled(entry, ['display_type', 'displayType'])))
}

/** A key of an object shape: key → value, or key → {value, display_type?, …}. */
function readProperty(key: string, raw: unknown): Attribute | undefined {
  const type = clean(key, CAPS.type)
  if (!type) return undefined
  if (isObject(raw)) {
    const value = scalarOf(spelled(raw, ['value', 'trait_value', 'traitValue']))
    return value === undefined
      ? undefined
      : withDisplay(type, value, displayOf(spelled(raw, ['display_type', 'displayType'])))
  }
  const value = scalarOf(raw)
  return value === undefined ? undefined : { trait_type: type, value }
}

function readShape(shape: unknown): Attribute[] {
  const found: Array<Attribute | undefined> = Array.isArray(shape)
    ? shape.slice(0, CAPS.scanned).map(readEntry)
    : isObject(shape)
      ? Object.keys(shape)
          .slice(0, CAPS.scanned)
          .map((k) => readProperty(k, shape[k]))
      : []
  const pairs = new Set<string>()
  const out: Attribute[] = []
  for (const a of found) {
    if (!a || out.length === CAPS.kept) continue
    const pair = `${a.trait_type}\u0000${JSON.stringify(a.value)}`
    if (pairs.has(pair)) continue
    pairs.add(pair)
    out.push(a)
  }
  return out
}

/** The attributes of a document: the first of `attributes`, `traits`, `properties` that yields any. */
function expectedAttributes(doc: Record<string, unknown>): Attribute[] | null {
  return attributesSource(doc)?.list ?? null
}

/** Which key (and which shape: array or object) the attributes come from. */
function attributesSource(doc: Record<string, unknown>): { list: Attribute[]; shape: string } | undefined {
  for (const key of ['attributes', 'traits', 'properties']) {
    const shape = Object.hasOwn(doc, key) ? doc[key] : undefined
    const list = readShape(shape)
    if (list.length > 0) return { list, shape: `${key} ${Array.isArray(shape) ? 'array' : 'object'}` }
  }
  return undefined
}

// ---------------------------------------------------------------------------
// The documents.
// ---------------------------------------------------------------------------

const LONG = 'L'.repeat(1_100)
/** Trait types: case and spaces count, a colon cannot be filtered on, numbers become strings, long ones are cut. */
const TYPES: Array<string | number> = [
  'Background',
  'background',
  'Eyes',
  ' Eyes ',
  'Hat',
  'Level',
  'Shiny',
  'Mouth:Style',
  'Ünïcode 😀',
  7,
  2.5,
  `${'T'.repeat(256)}cut`,
  'Tab\tinside',
]
/** Values: look-alikes of other types (1 and "1", true and "true"), values that clean to another one, long ones. */
const VALUES: Value[] = [
  'Blue',
  'Red',
  1,
  '1',
  true,
  'true',
  'Green',
  2,
  2.5,
  '2.5',
  false,
  'false',
  'blue',
  ' Blue ',
  'Bl\u0001ue',
  0,
  -3,
  1e21,
  0.1,
  'a:b',
  'Ünï 😀',
  'x'.repeat(1_024),
  `x${'x'.repeat(1_100)}`,
  `\u0001 ${LONG}`,
  LONG,
]
/** What an entry may hold instead of a value: skipped. */
const NOT_VALUES: unknown[] = [null, '', '   ', '\u0001', { nested: 1 }, ['a'], []]

interface Served {
  /** The HTTP answer of the host for this token's URI. */
  status: number
  body: string
  /** The outcome the queue must record. */
  outcome: 'ok' | 'http_error' | 'invalid_json'
  /** The parsed document when it is one. */
  doc?: Record<string, unknown>
}

interface Token {
  tokenId: bigint
  served: Served
  burned: boolean
  /** Expected: only for an `ok` document. */
  attributes: Attribute[] | null
}

/**
 * `overCaps`: documents that take the collection past the caps of /traits: 1,200 values of one type
 * (1,000 served), and about 190 types (100 served).
 */
function documents(rand: () => number, overCaps: boolean) {
  const pick = <T>(xs: readonly T[], skew = 1.6) => xs[Math.floor(rand() ** skew * xs.length)]!
  const typeSpelling = () =>
    pick(['trait_type', 'trait_type', 'trait_type', 'traitType', 'type', 'key', 'name'], 1)
  const valueSpelling = () => pick(['value', 'value', 'value', 'value', 'trait_value', 'traitValue'], 1)
  const displaySpelling = () => pick(['display_type', 'display_type', 'displayType'], 1)

  /** A list of (type, value) pairs the document means, with duplicates and skipped entries. */
  function pairs(): Array<{ type: string | number; value: unknown; display?: unknown }> {
    const out: Array<{ type: string | number; value: unknown; display?: unknown }> = []
    TYPES.forEach((type, i) => {
      if (rand() < 0.75 - i * 0.05) out.push({ type, value: pick(VALUES) })
      if (rand() < 0.12) out.push({ type, value: pick(VALUES) }) // the type again, another value (or the same)
      if (rand() < 0.05) out.push({ type, value: pick(NOT_VALUES, 1) })
    })
    for (const p of out) if (rand() < 0.15) p.display = pick(['number', 'boost_number', 'date', '  ', ''], 1)
    if (rand() < 0.1 && out.length > 0) out.push({ ...out[0]! }) // a repeated pair
    return out.sort(() => rand() - 0.5)
  }

  const asEntries = (ps: ReturnType<typeof pairs>): unknown[] => {
    const list: unknown[] = ps.map((p) => ({
      [typeSpelling()]: p.type,
      [valueSpelling()]: p.value,
      ...(p.display === undefined ? {} : { [displaySpelling()]: p.display }),
    }))
    // Entries that are no attribute: skipped.
    if (rand() < 0.1) list.splice(Math.floor(rand() * list.length), 0, 'Hat: Cap')
    if (rand() < 0.1) list.splice(Math.floor(rand() * list.length), 0, { value: 'no type' })
    if (rand() < 0.1) list.splice(Math.floor(rand() * list.length), 0, { trait_type: '', value: 'x' })
    if (rand() < 0.1) list.splice(Math.floor(rand() * list.length), 0, { trait_type: true, value: 'x' })
    if (rand() < 0.05) list.splice(Math.floor(rand() * list.length), 0, null, 42, ['Hat', 'Cap'])
    return list
  }
  const asObject = (ps: ReturnType<typeof pairs>): Record<string, unknown> => {
    const out: Record<string, unknown> = {}
    for (const p of ps) {
      if (typeof p.type === 'number') continue // a JSON key is a string
      out[p.type] =
        rand() < 0.5 || p.display !== undefined
          ? {
              value: p.value,
              ...(p.display === undefined ? {} : { [displaySpelling()]: p.display }),
              extra: 'x',
            }
          : p.value
    }
    return out
  }
  /** What an `attributes` key holds when it yields nothing, so that the next shape counts. */
  const empty = () =>
    pick<unknown>([undefined, [], {}, 'none', [{ trait_type: 'Hat', value: null }, { value: 'x' }], null], 1)
  // Nested properties that are not traits (ERC-1155 / Metaplex style).
  const nonTraits = {
    files: [{ uri: 'ipfs://file', type: 'image/png' }],
    creators: [{ address: '0x01', share: 100 }],
    collection: { name: 'Family', family: 'Kin' },
  }

  function document(): Record<string, unknown> {
    const shape = rand()
    const ps = pairs()
    const doc: Record<string, unknown> = { name: 'Token', image: 'ipfs://bafyimage/1.png' }
    const set = (key: string, v: unknown) => {
      if (v !== undefined) doc[key] = v
    }
    if (shape < 0.35) set('attributes', asEntries(ps))
    else if (shape < 0.45) set('attributes', asObject(ps))
    else if (shape < 0.58) {
      set('attributes', empty())
      set('traits', asEntries(ps))
    } else if (shape < 0.63) {
      set('attributes', empty())
      set('traits', asObject(ps))
    } else if (shape < 0.8) {
      set('attributes', empty())
      if (rand() < 0.5) set('traits', empty())
      set('properties', { ...asObject(ps), ...nonTraits })
    } else if (shape < 0.9) {
      // Several shapes: the first that yields any counts.
      set('attributes', asEntries(ps))
      set('traits', asEntries(pairs()))
      set('properties', asObject(pairs()))
    } else if (shape < 0.95) {
      // No attributes in any shape: counted, with no trait.
      if (rand() < 0.5) set('attributes', [])
      if (rand() < 0.5) set('properties', nonTraits)
    } else {
      // Only entries to skip: counted, with no trait.
      set('attributes', asEntries([{ type: 'Hat', value: null }]))
    }
    return doc
  }

  /** Documents at the caps: many entries, many repeats, a long list of entries to skip. */
  const capped = [
    // 1,050 distinct values of one type: the first 100 are kept.
    { attributes: Array.from({ length: 1_050 }, (_, i) => ({ trait_type: 'Serial', value: i })) },
    // A repeated pair counts once before the cap: that pair and 99 others.
    {
      attributes: [
        ...Array.from({ length: 150 }, () => ({ trait_type: 'Hat', value: 'Crown' })),
        ...Array.from({ length: 150 }, (_, i) => ({ trait_type: 'Serial', value: `s${i}` })),
      ],
    },
    // 1,000 entries to skip, then attributes past the entries looked at: `traits` counts.
    {
      attributes: [
        ...Array.from({ length: 1_000 }, () => ({ trait_type: 'Hat', value: null })),
        { trait_type: 'Hat', value: 'Ignored' },
      ],
      traits: [{ trait_type: 'Hat', value: 'Crown' }],
    },
  ]

  function serve(doc: Record<string, unknown>): Served {
    return { status: 200, body: JSON.stringify(doc), outcome: 'ok', doc }
  }

  function served(index: number): Served {
    if (index < capped.length) return serve(capped[index]!)
    if (index === capped.length) {
      // A duplicated key: the last one counts (as JSON.parse).
      const body =
        '{"attributes":[{"trait_type":"Hat","value":"Gone"}],"name":"Dup","attributes":[{"trait_type":"Hat","value":"Kept"}]}'
      return { status: 200, body, outcome: 'ok', doc: JSON.parse(body) }
    }
    const past = index - capped.length - 1
    if (overCaps && past < 12) {
      // 100 distinct values each (a token keeps 100 attributes).
      const values = Array.from({ length: 100 }, (_, i) => `v${String(past * 100 + i).padStart(4, '0')}`)
      return serve({ attributes: values.map((value) => ({ trait_type: 'Serial', value })) })
    }
    if (overCaps && past < 15)
      return serve({
        properties: Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`Extra ${past}-${i}`, i % 7])),
      })
    const r = rand()
    if (r < 0.05) return { status: 404, body: 'not found', outcome: 'http_error' }
    if (r < 0.08) return { status: 200, body: '{"attributes": [nope', outcome: 'invalid_json' }
    if (r < 0.1)
      return {
        status: 200,
        body: JSON.stringify([{ trait_type: 'Hat', value: 'Array' }]),
        outcome: 'invalid_json',
      }
    return serve(document())
  }

  return { served }
}

// ---------------------------------------------------------------------------
// The expected answers, computed from the tokens.
// ---------------------------------------------------------------------------

const counted = (tokens: Token[]) => tokens.filter((t) => !t.burned && t.served.outcome === 'ok')
const valueKey = (v: Value) => JSON.stringify(v)
const byTokenId = (a: bigint, b: bigint) => (a < b ? -1 : a > b ? 1 : 0)

function expectedTraits(tokens: Token[]) {
  const types = new Map<string, { tokens: number; values: Map<string, number> }>()
  for (const token of counted(tokens)) {
    const typesSeen = new Set<string>()
    const pairsSeen = new Set<string>()
    for (const a of token.attributes ?? []) {
      const type = types.get(a.trait_type) ?? { tokens: 0, values: new Map<string, number>() }
      types.set(a.trait_type, type)
      if (!typesSeen.has(a.trait_type)) type.tokens++
      typesSeen.add(a.trait_type)
      const pair = `${a.trait_type}\u0000${valueKey(a.value)}`
      if (!pairsSeen.has(pair))
        type.values.set(valueKey(a.value), (type.values.get(valueKey(a.value)) ?? 0) + 1)
      pairsSeen.add(pair)
    }
  }
  return { tokens: counted(tokens).length, types }
}

/** A `Type:Value` parameter's value matches the string it is, and the number or boolean it spells. */
function valueMatches(value: Value, text: string): boolean {
  if (typeof value === 'string') return value === text
  if (typeof value === 'boolean') return String(value) === text
  return /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/.test(text) && Number(text) === value
}

function expectedFiltered(tokens: Token[], params: string[], includeBurned: boolean): string[] {
  const byType = new Map<string, string[]>()
  for (const p of params) {
    const colon = p.indexOf(':')
    byType.set(p.slice(0, colon), [...(byType.get(p.slice(0, colon)) ?? []), p.slice(colon + 1)])
  }
  return tokens
    .filter((t) => (includeBurned || !t.burned) && t.served.outcome === 'ok')
    .filter((t) =>
      [...byType].every(([type, texts]) =>
        (t.attributes ?? []).some(
          (a) => a.trait_type === type && texts.some((x) => valueMatches(a.value, x)),
        ),
      ),
    )
    .map((t) => t.tokenId)
    .sort(byTokenId)
    .map(String)
}

interface Ranked {
  tokenId: string
  /** Unrounded. */
  exact: number
  score: number
  rank: number
}

/** OpenRarity information content without normalization (docs/api.md, "Rarity"). */
function expectedRarity(tokens: Token[]): Ranked[] {
  const live = counted(tokens)
  const n = live.length
  const { types } = expectedTraits(tokens)
  const scored = live.map((t) => {
    let exact = 0
    for (const [type, stats] of types) {
      const own = (t.attributes ?? []).filter((a) => a.trait_type === type)
      // A token with several values of a type counts its rarest; one without it shares "missing".
      const share = own.length
        ? Math.min(...own.map((a) => stats.values.get(valueKey(a.value))!))
        : n - stats.tokens
      exact += -Math.log2(share / n)
    }
    return { id: t.tokenId, exact, score: Math.round(exact * 1e6) / 1e6 }
  })
  scored.sort((a, b) => b.score - a.score || byTokenId(a.id, b.id))
  return scored.map((s) => ({
    tokenId: String(s.id),
    exact: s.exact,
    score: s.score,
    rank: 1 + scored.filter((o) => o.score > s.score).length,
  }))
}

// ---------------------------------------------------------------------------
// The chain, the host, the indexer and the API.
// ---------------------------------------------------------------------------

interface Collection {
  label: string
  address: Address
  tokens: Token[]
}

let chain: TestChain
let db: TestDatabase
let host: TestServer
let indexer: RunningIndexer | undefined
let api: ApiServer
const collections: Collection[] = []
/** Host path -> what it serves. */
const routes = new Map<string, Served>()

async function mint(label: string, firstId: bigint, count: number, rand: () => number, overCaps = false) {
  const { served } = documents(rand, overCaps)
  const [alice] = chain.accounts
  const { address } = await chain.deploy('TestNFT', [`Traits ${label}`, label, `${host.origin}/${label}/`])
  for (let done = 0; done < count; done += 100) {
    const quantity = BigInt(Math.min(100, count - done))
    await chain.call(address, 'TestNFT', 'mintBatch', [alice, firstId + BigInt(done), quantity])
  }
  const tokens: Token[] = []
  for (let i = 0; i < count; i++) {
    const tokenId = firstId + BigInt(i)
    const answer = served(i)
    routes.set(`/${label}/${tokenId}`, answer)
    tokens.push({
      tokenId,
      served: answer,
      burned: false,
      attributes: answer.doc ? expectedAttributes(answer.doc) : null,
    })
  }
  collections.push({ label, address, tokens })
}

beforeAll(async () => {
  host = await startServer({
    '/*': (req, res) => {
      const answer = routes.get(req.url!.split('?')[0]!)
      if (!answer) return void res.writeHead(404).end('not found')
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body)
    },
  })
  ;[chain, db] = await Promise.all([startTestChain(), createTestDatabase()])
  const rand = mulberry32(SEED)
  // Token ids of the second collection cross 2^64: keyset pages compare them as numbers.
  await mint('TRA', 1n, 200, rand)
  await mint('TRB', 2n ** 64n - 70n, 140, rand, true)
  const config = testConfig({
    DATABASE_URL: db.url,
    RPC_URL: chain.anvil.rpcUrl,
    FETCH_ALLOW_HOSTS: `127.0.0.1:${host.port}`,
    METADATA_HOST_CONCURRENCY: '16',
  })
  indexer = startIndexer(config, db.pool, { metadata: { timeoutMs: 5_000, maxAttempts: 2, retryBaseMs: 50 } })
  await waitForIndexed(db.pool, chain.clients)
  await settled()
  // Burned after their documents were read: still `ok`, listed only with include_burned=true.
  for (const c of collections)
    for (const t of c.tokens)
      if (rand() < 0.08) {
        await chain.call(c.address, 'TestNFT', 'burn', [t.tokenId])
        t.burned = true
      }
  await waitForIndexed(db.pool, chain.clients)
  await settled()
  api = await startApiServer(db.url)
}, 120_000)

/** Every minted token is in the database and its metadata settled (no fetch due, none pending). */
async function settled() {
  const minted = collections.reduce((n, c) => n + c.tokens.length, 0)
  await waitFor(
    async () => {
      const { rows } = await db.pool.query(
        `SELECT count(*)::int AS tokens,
                count(*) FILTER (WHERE metadata_status = 'pending' OR metadata_next_attempt_at IS NOT NULL)::int AS open
           FROM tokens WHERE collection_address = ANY($1)`,
        [collections.map((c) => c.address)],
      )
      return rows[0].tokens === minted && rows[0].open === 0
    },
    60_000,
    'every token fetched',
  )
}

afterAll(async () => {
  await api?.close()
  await indexer?.stop()
  await chain?.stop()
  await db?.drop()
  await host?.close()
})

interface NftItem {
  token_id: string
  metadata_status: string
  attributes?: Attribute[]
  rarity_score?: number
  rarity_rank?: number
}
interface Page {
  data: NftItem[]
  pagination: { has_more: boolean; next_page_params?: Record<string, string | number> }
}

/** Follows next_page_params to the end: every item, in the order served. */
async function walk(path: string, limit: number): Promise<NftItem[]> {
  const items: NftItem[] = []
  let query = `${path}&limit=${limit}`
  for (let pages = 0; pages < 2_000; pages++) {
    const { body } = await api.json<Page>(query)
    expect(body.data.length, seedNote(query)).toBeLessThanOrEqual(limit)
    items.push(...body.data)
    if (!body.pagination.has_more) return items
    const next = new URLSearchParams(
      Object.entries(body.pagination.next_page_params!).map(([k, v]) => [k, String(v)]),
    )
    query = `${path}&limit=${limit}&${next}`
  }
  throw new Error(`walk of ${path} did not end`)
}

const traitQuery = (params: string[]) => params.map((p) => `trait=${encodeURIComponent(p)}`).join('&')

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

describe(`traits end to end (TRAITS_SEED=${SEED})`, () => {
  it('serves documents of every shape and outcome', () => {
    const all = collections.flatMap((c) => c.tokens)
    const shapes = new Set(
      all.map((t) => (t.served.doc ? (attributesSource(t.served.doc)?.shape ?? 'none') : '')),
    )
    expect([...shapes].sort(), seedNote('shapes')).toEqual(
      expect.arrayContaining([
        'attributes array',
        'attributes object',
        'traits array',
        'traits object',
        'properties object',
        'none',
      ]),
    )
    const outcomes = new Set(all.map((t) => t.served.outcome))
    expect([...outcomes].sort(), seedNote('outcomes')).toEqual(['http_error', 'invalid_json', 'ok'])
    const burned = all.filter((t) => t.burned && t.served.outcome === 'ok')
    expect(burned.length, seedNote('burned tokens with a document')).toBeGreaterThan(0)
  })

  it('records the outcome each document calls for, and serves the attributes read from it', async () => {
    for (const c of collections) {
      const items = await walk(
        `/v1/collections/${c.address}/nfts?include_metadata=true&include_burned=true`,
        100,
      )
      const expected = [...c.tokens].sort((a, b) => byTokenId(a.tokenId, b.tokenId))
      expect(
        items.map((t) => t.token_id),
        seedNote(c.label),
      ).toEqual(expected.map((t) => String(t.tokenId)))
      items.forEach((item, i) => {
        const token = expected[i]!
        const label = seedNote(`${c.label} #${token.tokenId} ${token.served.body.slice(0, 300)}`)
        expect(item.metadata_status, label).toBe(token.served.outcome)
        if (token.served.outcome === 'ok') expect(item.attributes ?? null, label).toEqual(token.attributes)
      })
    }
  })

  it('/traits counts every type and value of each collection as computed from the documents', async () => {
    const bytewise = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b))
    for (const c of collections) {
      const expected = expectedTraits(c.tokens)
      // At most 100 types, most tokens first, ties by name bytewise; at most 1,000 values a type, most
      // tokens first, ties by the value's JSON text bytewise; what is left out is counted.
      const types = [...expected.types].sort((a, b) => b[1].tokens - a[1].tokens || bytewise(a[0], b[0]))
      const want = {
        contract_address: c.address,
        token_count: expected.tokens,
        trait_types_omitted: Math.max(0, types.length - 100),
        trait_types: types.slice(0, 100).map(([trait_type, stats]) => {
          const values = [...stats.values].sort((a, b) => b[1] - a[1] || bytewise(a[0], b[0]))
          return {
            trait_type,
            token_count: stats.tokens,
            missing_count: expected.tokens - stats.tokens,
            value_count: values.length,
            values: values
              .slice(0, 1_000)
              .map(([k, n]) => ({ value: JSON.parse(k) as Value, token_count: n })),
            values_omitted: Math.max(0, values.length - 1_000),
          }
        }),
      }
      // The answer is stored with the ranking (docs/database.md, "Stored rarity"): wait (30 s at most) until it
      // has caught up with the last metadata and burn, then compare in detail.
      const matches = (data: TraitsBody['data']) => {
        try {
          expect(data).toMatchObject(want)
          return data.trait_types.length === want.trait_types.length
        } catch {
          return false
        }
      }
      let body = (await api.json<TraitsBody>(`/v1/collections/${c.address}/traits`)).body
      await waitFor(async () => {
        body = (await api.json<TraitsBody>(`/v1/collections/${c.address}/traits`)).body
        return matches(body.data)
      }, 30_000).catch(() => undefined)
      expect(body.data, seedNote(c.label)).toMatchObject(want)
      expect(body.data.trait_types, seedNote(c.label)).toHaveLength(want.trait_types.length)
      if (c.label === 'TRB') {
        expect(want.trait_types_omitted, seedNote('types past the cap')).toBeGreaterThan(0)
        expect(
          want.trait_types.some((t) => t.values_omitted > 0),
          seedNote('values past the cap'),
        ).toBe(true)
      }
    }
  })

  it('random trait filters walk exactly the matching tokens, page after page', async () => {
    const rand = mulberry32(SEED + 1)
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!
    for (const c of collections) {
      const { types } = expectedTraits(c.tokens)
      // Types as stored (a colon in one cannot be named) and one no token has.
      const names = [...types.keys(), 'Nope']
      const common = [...types].sort((a, b) => b[1].tokens - a[1].tokens).map(([type]) => type)
      let nonEmpty = 0
      for (let round = 0; round < 30; round++) {
        const params: string[] = []
        const typeCount = 1 + Math.floor(rand() * 3)
        for (let i = 0; i < typeCount; i++) {
          const type = rand() < 0.6 ? pick(common.slice(0, 10)) : pick(names)
          const values = [...(types.get(type)?.values.keys() ?? ['"Blue"'])].map(
            (k) => JSON.parse(k) as Value,
          )
          // One or more values of the type (OR), some spelled as a look-alike of another JSON type.
          for (let v = 0; v < 1 + Math.floor(rand() * 3); v++) {
            const text =
              rand() < 0.8
                ? String(pick(values))
                : pick(['1.0', '01', '1e0', 'TRUE', 'blue', '2.50', '-3', ''])
            params.push(`${type}:${text}`)
          }
        }
        const includeBurned = round % 3 === 2
        const path = `/v1/collections/${c.address}/nfts?${traitQuery(params)}${includeBurned ? '&include_burned=true' : ''}`
        const limit = 1 + Math.floor(rand() * 25)
        // Split at the first colon, a type that holds one moves the rest into the value: past 1,024 characters, 400.
        if (params.some((p) => [...p.slice(p.indexOf(':') + 1)].length > 1_024)) {
          const res = await api.request(`${path}&limit=${limit}`)
          expect(res.status, seedNote(path)).toBe(400)
          expect(((await res.json()) as { error: { code: string } }).error.code).toBe('INVALID_ARGUMENT')
          continue
        }
        const expected = expectedFiltered(c.tokens, params, includeBurned)
        if (expected.length > 0) nonEmpty++
        const served = await walk(path, limit)
        expect(
          served.map((t) => t.token_id),
          seedNote(`${c.label} ${params.join(' & ')}`),
        ).toEqual(expected)
      }
      expect(nonEmpty, seedNote(`${c.label}: the random filters matched some tokens`)).toBeGreaterThan(5)
    }
  })

  it('sort=rarity ranks every counted token by information content, as computed from the documents', async () => {
    for (const c of collections) {
      const expected = expectedRarity(c.tokens)
      const path = `/v1/collections/${c.address}/nfts?sort=rarity`
      const byId = new Map(expected.map((t) => [t.tokenId, t]))
      // Ranks may be stored after metadata and ownership changes rather than computed on read: wait (30 s at
      // most) until they cover exactly the counted tokens with their current scores, then compare in detail.
      const wanted = expected.map((t) => t.tokenId).sort()
      let served: NftItem[] = []
      await waitFor(async () => {
        served = await walk(path, 41)
        return (
          JSON.stringify(served.map((t) => t.token_id).sort()) === JSON.stringify(wanted) &&
          served.every((t) => Math.abs(t.rarity_score! - byId.get(t.token_id)!.score) < 1e-5)
        )
      }, 30_000).catch(() => undefined)
      // Tokens whose score lies this close to a rounding boundary may round either way.
      const boundary = new Set(
        expected.filter((t) => Math.abs(((t.exact * 1e6) % 1) - 0.5) < 1e-5).map((t) => t.tokenId),
      )
      expect(served.map((t) => t.token_id).sort(), seedNote(`${c.label}: the ranked tokens`)).toEqual(wanted)
      served.forEach((item, i) => {
        const want = byId.get(item.token_id)!
        const label = seedNote(`${c.label} #${item.token_id}`)
        expect(item.rarity_score, label).toBeCloseTo(want.score, 5)
        // Internally consistent: rank = 1 + tokens with a higher score; order by score, then token order.
        expect(item.rarity_rank, label).toBe(
          1 + served.filter((o) => o.rarity_score! > item.rarity_score!).length,
        )
        if (i > 0) {
          const before = served[i - 1]!
          expect(
            before.rarity_score! > item.rarity_score! ||
              (before.rarity_score === item.rarity_score && BigInt(before.token_id) < BigInt(item.token_id)),
            label,
          ).toBe(true)
        }
      })
      if (boundary.size === 0) {
        expect(
          served.map((t) => t.token_id),
          seedNote(c.label),
        ).toEqual(expected.map((t) => t.tokenId))
        expect(
          served.map((t) => t.rarity_rank),
          seedNote(c.label),
        ).toEqual(expected.map((t) => t.rank))
      }

      // Under trait filters: the filtered tokens, in the collection's ranking, with its ranks.
      const { types } = expectedTraits(c.tokens)
      const [first, second] = [...types.keys()]
      const params = [first!, second!].flatMap((type) =>
        [...types.get(type)!.values.keys()].slice(0, 2).map((k) => `${type}:${String(JSON.parse(k))}`),
      )
      const allowed = new Set(expectedFiltered(c.tokens, params, false))
      const filtered = await walk(`${path}&${traitQuery(params)}`, 3)
      expect(
        filtered.map((t) => t.token_id),
        seedNote(`${c.label} ${params.join(' & ')}`),
      ).toEqual(served.filter((t) => allowed.has(t.token_id)).map((t) => t.token_id))
      expect(filtered.map((t) => t.rarity_rank)).toEqual(
        served.filter((t) => allowed.has(t.token_id)).map((t) => t.rarity_rank),
      )
    }
  })
})
