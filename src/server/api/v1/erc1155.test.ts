/**
 * ERC-1155 on /v1 (docs/api.md, "ERC-1155"): the contract tests' ERC-721
 * dataset, then ERC-1155 rows written directly as the indexer stores them (a
 * collection of standard ERC1155, tokens with total_supply/holder_count and
 * the zero address as current_owner, token_balances, transfers with an
 * amount). Without `standard` every response stays byte for byte what it was
 * before those rows existed; with it, the ERC-1155 records and the extension
 * fields are served; the new holders endpoint pages exactly.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createNftDataClient } from '@/client/index'
import { type ApiServer, startApiServer } from '@/test/api-client'
import { OpenApiContract, type OpenApiDoc } from '@/test/api-contract'
import { buildDataset, c, people } from '@/test/api-dataset'
import { addr, tempMediaDir, ZERO } from '@/test/api-fixtures'
import { createTestDatabase, type TestDatabase } from '@/test/db'

let db: TestDatabase
let api: ApiServer
let contract: OpenApiContract

// biome-ignore lint/suspicious/noExplicitAny: response bodies are arbitrary JSON, checked field by field
type Json = any

/** The ERC-1155 collection written below, and its holders. */
const multi = addr('multi-items')
const holders = {
  dave: addr('dave'),
  erin: addr('erin'),
  frank: addr('frank'),
  grace: addr('grace'),
  heidi: addr('heidi'),
  ivan: addr('ivan'),
}
/** Token 1: ten holders' balances with ties (alice, bob and carol are the ERC-721 dataset's people). */
const token1Balances: Array<[string, bigint]> = [
  [people.alice, 4n],
  [people.bob, 3n],
  [people.carol, 3n],
  [holders.dave, 3n],
  [holders.erin, 2n],
  [holders.frank, 2n],
  [holders.grace, 1n],
  [holders.heidi, 1n],
  [holders.ivan, 1n],
]
const token1Supply = token1Balances.reduce((sum, [, b]) => sum + b, 0n)

/** Default requests whose answers must not change when ERC-1155 rows arrive. */
const unchanged = (): string[] => [
  '/v1/collections',
  '/v1/collections?limit=2',
  '/v1/collections?search=Items',
  '/v1/collections?search=It',
  `/v1/collections?search=${multi}`,
  `/v1/owners/${people.alice}/nfts`,
  `/v1/owners/${people.bob}/nfts?limit=2`,
  `/v1/owners/${ZERO}/nfts`,
  '/v1/activity',
  '/v1/activity?limit=3',
  '/v1/activity?event_type=mint',
  '/v1/activity?event_type=transfer',
  `/v1/activity?collection=${c.pioneers}`,
  `/v1/collections/${c.pioneers}`,
  `/v1/collections/${c.pioneers}/nfts`,
  `/v1/collections/${c.pioneers}/transfers`,
  `/v1/nfts/${c.pioneers}/2`,
  `/v1/nfts/${c.pioneers}/2/transfers`,
]

async function call(path: string): Promise<{ status: number; body: Json; text: string }> {
  const res = await api.request(path)
  const text = await res.text()
  const body = JSON.parse(text)
  await contract.expectResponse('GET', path, res.status, body)
  return { status: res.status, body, text }
}

async function ok(path: string): Promise<Json> {
  const reply = await call(path)
  expect(reply.status, `${path}: ${reply.text}`).toBe(200)
  return reply.body
}

async function expectError(path: string, status: number, code: string): Promise<string> {
  const reply = await call(path)
  expect(reply.status, `${path}: ${reply.text}`).toBe(status)
  expect(reply.body.error.code).toBe(code)
  return reply.body.error.message as string
}

