/**
 * Ownership views (docs/api.md, "Ownership views") over HTTP: a collection's
 * holders, a wallet's collections, transfers and holdings (with the
 * `collection` filter), and snapshots at a past block (`at_block`). The
 * contract tests' dataset, then more blocks committed through the indexer
 * (ERC-721 and ERC-1155 events, holders with tied counts, a wallet holding a
 * token of each of 105 collections). Every answer is checked against a model
 * replayed here, in JavaScript, from the stored transfers in chain order
 * (block, log index, batch index), never against the API's own SQL; every
 * response is validated against /openapi.json.
 */

import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { HISTORY_STAMP_SQL } from '@/db/queries/indexer-state'
import {
  HistoryRewrittenMeanwhile,
  selectCollectionOwnersAt,
  selectOwnerHoldingsAt,
  selectTokenStatesAt,
} from '@/db/queries/owners'
import { toApiError } from '@/server/errors/to-api-error'
import { type ApiServer, startApiServer } from '@/test/api-client'
import { OpenApiContract, type OpenApiDoc } from '@/test/api-contract'
import { buildDataset, c, people } from '@/test/api-dataset'
import { addr, type SimulatedChain, tempMediaDir, ZERO } from '@/test/api-fixtures'
import { createTestDatabase, type TestDatabase } from '@/test/db'

let db: TestDatabase
let api: ApiServer
let chain: SimulatedChain
let contract: OpenApiContract

// biome-ignore lint/suspicious/noExplicitAny: response bodies are arbitrary JSON, checked field by field
type Json = any

const tied = addr('tied-holders')
const items = addr('multi-items-1155')
const wallet = addr('collector')
const spread = Array.from({ length: 105 }, (_, i) => addr(`spread-${i}`))
const holders = Array.from({ length: 25 }, (_, i) => addr(`holder-${i}`))

/** Blocks the tests look at: after the mints, after the moves. */
const blocks = { minted: 0n, moved: 0n, head: 0n, confirmed: 0n, start: 100n }

beforeAll(async () => {
  db = await createTestDatabase()
  const dataset = await buildDataset(db.pool, tempMediaDir())
  chain = dataset.chain
  // Holders with tied counts (1, 2 or 3 tokens each), an ERC-1155 collection, a wallet across 105 collections.
  await chain.mine(1, (_b, emit) => {
    let id = 1n
    for (const [i, holder] of holders.entries())
      for (let k = 0; k <= i % 3; k++) emit({ collection: tied, tokenId: id++, from: ZERO, to: holder })
    emit({ collection: items, tokenId: 1n, from: ZERO, to: people.alice, amount: 5n })
    emit({ collection: items, tokenId: 1n, from: ZERO, to: people.bob, amount: 3n })
    emit({ collection: items, tokenId: 2n, from: ZERO, to: people.alice, amount: 2n })
    emit({ collection: items, tokenId: 2n, from: ZERO, to: people.carol, amount: 7n })
    for (const collection of spread) emit({ collection, tokenId: 1n, from: ZERO, to: wallet })
  })
  blocks.minted = chain.head
  await chain.mine(1, (_b, emit) => {
    // holder-2 (3 tokens: ids 4..6) gives one to holder-0; holder-6 burns its only one (13); a self-transfer.
    emit({ collection: tied, tokenId: 4n, from: holders[2]!, to: holders[0]! })
    emit({ collection: tied, tokenId: 13n, from: holders[6]!, to: ZERO })
    emit({ collection: tied, tokenId: 1n, from: holders[0]!, to: holders[0]! })
    // alice's whole token 1 to bob, carol burns 4 of her 7 of token 2, alice sends 1 of token 2 to the wallet.
    emit({ collection: items, tokenId: 1n, from: people.alice, to: people.bob, amount: 5n })
    emit({ collection: items, tokenId: 2n, from: people.carol, to: ZERO, amount: 4n })
    emit({ collection: items, tokenId: 2n, from: people.alice, to: wallet, amount: 1n })
    emit({ collection: spread[0]!, tokenId: 1n, from: wallet, to: people.bob })
  })
  blocks.moved = chain.head
  await chain.mine(3, () => {}, { confirmations: 1n })
  blocks.head = chain.head
  blocks.confirmed = chain.head - 1n
  await chain.describeCollections()
  api = await startApiServer(db.url)
  contract = await OpenApiContract.load(
    (await (await fetch(`${api.base}/openapi.json`)).json()) as OpenApiDoc,
  )
}, 180_000)