/** Every item of a list, following next_page_params as a client does. */
async function walk(path: string): Promise<{ items: Json[]; pages: number }> {
  const items: Json[] = []
  let query = ''
  let pages = 0
  for (;;) {
    const body = await ok(`${path}${query ? `${path.includes('?') ? '&' : '?'}${query}` : ''}`)
    pages++
    items.push(...body.data)
    if (!body.pagination.has_more) return { items, pages }
    query = new URLSearchParams(
      Object.entries(body.pagination.next_page_params).map(([k, v]) => [k, String(v)]),
    ).toString()
  }
}

const before = new Map<string, string>()

beforeAll(async () => {
  db = await createTestDatabase()
  await buildDataset(db.pool, tempMediaDir())
  api = await startApiServer(db.url)
  contract = await OpenApiContract.load(
    (await (await fetch(`${api.base}/openapi.json`)).json()) as OpenApiDoc,
  )
  for (const path of unchanged()) before.set(path, (await call(path)).text)
  await writeErc1155(db)
  api.refresh()
}, 120_000)

afterAll(async () => {
  await api?.close()
  await db?.drop()
})

/** As the indexer stores an ERC-1155 contract (docs/database.md, "ERC-1155"). */
async function writeErc1155(db: TestDatabase) {
  const q = (sql: string, params: unknown[] = []) => db.pool.query(sql, params)
  await q(
    `INSERT INTO collections (address, name, symbol, standard, listed, metadata_status, total_supply,
                              unique_holders, total_transfers, deploy_block, first_seen_block)
     VALUES ($1, 'Multi Items', 'ITEMS', 'ERC1155', true, 'ok', 2, $2, 9, 100, 101)`,
    [multi, token1Balances.length],
  )
  // Token 1: spread over nine holders; 2: all of it with alice; 3: burned out (supply 0).
  await q(
    `INSERT INTO tokens (collection_address, token_id, current_owner, is_burned, transfer_count, total_supply,
                         holder_count, metadata_status, metadata_uri)
     VALUES ($1, 1, $2, false, 11, $3, $4, 'ok', 'ipfs://multi/1'),
            ($1, 2, $2, false, 1, 5, 1, 'ok', 'ipfs://multi/2'),
            ($1, 3, $2, true, 2, 0, 0, 'ok', 'ipfs://multi/3')`,
    [multi, ZERO, token1Supply.toString(), token1Balances.length],
  )
  for (const [owner, balance] of token1Balances)
    await q('INSERT INTO token_balances VALUES ($1, 1, $2, $3)', [multi, owner, balance.toString()])
  await q('INSERT INTO token_balances VALUES ($1, 2, $2, 5)', [multi, people.alice])
  // A negative balance: history before the indexed window; held by nobody.
  await q('INSERT INTO token_balances VALUES ($1, 2, $2, -2)', [multi, people.carol])
  await q(
    `INSERT INTO token_documents (token_id, source_uri, fetched_at, document)
     SELECT id, 'ipfs://multi/1', now(), '{"name": "Item 1"}' FROM tokens WHERE collection_address = $1 AND token_id = 1`,
    [multi],
  )
  // Newer than every ERC-721 row: a feed that did not leave them out would show them first.
  const rows: Array<[string, number, string, string, number, number, bigint]> = [
    // [type, token, from, to, log, batch, amount]
    ['mint', 1, ZERO, people.alice, 0, 0, 10n],
    ['mint', 2, ZERO, people.alice, 1, 0, 5n],
    ['transfer', 1, people.alice, people.bob, 2, 0, 3n],
    ['mint', 3, ZERO, people.carol, 3, 0, 2n],
    ['burn', 3, people.carol, ZERO, 4, 0, 2n],
    ['transfer', 1, people.alice, people.carol, 5, 0, 3n],
    ['transfer', 1, people.alice, holders.dave, 6, 0, 1n],
    ['transfer', 1, people.alice, holders.dave, 6, 1, 2n],
  ]
  for (const [i, [type, token, from, to, log, batch, amount]] of rows.entries())
    await q(
      `INSERT INTO transfers (collection_address, token_id, from_address, to_address, event_type, block_number,
                              block_timestamp, transaction_hash, log_index, batch_index, amount)
       VALUES ($1, $2, $3, $4, $5, 104, '2030-01-01T00:00:00Z'::timestamptz + $6 * interval '1 second', $7, $8, $9, $10)`,
      [
        multi,
        token,
        from,
        to,
        type,
        i,
        `0x${'ab'.repeat(31)}${i.toString(16).padStart(2, '0')}`,
        log,
        batch,
        amount,
      ],
    )
}

describe('without `standard`', () => {
  it('answers byte for byte what it answered before the ERC-1155 rows existed', async () => {
    expect(before.size).toBe(unchanged().length)
    for (const path of unchanged()) expect((await call(path)).text, path).toBe(before.get(path))
    // They were there to be left out: the ERC-1155 collection is the newest, its transfers the newest.
    expect((await ok('/v1/collections?standard=all&limit=1')).data[0].contract_address).toBe(multi)
    expect((await ok('/v1/activity?standard=all&limit=1')).data[0].collection_address).toBe(multi)
  })

  it('gives an empty activity page for an ERC-1155 collection', async () => {
    expect((await ok(`/v1/activity?collection=${multi}`)).data).toEqual([])
  })

  it('answers 404 on every collection- and token-scoped endpoint of an ERC-1155 collection, naming the parameter', async () => {
    for (const path of [
      `/v1/collections/${multi}`,
      `/v1/collections/${multi}/traits`,
      `/v1/collections/${multi}/nfts`,
      `/v1/collections/${multi}/nfts?sort=rarity`,
      `/v1/collections/${multi}/transfers`,
      `/v1/nfts/${multi}/1`,
      `/v1/nfts/${multi}/1/metadata`,
      `/v1/nfts/${multi}/1/transfers`,
    ]) {
      const message = await expectError(path, 404, 'NOT_FOUND')
      expect(message, path).toMatch(
        /ERC-1155: it is served with the query parameter standard=ERC1155 or standard=all/,
      )
      // standard=ERC721 serves the same records as no parameter.
      expect(
        await expectError(`${path}${path.includes('?') ? '&' : '?'}standard=ERC721`, 404, 'NOT_FOUND'),
      ).toBe(message)
    }
  })

  it('leaves no ERC-1155 field on ERC-721 records', async () => {
    const nft = (await ok(`/v1/nfts/${c.pioneers}/2`)).data
    for (const field of ['contract_type', 'total_supply', 'holder_count', 'balance'])
      expect(nft, field).not.toHaveProperty(field)
    expect((await ok('/v1/activity')).data[0]).not.toHaveProperty('amount')
  })
})