afterAll(async () => {
  await api?.close()
  await db?.drop()
})

// ───────────────────────── the model ─────────────────────────

interface Model {
  /** ERC-721 tokens: `collection|token` → owner (the zero address once burned). */
  owners: Map<string, string>
  /** ERC-1155: `collection|token|owner` → balance. */
  balances: Map<string, bigint>
  /** Transfers per token up to the block. */
  counts: Map<string, number>
  multi: Set<string>
}

/** The state after `block`, replayed from the stored transfers in chain order. */
async function model(block: bigint = 2n ** 62n): Promise<Model> {
  const { rows } = await db.pool.query(
    `SELECT collection_address AS c, token_id::text AS t, from_address AS f, to_address AS o, amount::text AS a
       FROM transfers WHERE block_number <= $1 ORDER BY block_number, log_index, batch_index`,
    [block.toString()],
  )
  const m: Model = { owners: new Map(), balances: new Map(), counts: new Map(), multi: new Set() }
  for (const r of rows) {
    const token = `${r.c}|${r.t}`
    m.counts.set(token, (m.counts.get(token) ?? 0) + 1)
    if (r.a === null) {
      m.owners.set(token, r.o)
      continue
    }
    m.multi.add(r.c)
    const move = (owner: string, by: bigint) => {
      if (owner === ZERO) return
      const key = `${token}|${owner}`
      m.balances.set(key, (m.balances.get(key) ?? 0n) + by)
    }
    move(r.f, -BigInt(r.a))
    move(r.o, BigInt(r.a))
  }
  return m
}

/** A collection's holders in the model: [owner, token_count, balance?], most tokens first, then owner. */
function holdersOf(
  m: Model,
  collection: string,
): Array<{ owner: string; token_count: number; balance?: string }> {
  const counts = new Map<string, { n: number; sum: bigint }>()
  const add = (owner: string, by: bigint) => {
    const h = counts.get(owner) ?? { n: 0, sum: 0n }
    h.n++
    h.sum += by
    counts.set(owner, h)
  }
  for (const [token, owner] of m.owners)
    if (token.startsWith(`${collection}|`) && owner !== ZERO) add(owner, 1n)
  for (const [key, balance] of m.balances) {
    const [c, , owner] = key.split('|')
    if (c === collection && balance > 0n) add(owner!, balance)
  }
  const multi = m.multi.has(collection)
  return [...counts]
    .map(([owner, h]) => ({ owner, token_count: h.n, ...(multi ? { balance: h.sum.toString() } : {}) }))
    .sort((a, b) => b.token_count - a.token_count || (a.owner < b.owner ? -1 : 1))
}

/** A wallet's holdings in the model: `collection|token` keys in (collection, numeric token) order, with balances. */
function holdingsOf(
  m: Model,
  owner: string,
  standard: 'ERC721' | 'ERC1155' | 'all',
): Array<[string, string]> {
  const out: Array<[string, string]> = []
  if (standard !== 'ERC1155') for (const [token, o] of m.owners) if (o === owner) out.push([token, '1'])
  if (standard !== 'ERC721')
    for (const [key, balance] of m.balances) {
      const [c, t, o] = key.split('|')
      if (o === owner && balance > 0n) out.push([`${c}|${t}`, balance.toString()])
    }
  const order = (k: string) => {
    const [c, t] = k.split('|')
    return [c!, BigInt(t!)] as const
  }
  return out.sort(([a], [b]) => {
    const [ca, ta] = order(a)
    const [cb, tb] = order(b)
    return ca < cb ? -1 : ca > cb ? 1 : ta < tb ? -1 : ta > tb ? 1 : 0
  })
}

// ───────────────────────── HTTP ─────────────────────────

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

async function expectError(path: string, status: number, code = 'INVALID_ARGUMENT'): Promise<string> {
  const reply = await call(path)
  expect(reply.status, `${path}: ${reply.text}`).toBe(status)
  expect(reply.body.error.code).toBe(code)
  expect(reply.body.error.request_id).toEqual(expect.any(String))
  return reply.body.error.message as string
}