describe('with `standard`', () => {
  it('lists collections of the standards named', async () => {
    const only = (await ok('/v1/collections?standard=ERC1155')).data
    expect(only).toEqual([
      expect.objectContaining({
        contract_address: multi,
        contract_type: 'ERC1155',
        total_supply: '2',
        unique_holders: String(token1Balances.length),
        total_transfers: '9',
      }),
    ])
    const all = (await ok('/v1/collections?standard=all&limit=100')).data
    const spec = (await ok('/v1/collections?limit=100')).data
    expect(all).toEqual([only[0], ...spec])
    expect((await ok('/v1/collections?standard=ERC721&limit=100')).data).toEqual(spec)
    expect((await ok('/v1/collections?standard=ERC1155&search=Items')).data).toEqual(only)
    expect((await ok('/v1/collections?standard=ERC1155&search=It')).data).toEqual(only)
    expect((await ok(`/v1/collections?standard=all&search=${multi}`)).data).toEqual(only)
    expect((await ok('/v1/collections?standard=ERC1155&search=Pioneers')).data).toEqual([])
  })

  it('serves the ERC-1155 collection and its tokens, and 404s an ERC-721 one for standard=ERC1155', async () => {
    expect((await ok(`/v1/collections/${multi}?standard=ERC1155`)).data.contract_type).toBe('ERC1155')
    expect((await ok(`/v1/collections/${multi}?standard=all`)).data.contract_type).toBe('ERC1155')
    expect((await ok(`/v1/collections/${multi}/traits?standard=all`)).data.contract_address).toBe(multi)
    expect((await ok(`/v1/nfts/${multi}/1/metadata?standard=ERC1155`)).data.document).toEqual({
      name: 'Item 1',
    })
    const message = await expectError(`/v1/collections/${c.pioneers}?standard=ERC1155`, 404, 'NOT_FOUND')
    expect(message).toMatch(/is ERC-721: standard=ERC1155 leaves it out/)
    expect((await ok(`/v1/collections/${c.pioneers}?standard=all`)).data.contract_type).toBe('ERC721')
  })

  it("gives tokens their standard, supply and holder count; an ERC-1155 token's owner is its only holder", async () => {
    const spread = (await ok(`/v1/nfts/${multi}/1?standard=ERC1155`)).data
    expect(spread).toMatchObject({
      contract_type: 'ERC1155',
      current_owner: null,
      total_supply: token1Supply.toString(),
      holder_count: token1Balances.length,
      is_burned: false,
    })
    expect(spread).not.toHaveProperty('balance')
    expect((await ok(`/v1/nfts/${multi}/2?standard=all`)).data).toMatchObject({
      current_owner: people.alice,
      total_supply: '5',
      holder_count: 1,
    })
    expect((await ok(`/v1/nfts/${multi}/3?standard=all`)).data).toMatchObject({
      current_owner: null,
      is_burned: true,
      total_supply: '0',
      holder_count: 0,
    })
    // ERC-721 tokens carry the same fields: one, or none once burned.
    const live = (await ok(`/v1/nfts/${c.pioneers}/2?standard=all`)).data
    const spec = (await ok(`/v1/nfts/${c.pioneers}/2`)).data
    expect(live).toEqual({ ...spec, contract_type: 'ERC721', total_supply: '1', holder_count: 1 })
    expect((await ok(`/v1/nfts/${c.pioneers}/4?standard=ERC721`)).data).toMatchObject({
      is_burned: true,
      current_owner: ZERO,
      total_supply: '0',
      holder_count: 0,
    })
    const list = (await ok(`/v1/collections/${multi}/nfts?standard=ERC1155`)).data
    expect(list.map((n: Json) => n.token_id)).toEqual(['1', '2'])
    const burned = (await ok(`/v1/collections/${multi}/nfts?standard=ERC1155&include_burned=true`)).data
    expect(burned.map((n: Json) => [n.token_id, n.total_supply])).toEqual([
      ['1', token1Supply.toString()],
      ['2', '5'],
      ['3', '0'],
    ])
  })

  it('serves a negative supply as a signed decimal: burns of units minted before the indexed window', async () => {
    // As the indexer leaves such a token: minted to dave and frank before START_BLOCK; after it,
    // dave burned 3 and frank sent 2 to erin. Erin is its one holder; dave's -3 is the supply.
    await db.pool.query(
      `INSERT INTO tokens (collection_address, token_id, current_owner, is_burned, transfer_count, total_supply,
                           holder_count, metadata_status)
       VALUES ($1, 4, $2, true, 2, -3, 1, 'ok')`,
      [multi, ZERO],
    )
    for (const [owner, balance] of [
      [holders.dave, -3],
      [holders.erin, 2],
      [holders.frank, -2],
    ] as const)
      await db.pool.query('INSERT INTO token_balances VALUES ($1, 4, $2, $3)', [multi, owner, balance])
    api.refresh()
    try {
      // Not dave, whose negative balance equals the supply: nobody holds all of it.
      expect((await ok(`/v1/nfts/${multi}/4?standard=ERC1155`)).data).toMatchObject({
        current_owner: null,
        is_burned: true,
        total_supply: '-3',
        holder_count: 1,
      })
      const burned = (await ok(`/v1/collections/${multi}/nfts?standard=all&include_burned=true`)).data
      expect(burned.map((n: Json) => [n.token_id, n.total_supply])).toContainEqual(['4', '-3'])
    } finally {
      await db.pool.query('DELETE FROM token_balances WHERE collection_address = $1 AND token_id = 4', [
        multi,
      ])
      await db.pool.query('DELETE FROM tokens WHERE collection_address = $1 AND token_id = 4', [multi])
      api.refresh()
    }
  })

  it('lists transfers and activity with their amount', async () => {
    const feed = (await ok('/v1/activity?standard=ERC1155&limit=100')).data
    expect(feed.map((t: Json) => [t.event_type, t.token_id, t.amount, t.batch_index])).toEqual([
      ['transfer', '1', '2', 1],
      ['transfer', '1', '1', 0],
      ['transfer', '1', '3', 0],
      ['burn', '3', '2', 0],
      ['mint', '3', '2', 0],
      ['transfer', '1', '3', 0],
      ['mint', '2', '5', 0],
      ['mint', '1', '10', 0],
    ])
    expect(feed.every((t: Json) => t.collection_name === 'Multi Items')).toBe(true)
    const mints = (await ok('/v1/activity?standard=ERC1155&event_type=mint')).data
    expect(mints.map((t: Json) => t.amount)).toEqual(['2', '5', '10'])
    // all: both standards in one order, ERC-721 rows with amount '1'; paged exactly.
    const spec = (await walk('/v1/activity?limit=7')).items
    const { items: all, pages } = await walk('/v1/activity?standard=all&limit=3')
    expect(pages).toBeGreaterThan(3)
    expect(all).toEqual([...feed, ...spec.map((t: Json) => ({ ...t, amount: '1' }))])
    expect((await ok(`/v1/activity?standard=ERC721&limit=100`)).data).toEqual(
      spec.map((t: Json) => ({ ...t, amount: '1' })),
    )
    const scoped = (await ok(`/v1/collections/${multi}/transfers?standard=ERC1155&limit=100`)).data
    expect(scoped).toEqual(feed.map(({ collection_name: _, ...t }: Json) => t))
    const token = (await ok(`/v1/nfts/${multi}/3/transfers?standard=all`)).data
    expect(token.map((t: Json) => [t.event_type, t.amount])).toEqual([
      ['burn', '2'],
      ['mint', '2'],
    ])
    expect((await ok(`/v1/activity?collection=${multi}&standard=ERC1155&limit=100`)).data).toEqual(feed)
  })

  it("lists an owner's holdings of both standards in one order, with balances, paged exactly", async () => {
    const spec = (await ok(`/v1/owners/${people.alice}/nfts?limit=100`)).data
    const erc1155 = (await ok(`/v1/owners/${people.alice}/nfts?standard=ERC1155`)).data
    expect(erc1155.map((n: Json) => [n.collection_address, n.token_id, n.balance, n.current_owner])).toEqual([
      [multi, '1', '4', null],
      [multi, '2', '5', people.alice],
    ])
    const { items: all, pages } = await walk(`/v1/owners/${people.alice}/nfts?standard=all&limit=2`)
    expect(pages).toBeGreaterThan(2)
    const key = (n: Json) => [n.collection_address, BigInt(n.token_id)] as const
    const sorted = [...all].sort((a, b) => {
      const [ca, ta] = key(a)
      const [cb, tb] = key(b)
      return ca < cb ? -1 : ca > cb ? 1 : ta < tb ? -1 : ta > tb ? 1 : 0
    })
    expect(all).toEqual(sorted)
    expect(all.filter((n: Json) => n.contract_type === 'ERC1155')).toEqual(erc1155)
    expect(all.filter((n: Json) => n.contract_type === 'ERC721')).toEqual(
      spec.map((n: Json) => ({
        ...n,
        contract_type: 'ERC721',
        total_supply: '1',
        holder_count: 1,
        balance: '1',
      })),
    )
    const { items: paged, pages: erc1155Pages } = await walk(
      `/v1/owners/${people.alice}/nfts?standard=ERC1155&limit=1`,
    )
    expect(paged).toEqual(erc1155)
    expect(erc1155Pages).toBe(2)
    expect((await walk(`/v1/owners/${people.alice}/nfts?standard=ERC721&limit=3`)).items).toEqual(
      all.filter((n: Json) => n.contract_type === 'ERC721'),
    )
    // carol's balance of token 2 is negative (before the window): not held.
    const carol = (await ok(`/v1/owners/${people.carol}/nfts?standard=ERC1155`)).data
    expect(carol.map((n: Json) => [n.token_id, n.balance])).toEqual([['1', '3']])
    // The zero address's list: burned ERC-721 tokens only, ERC-1155 tokens are never its holdings.
    const zero = (await ok(`/v1/owners/${ZERO}/nfts?standard=all`)).data
    expect(zero.length).toBeGreaterThan(0)
    expect(zero.every((n: Json) => n.contract_type === 'ERC721' && n.is_burned)).toBe(true)
  })
})