/** Every item of a list, following next_page_params as a client does. */
async function walk(path: string): Promise<{ items: Json[]; pages: Json[] }> {
  const items: Json[] = []
  const pages: Json[] = []
  const [pathname, first = ''] = path.split('?')
  let next = path
  for (;;) {
    const body = await ok(next)
    pages.push(body)
    items.push(...body.data)
    if (!body.pagination.has_more) return { items, pages }
    // Every key of next_page_params into the next request (replacing one already there), the other filters kept.
    const query = new URLSearchParams(first)
    for (const [k, v] of Object.entries(body.pagination.next_page_params)) query.set(k, String(v))
    next = `${pathname}?${query}`
  }
}

// ───────────────────────── tests ─────────────────────────

describe('GET /v1/collections/{address}/owners', () => {
  it('lists an ERC-721 collection’s holders, most tokens first, paging exactly across ties', async () => {
    const expected = holdersOf(await model(), tied)
    expect(expected.length).toBe(24) // holder-6 burned its only token
    // Ties: several holders share each count.
    expect(new Set(expected.map((h) => h.token_count)).size).toBeLessThan(expected.length)
    for (const limit of [1, 2, 3, 7, 100]) {
      const { items, pages } = await walk(`/v1/collections/${tied}/owners?limit=${limit}`)
      expect(items, `limit ${limit}`).toEqual(expected)
      expect(pages.length).toBe(Math.max(1, Math.ceil(expected.length / limit)))
      for (const page of pages) expect(page.coverage).toEqual({ status: 'complete', start_block: '100' })
    }
  })

  it('counts token ids and sums balances of an ERC-1155 collection', async () => {
    const expected = holdersOf(await model(), items)
    // alice: token 2 (1 left); bob: token 1 (8); carol: token 2 (3); the wallet: token 2 (1).
    expect(expected).toEqual(
      [
        { owner: people.alice, token_count: 1, balance: '1' },
        { owner: people.bob, token_count: 1, balance: '8' },
        { owner: people.carol, token_count: 1, balance: '3' },
        { owner: wallet, token_count: 1, balance: '1' },
      ].sort((a, b) => (a.owner < b.owner ? -1 : 1)),
    )
    expect((await walk(`/v1/collections/${items}/owners?limit=2`)).items).toEqual(expected)
  })

  it('matches the dataset’s collections too, and answers 404 for an unknown collection', async () => {
    const m = await model()
    for (const collection of [c.pioneers, c.glyphs, c.percent])
      expect((await walk(`/v1/collections/${collection}/owners?limit=2`)).items).toEqual(
        holdersOf(m, collection),
      )
    const message = await expectError(`/v1/collections/${addr('nobody-deployed')}/owners`, 404, 'NOT_FOUND')
    expect(message).toContain(addr('nobody-deployed'))
  })

  it('refuses a half cursor, repeated parameters and bad values', async () => {
    await expectError(`/v1/collections/${tied}/owners?after_token_count=2`, 400)
    await expectError(`/v1/collections/${tied}/owners?after_owner=${people.alice}`, 400)
    await expectError(`/v1/collections/${tied}/owners?limit=1&limit=2`, 400)
    await expectError(`/v1/collections/${tied}/owners?limit=0`, 400)
    await expectError(`/v1/collections/${tied}/owners?limit=101`, 400)
    await expectError(`/v1/collections/${tied}/owners?after_token_count=0&after_owner=${people.alice}`, 400)
    await expectError(`/v1/collections/${tied.toUpperCase().replace('0X', '0x')}/owners`, 400)
  })
})