describe('GET /v1/nfts/{address}/{tokenId}/owners', () => {
  const expected = [...token1Balances]
    .sort(([oa, ba], [ob, bb]) => (ba === bb ? (oa < ob ? -1 : 1) : ba > bb ? -1 : 1))
    .map(([owner, balance]) => ({ owner, balance: balance.toString() }))

  it('lists the holders by balance descending, then owner, paging exactly across ties', async () => {
    expect((await ok(`/v1/nfts/${multi}/1/owners?limit=100`)).data).toEqual(expected)
    for (const limit of [1, 2, 4]) {
      const { items, pages } = await walk(`/v1/nfts/${multi}/1/owners?limit=${limit}`)
      expect(items, `limit ${limit}`).toEqual(expected)
      expect(pages).toBe(Math.ceil(expected.length / limit))
    }
    const first = await ok(`/v1/nfts/${multi}/1/owners?limit=2`)
    expect(first.pagination).toEqual({
      limit: 2,
      has_more: true,
      next_page_params: { after_balance: expected[1]!.balance, after_owner: expected[1]!.owner },
    })
    expect(first.coverage).toEqual((await ok(`/v1/nfts/${multi}/1/transfers?standard=all`)).coverage)
  })

  it('serves both standards without the parameter: positive balances; an ERC-721 token its owner', async () => {
    expect((await ok(`/v1/nfts/${multi}/2/owners`)).data).toEqual([{ owner: people.alice, balance: '5' }])
    expect((await ok(`/v1/nfts/${multi}/3/owners`)).data).toEqual([])
    const owner = (await ok(`/v1/nfts/${c.pioneers}/2`)).data.current_owner
    expect((await ok(`/v1/nfts/${c.pioneers}/2/owners`)).data).toEqual([{ owner, balance: '1' }])
    expect((await ok(`/v1/nfts/${c.pioneers}/4/owners`)).data).toEqual([])
    // After the one holder's own cursor: nothing more.
    expect((await ok(`/v1/nfts/${c.pioneers}/2/owners?after_balance=1&after_owner=${owner}`)).data).toEqual(
      [],
    )
    expect((await ok(`/v1/nfts/${c.pioneers}/2/owners?after_balance=2&after_owner=${ZERO}`)).data).toEqual([
      { owner, balance: '1' },
    ])
  })

  it('answers 404 for an unknown token and 400 for bad input', async () => {
    expect(await expectError(`/v1/nfts/${multi}/99/owners`, 404, 'NOT_FOUND')).toMatch(/No token 99/)
    expect(await expectError(`/v1/nfts/${addr('nobody')}/1/owners`, 404, 'NOT_FOUND')).toMatch(/No token 1/)
    for (const bad of [
      `/v1/nfts/${multi}/1/owners?after_balance=3`,
      `/v1/nfts/${multi}/1/owners?after_owner=${people.bob}`,
      `/v1/nfts/${multi}/1/owners?after_balance=-3&after_owner=${people.bob}`,
      `/v1/nfts/${multi}/1/owners?after_balance=3&after_owner=${people.bob.toUpperCase()}`,
      `/v1/nfts/${multi}/1/owners?limit=0`,
      `/v1/nfts/${multi}/1/owners?limit=101`,
      `/v1/nfts/${multi}/x/owners`,
      `/v1/nfts/${multi}/1/owners?standard=ERC1155`,
    ])
      await expectError(bad, 400, 'INVALID_ARGUMENT')
  })
})