describe('GET /v1/owners/{address}/collections', () => {
  it('lists a wallet’s collections by address with counts, names and balances', async () => {
    const m = await model()
    for (const owner of [wallet, people.alice, people.bob, holders[0]!]) {
      const expected = new Map<string, { n: number; sum: bigint }>()
      for (const [token, o] of m.owners)
        if (o === owner) {
          const col = token.split('|')[0]!
          const e = expected.get(col) ?? { n: 0, sum: 0n }
          e.n++
          expected.set(col, e)
        }
      for (const [key, balance] of m.balances) {
        const [col, , o] = key.split('|')
        if (o !== owner || balance <= 0n) continue
        const e = expected.get(col!) ?? { n: 0, sum: 0n }
        e.n++
        e.sum += balance
        expected.set(col!, e)
      }
      const { items: got } = await walk(`/v1/owners/${owner}/collections?limit=7`)
      expect(got.map((i: Json) => [i.collection.address, i.token_count, i.balance])).toEqual(
        [...expected.keys()]
          .sort()
          .map((col) => [
            col,
            expected.get(col)!.n,
            m.multi.has(col) ? expected.get(col)!.sum.toString() : undefined,
          ]),
      )
    }
    const alice = (await ok(`/v1/owners/${people.alice}/collections?limit=100`)).data
    expect(alice.find((i: Json) => i.collection.address === c.pioneers).collection).toEqual({
      address: c.pioneers,
      name: 'Genesis Pioneers',
      symbol: 'PION',
      contract_type: 'ERC721',
    })
    expect(alice.find((i: Json) => i.collection.address === items).collection.contract_type).toBe('ERC1155')
    // 104 of the 105 spread collections (one was given away) and the ERC-1155 one.
    expect((await walk(`/v1/owners/${wallet}/collections?limit=100`)).pages.length).toBe(2)
  })

  it('gives an empty page for an address that holds nothing', async () => {
    const body = await ok(`/v1/owners/${addr('empty-wallet')}/collections`)
    expect(body.data).toEqual([])
    expect(body.pagination).toEqual({ limit: 20, has_more: false })
  })
})

describe('GET /v1/owners/{address}/transfers', () => {
  it('lists a wallet’s transfers in and out, newest first, a self-transfer once', async () => {
    const { rows } = await db.pool.query(
      `SELECT transaction_hash, log_index, from_address, to_address FROM transfers
        ORDER BY block_timestamp DESC, id DESC`,
    )
    for (const owner of [holders[0]!, wallet, people.alice, ZERO]) {
      const expected = (dir: 'in' | 'out' | 'all') =>
        rows
          .filter((r) =>
            dir === 'in'
              ? r.to_address === owner
              : dir === 'out'
                ? r.from_address === owner
                : r.to_address === owner || r.from_address === owner,
          )
          .map((r) => `${r.transaction_hash}:${r.log_index}`)
      for (const direction of ['all', 'in', 'out'] as const) {
        const limit = owner === ZERO ? 50 : 3
        const query = direction === 'all' ? `?limit=${limit}` : `?limit=${limit}&direction=${direction}`
        const { items: got } = await walk(`/v1/owners/${owner}/transfers${query}`)
        expect(
          got.map((t: Json) => `${t.transaction_hash}:${t.log_index}`),
          `${owner} ${direction}`,
        ).toEqual(expected(direction))
      }
    }
    // holder-0's self-transfer appears once, ERC-1155 rows carry their amount, ERC-721 rows '1'.
    const own = (await walk(`/v1/owners/${holders[0]}/transfers`)).items
    expect(own.filter((t: Json) => t.from_address === t.to_address)).toHaveLength(1)
    const walletFeed = (await walk(`/v1/owners/${wallet}/transfers?limit=100`)).items
    expect(walletFeed.find((t: Json) => t.collection_address === items).amount).toBe('1')
    expect(walletFeed.find((t: Json) => t.collection_address === spread[0]).amount).toBe('1')
    const aliceFeed = (await walk(`/v1/owners/${people.alice}/transfers?limit=100`)).items
    expect(aliceFeed.filter((t: Json) => t.collection_address === items).map((t: Json) => t.amount)).toEqual([
      '1',
      '5',
      '2',
      '5',
    ])
  })

  it('refuses a half cursor and an unknown direction; an unknown wallet has an empty page', async () => {
    await expectError(`/v1/owners/${wallet}/transfers?before_id=3`, 400)
    await expectError(`/v1/owners/${wallet}/transfers?direction=sideways`, 400)
    await expectError(`/v1/owners/${wallet}/transfers?direction=in&direction=out`, 400)
    expect((await ok(`/v1/owners/${addr('empty-wallet')}/transfers`)).data).toEqual([])
  })
})