describe('the typed client', () => {
  it('takes `standard` and walks the holders and the merged holdings with its iterators', async () => {
    const client = createNftDataClient({ baseUrl: api.base, apiKey: api.token })
    const collect = async <T>(iterator: AsyncIterable<T>) => {
      const out: T[] = []
      for await (const item of iterator) out.push(item)
      return out
    }
    const holdings = await collect(
      client.items('/v1/owners/{address}/nfts', {
        path: { address: people.alice },
        query: { standard: 'all', limit: 2 },
      }),
    )
    expect(holdings).toEqual((await walk(`/v1/owners/${people.alice}/nfts?standard=all&limit=100`)).items)
    expect(holdings.filter((n) => n.contract_type === 'ERC1155').map((n) => n.balance)).toEqual(['4', '5'])
    const pages = await collect(
      client.pages('/v1/nfts/{address}/{tokenId}/owners', {
        path: { address: multi, tokenId: '1' },
        query: { limit: 4 },
      }),
    )
    expect(pages.length).toBe(3)
    const owners = pages.flatMap((p) => p.data)
    expect(owners.map((h) => h.balance)).toEqual(
      [...token1Balances].map(([, b]) => b.toString()).sort((a, b) => Number(b) - Number(a)),
    )
    const { data } = await client.get('/v1/nfts/{address}/{tokenId}', {
      path: { address: multi, tokenId: '2' },
      query: { standard: 'ERC1155' },
    })
    expect([data.contract_type, data.current_owner, data.total_supply]).toEqual([
      'ERC1155',
      people.alice,
      '5',
    ])
    await expect(client.get('/v1/collections/{address}', { path: { address: multi } })).rejects.toMatchObject(
      {
        status: 404,
        code: 'NOT_FOUND',
      },
    )
  })
})

describe('`standard` itself', () => {
  it('is validated: 400 for a value other than ERC721, ERC1155 or all', async () => {
    for (const path of [
      '/v1/collections?standard=erc1155',
      '/v1/activity?standard=ERC-1155',
      `/v1/owners/${people.alice}/nfts?standard=`,
      `/v1/nfts/${multi}/1?standard=1155`,
    ])
      expect(await expectError(path, 400, 'INVALID_ARGUMENT'), path).toMatch(/standard/)
  })

  it('reads the ERC-1155 feed from its partial index', async () => {
    const { rows } = await db.pool.query(
      `SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = $1 AND indexname IN
         ('transfers_erc1155_feed_idx', 'collections_erc1155_listed_idx') ORDER BY 1`,
      [db.schema],
    )
    expect(rows.map((r) => r.indexname)).toEqual([
      'collections_erc1155_listed_idx',
      'transfers_erc1155_feed_idx',
    ])
    expect(rows[1].indexdef).toMatch(/WHERE \(amount IS NOT NULL\)/)
    expect(rows[0].indexdef).toMatch(/WHERE \(listed AND \(\(?standard\)?(::text)? = 'ERC1155'/)
  })
})