describe('GET /v1/owners/{address}/nfts?collection=', () => {
  const ids = (body: Json) => body.data.map((n: Json) => `${n.collection_address}|${n.token_id}`)

  it('keeps 1, 100 or all listed collections’ tokens, in the same order and cursor', async () => {
    const m = await model()
    const all = holdingsOf(m, wallet, 'ERC721').map(([k]) => k)
    expect(all.length).toBe(104)
    const one = await ok(`/v1/owners/${wallet}/nfts?collection=${spread[7]}`)
    expect(ids(one)).toEqual([`${spread[7]}|1`])
    const hundred = spread.slice(5, 105)
    const query = hundred.map((a) => `collection=${a}`).join('&')
    const { items: got } = await walk(`/v1/owners/${wallet}/nfts?${query}&limit=9`)
    expect(got.map((n: Json) => `${n.collection_address}|${n.token_id}`)).toEqual(
      all.filter((k) => (hundred as string[]).includes(k.split('|')[0]!)),
    )
    // Small pages inside a collection that fills them on its own, then across the next ones.
    const owner = Object.values(people).find(
      (p) => new Set(holdingsOf(m, p, 'ERC721').map(([k]) => k.split('|')[0])).size > 1,
    )!
    const held = holdingsOf(m, owner, 'ERC721').map(([k]) => k)
    const mixed = [...new Set(held.map((k) => k.split('|')[0]!)), spread[9]!]
    expect(held.length).toBeGreaterThan(mixed.length)
    for (const limit of [1, 2]) {
      const { items: paged } = await walk(
        `/v1/owners/${owner}/nfts?${mixed.map((a) => `collection=${a}`).join('&')}&limit=${limit}`,
      )
      expect(paged.map((n: Json) => `${n.collection_address}|${n.token_id}`)).toEqual(held)
    }
    // Duplicates collapse: 100 distinct among 110 parameters is accepted.
    const dup = [...hundred, ...hundred.slice(0, 10)].map((a) => `collection=${a}`).join('&')
    expect((await ok(`/v1/owners/${wallet}/nfts?${dup}&limit=100`)).data.length).toBe(100)
    // Collections the wallet never held, or gave away, add nothing.
    expect(ids(await ok(`/v1/owners/${wallet}/nfts?collection=${spread[0]}&collection=${tied}`))).toEqual([])
    // With standard=all, ERC-1155 tokens of a listed collection come with their balance.
    const multi = await ok(
      `/v1/owners/${wallet}/nfts?collection=${items}&collection=${spread[3]}&standard=all`,
    )
    expect(multi.data.map((n: Json) => [n.collection_address, n.token_id, n.balance])).toEqual(
      [
        [items, '2', '1'],
        [spread[3], '1', '1'],
      ].sort((a, b) => (a[0]! < b[0]! ? -1 : 1)),
    )
  })

  it('refuses 101 distinct collections and malformed addresses', async () => {
    const query = spread
      .slice(0, 101)
      .map((a) => `collection=${a}`)
      .join('&')
    expect(await expectError(`/v1/owners/${wallet}/nfts?${query}`, 400)).toContain('100')
    await expectError(`/v1/owners/${wallet}/nfts?collection=0x1234`, 400)
    await expectError(`/v1/owners/${wallet}/nfts?collection=${spread[1]!.toUpperCase()}`, 400)
    await expectError(`/v1/owners/${wallet}/nfts?collection=`, 400)
  })
})

describe('at_block snapshots', () => {
  it('lists the holders at a block before and after the transfers, paging on the same block', async () => {
    for (const block of [blocks.minted, blocks.moved, blocks.confirmed]) {
      const m = await model(block)
      for (const collection of [tied, items, c.pioneers]) {
        const { items: got, pages } = await walk(
          `/v1/collections/${collection}/owners?limit=5&at_block=${block}`,
        )
        expect(got, `${collection} at ${block}`).toEqual(holdersOf(m, collection))
        for (const page of pages.slice(0, -1))
          expect(page.pagination.next_page_params.at_block).toBe(String(block))
      }
    }
    // The transfers between the two blocks changed the answer.
    const before = (await ok(`/v1/collections/${tied}/owners?limit=100&at_block=${blocks.minted}`)).data
    const after = (await ok(`/v1/collections/${tied}/owners?limit=100&at_block=${blocks.moved}`)).data
    expect(before).not.toEqual(after)
    expect(before.find((h: Json) => h.owner === holders[6])).toEqual({ owner: holders[6], token_count: 1 })
    expect(after.find((h: Json) => h.owner === holders[6])).toBeUndefined()
    expect(before.find((h: Json) => h.owner === holders[2])).toEqual({ owner: holders[2], token_count: 3 })
    expect(after.find((h: Json) => h.owner === holders[2])).toEqual({ owner: holders[2], token_count: 2 })
  })

  it('computes an ERC-721 collection’s holders at a block the same way forward, back and per token', async () => {
    const { rows } = await db.pool.query(
      `SELECT address, coalesce(first_seen_block, deploy_block, 0)::text AS since FROM collections
        WHERE standard <> 'ERC1155' AND total_transfers > 2`,
    )
    // The collections with some history: mints, moves, burns, a self-transfer.
    expect(rows.map((r) => r.address)).toEqual(expect.arrayContaining([tied, c.pioneers]))
    let seen = 0
    // Each way forced, and the one chosen by its estimated cost.
    const arms = ['forward', 'back', 'per-token', undefined] as const
    for (const block of [
      blocks.start - 1n,
      blocks.start,
      blocks.minted - 1n,
      blocks.minted,
      blocks.moved,
      blocks.confirmed,
    ]) {
      const m = await model(block)
      for (const { address, since } of rows) {
        const expected = holdersOf(m, address)
        for (const arm of arms) {
          const got = await selectCollectionOwnersAt(db, {
            address,
            block,
            multi: false,
            head: blocks.head,
            since: BigInt(since),
            arm,
          })
          expect(
            got.map((h) => ({ owner: h.owner, token_count: h.token_count })),
            `${address} at ${block}, ${arm ?? 'chosen'}`,
          ).toEqual(expected)
        }
        seen += expected.length
      }
    }
    expect(seen).toBeGreaterThan(50)
  })

  it('computes a snapshot from one state of the database, and only from the history the request read', async () => {
    const expected = holdersOf(await model(blocks.moved), tied)
    const { rows: lasts } = await db.pool.query(
      `SELECT token_id::text, block_number::text, block_timestamp FROM transfers
        WHERE collection_address = $1 AND block_number <= $2 ORDER BY block_timestamp DESC, id DESC LIMIT 1`,
      [tied, blocks.moved],
    )
    const last = lasts[0]!
    // A transfer of that token after its last one up to the block, in the same block, committed by
    // another connection once the block's bounds are read and before the holders are: a reader
    // between two states of the database would count it.
    const intruder = `0x${'de'.repeat(20)}`
    let committed = false
    const commitBetween = async () => {
      await db.pool.query(
        `INSERT INTO transfers (collection_address, token_id, from_address, to_address, event_type, block_number,
                                block_timestamp, transaction_hash, log_index)
         SELECT t.collection_address, t.token_id, t.to_address, $3, 'transfer', $4, $5, $6, 9999 FROM transfers t
          WHERE t.collection_address = $1 AND t.token_id = $2::numeric ORDER BY t.id DESC LIMIT 1`,
        [tied, last.token_id, intruder, last.block_number, last.block_timestamp, `0x${'de'.repeat(32)}`],
      )
      committed = true
    }
    type Query = string | { text: string; values?: unknown[] }
    /** Runs a statement where it was sent, then commits the intruder after the bounds' statement. */
    const then = async (result: Promise<unknown>, query: Query) => {
      const done = await result
      if (/WITH RECURSIVE/.test(typeof query === 'string' ? query : query.text)) await commitBetween()
      return done
    }
    const interleaving = {
      query: (query: Query, params?: unknown[]) => then(db.pool.query(query as string, params), query),
      async connect() {
        const client = await db.pool.connect()
        return {
          query: (query: Query, params?: unknown[]) => then(client.query(query as string, params), query),
          release: () => client.release(),
        }
      },
    } as unknown as pg.Pool
    try {
      const got = await selectCollectionOwnersAt(
        { pool: interleaving },
        { address: tied, block: blocks.moved, multi: false, head: blocks.head, since: 0n, arm: 'forward' },
      )
      expect(committed).toBe(true)
      expect(got.map((h) => ({ owner: h.owner, token_count: h.token_count }))).toEqual(expected)
    } finally {
      await db.pool.query('DELETE FROM transfers WHERE to_address = $1', [intruder])
    }

    // Asked of the history the request read: the indexer state's history_rewritten_at, read in the
    // snapshot's own transaction. A rewrite after the request's read: nothing is computed or kept.
    const { rows: state } = await db.pool.query(
      `SELECT network, ${HISTORY_STAMP_SQL} AS stamp FROM indexer_state`,
    )
    const q = { address: tied, block: blocks.moved, multi: false, head: blocks.head, since: 0n }
    const basis = { network: state[0]!.network, historyRewrittenAt: state[0]!.stamp }
    expect((await selectCollectionOwnersAt(db, { ...q, basis })).length).toBe(expected.length)
    const stale = { ...basis, historyRewrittenAt: String(BigInt(basis.historyRewrittenAt) - 1n) }
    const refused = await selectCollectionOwnersAt(db, { ...q, basis: stale }).catch((err: unknown) => err)
    expect(refused).toBeInstanceOf(HistoryRewrittenMeanwhile)
    expect(toApiError(refused)).toMatchObject({ status: 503, code: 'SERVICE_UNAVAILABLE' })
    const holdings = selectOwnerHoldingsAt(db, {
      owner: people.alice,
      block: blocks.moved,
      standard: 'all',
      head: blocks.head,
      since: 0n,
      basis: stale,
    })
    await expect(holdings).rejects.toBeInstanceOf(HistoryRewrittenMeanwhile)
    // A token's state at the block (the single token, a holdings page's tokens): the same.
    const states = { keys: [{ collection: tied, tokenId: '4', multi: false }], block: blocks.moved }
    const unchecked = await selectTokenStatesAt(db, states)
    expect(unchecked).toHaveLength(1)
    expect(await selectTokenStatesAt(db, { ...states, basis })).toEqual(unchecked)
    await expect(selectTokenStatesAt(db, { ...states, basis: stale })).rejects.toBeInstanceOf(
      HistoryRewrittenMeanwhile,
    )
  })

  it('lists a wallet’s holdings at a block, with each token’s state at that block', async () => {
    for (const block of [blocks.minted, blocks.moved]) {
      const m = await model(block)
      for (const [owner, standard] of [
        [wallet, 'all'],
        [people.alice, 'ERC1155'],
        [people.bob, 'all'],
        [holders[2]!, undefined],
      ] as const) {
        const query = standard ? `&standard=${standard}` : ''
        const { items: got } = await walk(`/v1/owners/${owner}/nfts?limit=6&at_block=${block}${query}`)
        const expected = holdingsOf(m, owner, standard ?? 'ERC721')
        expect(
          got.map((n: Json) => [`${n.collection_address}|${n.token_id}`, standard ? n.balance : '1']),
          `${owner} at ${block}`,
        ).toEqual(expected)
        for (const n of got) {
          const token = `${n.collection_address}|${n.token_id}`
          expect(n.transfer_count).toBe(m.counts.get(token))
          if (!m.multi.has(n.collection_address)) expect(n.current_owner).toBe(owner)
          expect(n.is_burned).toBe(false)
        }
      }
    }
    // The collection filter pages the same snapshot: two of the wallet's collections, named in
    // reverse order, a token a page (the cursor inside a collection, then across to the next).
    const atMint = holdingsOf(await model(blocks.minted), wallet, 'ERC721').map(([key]) => key)
    const named = [...new Set(atMint.map((key) => key.split('|')[0]!))].slice(0, 2).reverse()
    expect(named).toHaveLength(2)
    const filtered = await walk(
      `/v1/owners/${wallet}/nfts?limit=1&at_block=${blocks.minted}&collection=${named[0]}&collection=${named[1]}`,
    )
    expect(filtered.items.map((n: Json) => `${n.collection_address}|${n.token_id}`)).toEqual(
      atMint.filter((key) => named.includes(key.split('|')[0]!)),
    )
    // The wallet had the first spread collection's token at the mint block, not after giving it away.
    const first = (b: bigint) => ok(`/v1/owners/${wallet}/nfts?collection=${spread[0]}&at_block=${b}`)
    expect((await first(blocks.minted)).data.map((n: Json) => n.token_id)).toEqual(['1'])
    expect((await first(blocks.moved)).data).toEqual([])
    // Before anything was minted to it, the wallet held nothing.
    expect((await ok(`/v1/owners/${wallet}/nfts?at_block=${blocks.minted - 1n}`)).data).toEqual([])
  })

  it('answers one token’s owner, burned state and supply at a block', async () => {
    const token = (path: string) => ok(path).then((b) => b.data)
    const burnedId = 13n
    const atMint = await token(`/v1/nfts/${tied}/${burnedId}?at_block=${blocks.minted}`)
    expect([atMint.current_owner, atMint.is_burned, atMint.transfer_count]).toEqual([holders[6], false, 1])
    const atBurn = await token(`/v1/nfts/${tied}/${burnedId}?at_block=${blocks.moved}`)
    expect([atBurn.current_owner, atBurn.is_burned, atBurn.transfer_count]).toEqual([ZERO, true, 2])
    // At the confirmed block the answer is today's state.
    const { text: now } = await call(`/v1/nfts/${c.pioneers}/2`)
    const { text: atHead } = await call(`/v1/nfts/${c.pioneers}/2?at_block=${blocks.confirmed}`)
    expect(JSON.parse(atHead)).toEqual(JSON.parse(now))
    // ERC-1155 at the mint block: supply 9 of token 2, two holders; after: 5, three holders.
    const minted = await token(`/v1/nfts/${items}/2?standard=ERC1155&at_block=${blocks.minted}`)
    expect([minted.total_supply, minted.holder_count, minted.current_owner]).toEqual(['9', 2, null])
    const moved = await token(`/v1/nfts/${items}/2?standard=ERC1155&at_block=${blocks.moved}`)
    expect([moved.total_supply, moved.holder_count]).toEqual(['5', 3])
    const sole = await token(`/v1/nfts/${items}/1?standard=ERC1155&at_block=${blocks.moved}`)
    expect([sole.total_supply, sole.holder_count, sole.current_owner]).toEqual(['8', 1, people.bob])
    // A token not minted yet at the block: 404.
    await expectError(`/v1/nfts/${tied}/1?at_block=${blocks.minted - 1n}`, 404, 'NOT_FOUND')
  })

  it('serves confirmed, covered blocks only, naming the range', async () => {
    const range = `blocks 100 to ${blocks.confirmed.toLocaleString('en-US')}`
    for (const path of [
      `/v1/collections/${tied}/owners`,
      `/v1/owners/${wallet}/nfts`,
      `/v1/nfts/${tied}/1`,
    ]) {
      expect((await ok(`${path}?at_block=${blocks.confirmed}`)).data).toBeDefined()
      const unconfirmed = await expectError(`${path}?at_block=${blocks.confirmed + 1n}`, 400)
      expect(unconfirmed).toContain('not confirmed')
      expect(unconfirmed).toContain(range)
      expect(await expectError(`${path}?at_block=99`, 400)).toContain(range)
      for (const bad of ['abc', '-1', '1.5', '01', '9223372036854775808', '1e3', ''])
        await expectError(`${path}?at_block=${encodeURIComponent(bad)}`, 400)
      await expectError(`${path}?at_block=${blocks.moved}&at_block=${blocks.minted}`, 400)
    }
    // A collection whose history starts before the window: no snapshot of it.
    expect(
      await expectError(`/v1/collections/${c.ancient}/owners?at_block=${blocks.confirmed}`, 400),
    ).toContain('partial')
    await expectError(
      `/v1/collections/${addr('nobody-deployed')}/owners?at_block=${blocks.confirmed}`,
      404,
      'NOT_FOUND',
    )
  })

  it('refuses snapshots while the indexer’s coverage is partial', async () => {
    await db.pool.query(`UPDATE indexer_state SET coverage_status = 'partial'`)
    api.refresh()
    try {
      expect(await expectError(`/v1/owners/${wallet}/nfts?at_block=${blocks.minted}`, 400)).toContain(
        'backfill',
      )
      await expectError(`/v1/collections/${tied}/owners?at_block=${blocks.minted}`, 400)
    } finally {
      await db.pool.query(`UPDATE indexer_state SET coverage_status = 'complete'`)
      api.refresh()
    }
  })
})
