/**
 * Ownership views end to end against the chain itself (docs/api.md,
 * "Ownership"): two OpenZeppelin ERC-721 collections and an ERC-1155 on
 * anvil, six wallets, a seeded random history of mints (single and batch),
 * transfers (self-transfers too), burns and re-mints of burned ids, some
 * blocks with several transactions, two reorganisations of unconfirmed
 * blocks. The indexer backfills the first part and follows the rest; the
 * web server serves /v1 over the same database. Then, over HTTP with a real
 * API key, for a dozen past confirmed blocks (among them blocks the
 * reorganisations replaced):
 *
 *  - GET /v1/collections/{a}/owners?at_block=B, every page, against
 *    ownerOf(id) / balanceOfBatch() called at block B; for the ERC-721
 *    collections, each of the three ways of computing it (forward, back from
 *    now, per token: docs/database.md, "Snapshots") forced, against the same;
 *  - GET /v1/owners/{w}/nfts?at_block=B (ERC-721, and with standard=all) against the same reads;
 *  - GET /v1/nfts/{a}/{id}?at_block=B against ownerOf at B (a revert: not minted yet, or burned);
 *
 * and without at_block: holders, holdings (also with `collection=`), a
 * wallet's collections and its transfers (against the chain's logs). An
 * answer at a confirmed block is the same before and after a reorganisation;
 * a block past the confirmed head is refused with 400 naming the range.
 *
 * Another seed: OWNERSHIP_SEED=<n> npx vitest run -c src/test/vitest.config.ts src/indexer/test/ownership-truth.test.ts
 */
import { type Address, type Hex, parseAbi } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  type HoldersAtArm,
  type HoldingsAtArm,
  selectCollectionOwnersAt,
  selectOwnerHoldingsAt,
} from '@/db/queries/owners'
import { reorgChain } from '@/dev/devnet/reorg'
import { mulberry32 } from '@/lib/random'
import { type ApiServer, startApiServer } from '@/test/api-client'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import { startTestChain, type TestChain } from './chain'
import { type RunningIndexer, startIndexer, testConfig } from './indexer'
import { type ChainTransfer, chainTransfers, waitForIndexed } from './oracle'
import { waitForVerified } from './provider-run'

const SEED = Number(process.env.OWNERSHIP_SEED ?? 20_261_129)
const note = (what: string) => `${what} (OWNERSHIP_SEED=${SEED})`
const CONFIRMATIONS = 3n
const ZERO: Address = '0x0000000000000000000000000000000000000000'
/** Small pages, so that every list runs over several of them and its cursor is exercised. */
const PAGE = 3

const erc721Abi = parseAbi(['function ownerOf(uint256) view returns (address)'])
const erc1155Abi = parseAbi([
  'function balanceOf(address, uint256) view returns (uint256)',
  'function balanceOfBatch(address[], uint256[]) view returns (uint256[])',
])

let chain: TestChain
let db: TestDatabase
let indexer: RunningIndexer
let api: ApiServer
let apes: Address
let birds: Address
let editions: Address
/** The six wallets that hold and trade (accounts 1..6; account 0 deploys and mints). */
let wallets: Address[]
const random = mulberry32(SEED)
/** ERC-721 ids ever used per collection (minted, maybe burned since), and the next fresh id. */
const ids721 = new Map<Address, bigint[]>()
let nextId = 1n
/** The ERC-1155 ids the history uses. */
const IDS_1155 = [1n, 2n, 3n, 4n, 5n, 6n, 7n, 2n ** 200n]
/** Blocks the reorganisations replaced. */
const replacedBlocks: bigint[] = []

const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!
const lower = (a: string) => a.toLowerCase()

// ───────────────────────────── the history ─────────────────────────────

/** Sends without waiting; a modest gas limit so that several transactions fit in one block. */
function send(address: Address, name: string, fn: string, args: unknown[], from?: Address): Promise<Hex> {
  return chain.clients.wallet.writeContract({
    address,
    abi: chain.artifacts[name]!.abi,
    functionName: fn,
    args,
    account: from ?? chain.accounts[0]!,
    chain: null,
    gas: 1_000_000n,
  })
}

async function ownerNow(collection: Address, id: bigint): Promise<Address | undefined> {
  try {
    return lower(
      await chain.clients.public.readContract({
        address: collection,
        abi: erc721Abi,
        functionName: 'ownerOf',
        args: [id],
      }),
    ) as Address
  } catch {
    return undefined
  }
}

const balanceNow = (holder: Address, id: bigint) =>
  chain.clients.public.readContract({
    address: editions,
    abi: erc1155Abi,
    functionName: 'balanceOf',
    args: [holder, id],
  })

/** A held ERC-721 token (up to a few tries), with its owner. */
async function heldToken(): Promise<{ collection: Address; id: bigint; owner: Address } | undefined> {
  for (let i = 0; i < 6; i++) {
    const collection = pick([apes, birds])
    const list = ids721.get(collection)!
    if (list.length === 0) continue
    const id = pick(list)
    const owner = await ownerNow(collection, id)
    if (owner) return { collection, id, owner }
  }
  return undefined
}

/** A burned ERC-721 id (minted once, no owner now). */
async function burnedToken(): Promise<{ collection: Address; id: bigint } | undefined> {
  for (let i = 0; i < 6; i++) {
    const collection = pick([apes, birds])
    const list = ids721.get(collection)!
    if (list.length === 0) continue
    const id = pick(list)
    if (!(await ownerNow(collection, id))) return { collection, id }
  }
  return undefined
}

/** A positive ERC-1155 balance (up to a few tries). */
async function heldEdition(): Promise<{ holder: Address; id: bigint; balance: bigint } | undefined> {
  for (let i = 0; i < 8; i++) {
    const holder = pick(wallets)
    const id = pick(IDS_1155)
    const balance = await balanceNow(holder, id)
    if (balance > 0n) return { holder, id, balance }
  }
  return undefined
}

const amount = (max: bigint) => 1n + BigInt(Math.floor(random() * Number(max)))

function fresh721(collection: Address): bigint {
  const id = nextId++
  ids721.get(collection)!.push(id)
  return id
}

/** One random operation, sent (not waited for). Reads the chain's state to stay valid. */
async function operation(): Promise<Hex> {
  const r = random()
  if (r < 0.2) {
    const collection = pick([apes, birds])
    return send(collection, 'TestNFT', 'mint', [pick(wallets), fresh721(collection)])
  }
  if (r < 0.25) {
    const collection = pick([apes, birds])
    const first = fresh721(collection)
    fresh721(collection)
    fresh721(collection)
    return send(collection, 'TestNFT', 'mintBatch', [pick(wallets), first, 3n])
  }
  if (r < 0.5) {
    const held = await heldToken()
    if (held) {
      // One move in twelve is a self-transfer.
      const to = random() < 1 / 12 ? held.owner : pick(wallets.filter((w) => w !== held.owner))
      return send(held.collection, 'TestNFT', 'move', [held.owner, to, held.id])
    }
  }
  if (r < 0.57) {
    const held = await heldToken()
    if (held) return send(held.collection, 'TestNFT', 'burn', [held.id])
  }
  if (r < 0.6) {
    const burned = await burnedToken()
    if (burned) return send(burned.collection, 'TestNFT', 'mint', [pick(wallets), burned.id])
  }
  if (r < 0.72) return send(editions, 'TestEditions', 'mint', [pick(wallets), pick(IDS_1155), amount(5n)])
  if (r < 0.77) {
    const ids = [...new Set([pick(IDS_1155), pick(IDS_1155), pick(IDS_1155)])]
    return send(editions, 'TestEditions', 'mintBatch', [pick(wallets), ids, ids.map(() => amount(4n))])
  }
  if (r < 0.88) {
    const held = await heldEdition()
    if (held) {
      // Whole or part of the balance; now and then to itself.
      const value = random() < 0.4 ? held.balance : amount(held.balance)
      const to = random() < 0.08 ? held.holder : pick(wallets.filter((w) => w !== held.holder))
      return send(
        editions,
        'TestEditions',
        'safeTransferFrom',
        [held.holder, to, held.id, value, '0x'],
        held.holder,
      )
    }
  }
  if (r < 0.93) {
    const held = await heldEdition()
    if (held) {
      const other = IDS_1155.filter((id) => id !== held.id)
      const second = pick(other)
      const secondBalance = await balanceNow(held.holder, second)
      const ids = secondBalance > 0n ? [held.id, second] : [held.id]
      const values = secondBalance > 0n ? [held.balance, amount(secondBalance)] : [amount(held.balance)]
      const to = pick(wallets.filter((w) => w !== held.holder))
      return send(
        editions,
        'TestEditions',
        'safeBatchTransferFrom',
        [held.holder, to, ids, values, '0x'],
        held.holder,
      )
    }
  }
  const held = await heldEdition()
  if (held) return send(editions, 'TestEditions', 'burn', [held.holder, held.id, amount(held.balance)])
  const collection = pick([apes, birds])
  return send(collection, 'TestNFT', 'mint', [pick(wallets), fresh721(collection)])
}

/** `blocks` blocks of history: mostly one operation each, one in five with two or three. */
async function history(blocks: number) {
  for (let b = 0; b < blocks; b++) {
    if (random() < 0.2) {
      // Several transactions in one block: fresh mints and one operation (independent of each other).
      await chain.clients.test.setAutomine(false)
      try {
        const collection = pick([apes, birds])
        const hashes = [
          await send(collection, 'TestNFT', 'mint', [pick(wallets), fresh721(collection)]),
          await operation(),
          await send(editions, 'TestEditions', 'mint', [pick(wallets), pick(IDS_1155), amount(3n)]),
        ]
        await chain.clients.test.mine({ blocks: 1 })
        for (const hash of hashes) await chain.clients.public.waitForTransactionReceipt({ hash })
      } finally {
        await chain.clients.test.setAutomine(true)
      }
    } else {
      await chain.clients.public.waitForTransactionReceipt({ hash: await operation() })
    }
  }
}

/** Waits until the indexer holds the head and the API's snapshot of indexer_state is fresh. */
async function settle() {
  await waitForIndexed(db.pool, chain.clients)
  api.refresh()
}

/** Empty blocks until every block with activity is confirmed, then waits for verification. */
async function confirmAll(): Promise<bigint> {
  await chain.clients.test.mine({ blocks: Number(CONFIRMATIONS) + 1 })
  await waitForVerified(db.pool, chain, CONFIRMATIONS)
  api.refresh()
  return confirmedHead()
}

async function confirmedHead(): Promise<bigint> {
  const { rows } = await db.pool.query('SELECT last_confirmed_block::text AS b FROM indexer_state')
  return BigInt(rows[0].b)
}

// ───────────────────────────── the chain's answers ─────────────────────────────

interface ChainState {
  /** ERC-721 owner per `collection:id`, only of tokens held at the block. */
  owners: Map<string, string>
  /** ERC-721 ids minted at or before the block, per `collection:id`. */
  minted: Set<string>
  /** ERC-1155 balance per `id:holder`, positive only. */
  balances: Map<string, bigint>
}

/** What the chain says at block `at`: ownerOf for every ERC-721 id ever used, balanceOfBatch for every pair. */
async function chainStateAt(at: bigint, logs: ChainTransfer[]): Promise<ChainState> {
  const owners = new Map<string, string>()
  const minted = new Set<string>()
  for (const t of logs)
    if (t.amount === null && t.from === ZERO && BigInt(t.blockNumber) <= at)
      minted.add(`${t.collection}:${t.tokenId}`)
  for (const collection of [apes, birds]) {
    for (const id of ids721.get(collection)!) {
      try {
        const owner = await chain.clients.public.readContract({
          address: collection,
          abi: erc721Abi,
          functionName: 'ownerOf',
          args: [id],
          blockNumber: at,
        })
        owners.set(`${collection}:${id}`, lower(owner))
      } catch {
        // Reverts: not minted yet at this block, or burned.
      }
    }
  }
  const pairs = wallets.flatMap((w) => IDS_1155.map((id) => [w, id] as const))
  const values = await chain.clients.public.readContract({
    address: editions,
    abi: erc1155Abi,
    functionName: 'balanceOfBatch',
    args: [pairs.map(([w]) => w), pairs.map(([, id]) => id)],
    blockNumber: at,
  })
  const balances = new Map<string, bigint>()
  pairs.forEach(([w, id], i) => {
    if (values[i]! > 0n) balances.set(`${id}:${lower(w)}`, values[i]!)
  })
  return { owners, minted, balances }
}

interface Holder {
  owner: string
  token_count: number
  balance?: string
}

/** A collection's holders as the chain has them: token_count desc, then owner (bytewise). */
function expectedHolders(state: ChainState, collection: Address): Holder[] {
  const counts = new Map<string, { n: number; balance: bigint }>()
  if (collection === editions) {
    for (const [key, balance] of state.balances) {
      const owner = key.split(':')[1]!
      const c = counts.get(owner) ?? { n: 0, balance: 0n }
      counts.set(owner, { n: c.n + 1, balance: c.balance + balance })
    }
  } else {
    for (const [key, owner] of state.owners) {
      if (!key.startsWith(`${collection}:`)) continue
      const c = counts.get(owner) ?? { n: 0, balance: 0n }
      counts.set(owner, { n: c.n + 1, balance: 0n })
    }
  }
  return [...counts]
    .map(([owner, c]) =>
      collection === editions
        ? { owner, token_count: c.n, balance: c.balance.toString() }
        : { owner, token_count: c.n },
    )
    .sort((x, y) => y.token_count - x.token_count || (x.owner < y.owner ? -1 : 1))
}

/** A wallet's holdings as `collection:id:balance`, in the API's order (collection, then numeric id). */
function expectedHoldings(state: ChainState, wallet: Address, withMulti: boolean): string[] {
  const out: Array<{ collection: string; id: bigint; balance: string }> = []
  // The zero address holds the burned ERC-721 tokens: minted by the block, no owner at it.
  const held =
    lower(wallet) === ZERO
      ? [...state.minted].filter((key) => !state.owners.has(key))
      : [...state.owners].filter(([, owner]) => owner === lower(wallet)).map(([key]) => key)
  for (const key of held) {
    const [collection, id] = key.split(':')
    out.push({ collection: collection!, id: BigInt(id!), balance: '1' })
  }
  if (withMulti)
    for (const [key, balance] of state.balances) {
      const [id, owner] = key.split(':')
      if (owner === lower(wallet))
        out.push({ collection: editions, id: BigInt(id!), balance: balance.toString() })
    }
  out.sort((x, y) =>
    x.collection !== y.collection
      ? x.collection < y.collection
        ? -1
        : 1
      : x.id < y.id
        ? -1
        : x.id > y.id
          ? 1
          : 0,
  )
  return out.map((h) => `${h.collection}:${h.id}:${withMulti ? h.balance : ''}`)
}

// ───────────────────────────── the API's answers ─────────────────────────────

// biome-ignore lint/suspicious/noExplicitAny: JSON bodies
type Json = any

async function call(path: string): Promise<{ status: number; body: Json; text: string }> {
  const res = await api.request(path)
  const text = await res.text()
  return { status: res.status, body: JSON.parse(text), text }
}

async function ok(path: string): Promise<Json> {
  const reply = await call(path)
  expect(reply.status, note(`${path}: ${reply.text}`)).toBe(200)
  return reply.body
}

/**
 * Every item of a list, following next_page_params as a client does (its values replace the
 * request's parameters of the same name); each page's cursor is checked by `onPage`.
 */
async function walk(path: string, onPage?: (params: Record<string, unknown>) => void): Promise<Json[]> {
  const items: Json[] = []
  const [pathname, search] = path.split('?') as [string, string | undefined]
  const query = new URLSearchParams(search)
  for (let pages = 0; pages < 500; pages++) {
    const body = await ok(`${pathname}?${query}`)
    items.push(...body.data)
    if (!body.pagination.has_more) return items
    onPage?.(body.pagination.next_page_params)
    for (const [k, v] of Object.entries(body.pagination.next_page_params)) query.set(k, String(v))
  }
  throw new Error(`${path}: more than 500 pages`)
}

/** A snapshot list: each next_page_params carries at_block, so the cursor stays on the block. */
const walkAt = (path: string, at: bigint) =>
  walk(`${path}${path.includes('?') ? '&' : '?'}at_block=${at}&limit=${PAGE}`, (params) =>
    expect(String(params.at_block), note(`${path}: next_page_params.at_block`)).toBe(at.toString()),
  )

const holdersAt = async (collection: Address, at?: bigint): Promise<Holder[]> =>
  (
    await (at === undefined
      ? walk(`/v1/collections/${collection}/owners?limit=${PAGE}`)
      : walkAt(`/v1/collections/${collection}/owners`, at))
  ).map((h: Json) => ({ ...h }))

const holdingsAt = async (wallet: Address, at: bigint | undefined, withMulti: boolean, extra = '') => {
  const path = `/v1/owners/${wallet}/nfts?${withMulti ? 'standard=all' : ''}${extra}`
  const items = at === undefined ? await walk(`${path}&limit=${PAGE}`) : await walkAt(path, at)
  return items.map((n: Json) => `${n.collection_address}:${n.token_id}:${withMulti ? n.balance : ''}`)
}

/** An ERC-721 collection's holders at a block, computed the given way (not the one its estimated cost picks). */
async function holdersOneWay(collection: Address, at: bigint, arm: HoldersAtArm): Promise<Holder[]> {
  const { rows } = await db.pool.query(
    `SELECT coalesce(c.first_seen_block, c.deploy_block, 0)::text AS since, s.last_seen_block::text AS head
       FROM collections c, indexer_state s WHERE c.address = $1`,
    [collection],
  )
  const holders = await selectCollectionOwnersAt(db, {
    address: collection,
    block: at,
    multi: false,
    head: BigInt(rows[0].head),
    since: BigInt(rows[0].since),
    arm,
  })
  return holders.map((h) => ({ owner: h.owner, token_count: h.token_count }))
}

/** A wallet's holdings at a block computed the given way, as holdingsAt gives them. */
async function holdingsOneWay(wallet: Address, at: bigint, withMulti: boolean, arm: HoldingsAtArm) {
  const { rows } = await db.pool.query(
    'SELECT coalesce(coverage_start_block, 0)::text AS since, last_seen_block::text AS head FROM indexer_state',
  )
  const holdings = await selectOwnerHoldingsAt(db, {
    owner: wallet,
    block: at,
    standard: withMulti ? 'all' : 'ERC721',
    head: BigInt(rows[0].head),
    since: BigInt(rows[0].since),
    arm,
  })
  return holdings.map((h) => `${h.collection_address}:${h.token_id}:${withMulti ? h.balance : ''}`)
}

// ───────────────────────────── setup ─────────────────────────────

beforeAll(async () => {
  ;[chain, db] = await Promise.all([startTestChain(), createTestDatabase()])
  wallets = chain.accounts.slice(1, 7).map(lower) as Address[]
  apes = (await chain.deploy('TestNFT', ['Owner Apes', 'OAPE', ''])).address
  birds = (await chain.deploy('TestNFT', ['Owner Birds', 'OBRD', ''])).address
  editions = (await chain.deploy('TestEditions', ['ipfs://owner-editions/{id}.json'])).address
  ids721.set(apes, [])
  ids721.set(birds, [])
  // Before the indexer starts: backfilled.
  await history(40)
  indexer = startIndexer(
    testConfig({
      DATABASE_URL: db.url,
      RPC_URL: chain.anvil.rpcUrl,
      CONFIRMATIONS: CONFIRMATIONS.toString(),
    }),
    db.pool,
    { metadata: { enabled: false } },
  )
  api = await startApiServer(db.url)
  await waitForIndexed(db.pool, chain.clients)
}, 180_000)

afterAll(async () => {
  await api?.close()
  await indexer?.stop()
  await chain?.stop()
  await db?.drop()
})

// ───────────────────────────── the tests ─────────────────────────────

/** Every snapshot answer at `at` (holders of each collection, each wallet's holdings), as JSON text. */
async function snapshotAnswers(at: bigint): Promise<string> {
  const answers: Record<string, unknown> = {}
  for (const c of [apes, birds, editions]) answers[c] = await holdersAt(c, at)
  for (const w of wallets) answers[w] = await holdingsAt(w, at, true)
  return JSON.stringify(answers)
}

/** Reorganises the last `depth` blocks (all unconfirmed) with other activity; checks answers at confirmed blocks stay. */
async function reorganise(depth: number) {
  await waitForVerified(db.pool, chain, CONFIRMATIONS)
  api.refresh()
  const confirmed = await confirmedHead()
  const head = await chain.head()
  expect(head - confirmed, 'the reorganised blocks are unconfirmed').toBe(CONFIRMATIONS)
  expect(BigInt(depth)).toBeLessThanOrEqual(CONFIRMATIONS)
  const before = await snapshotAnswers(confirmed)
  const earlier = await snapshotAnswers(confirmed - 5n)
  // A block the reorganisation will replace is not served yet.
  const refused = await call(`/v1/collections/${apes}/owners?at_block=${head}`)
  expect(refused.status, refused.text).toBe(400)
  const result = await reorgChain(chain.clients, {
    depth,
    accounts: chain.accounts,
    sendReplacementTransactions: async () => {
      // Other activity in each new block: a fresh mint, a move of a held token, an ERC-1155 transfer.
      const collection = pick([apes, birds])
      await send(collection, 'TestNFT', 'mint', [pick(wallets), fresh721(collection)])
      const held = await heldToken()
      if (held) await send(held.collection, 'TestNFT', 'move', [held.owner, pick(wallets), held.id])
      const edition = await heldEdition()
      if (edition)
        await send(
          editions,
          'TestEditions',
          'safeTransferFrom',
          [edition.holder, pick(wallets), edition.id, edition.balance, '0x'],
          edition.holder,
        )
    },
  })
  replacedBlocks.push(...result.replaced.map((r) => r.number))
  await settle()
  expect(
    await snapshotAnswers(confirmed),
    note(`answers at confirmed block ${confirmed} after a reorg`),
  ).toBe(before)
  expect(
    await snapshotAnswers(confirmed - 5n),
    note(`answers at block ${confirmed - 5n} after a reorg`),
  ).toBe(earlier)
}

describe('ownership views against the chain', () => {
  it('follows the head through two reorganisations; answers at confirmed blocks never change', async () => {
    await history(25)
    await reorganise(2)
    await history(15)
    await reorganise(3)
    await history(15)
    expect(replacedBlocks).toHaveLength(5)
  }, 240_000)

  it('at a dozen past confirmed blocks: holders, holdings and single tokens equal the chain read at that block', async () => {
    const confirmed = await confirmAll()
    const logs = await chainTransfers(chain.clients, {
      standard: [apes, birds],
      legacy: [],
      multi: [editions],
    })
    const firstActivity = BigInt(logs[0]!.blockNumber)
    // The block before any activity, blocks the reorganisations replaced, spread blocks, the confirmed head.
    const blocks = new Set<bigint>([
      firstActivity - 1n,
      firstActivity,
      confirmed,
      ...replacedBlocks.slice(0, 3),
    ])
    for (let i = 1; blocks.size < 12; i++)
      blocks.add(firstActivity + ((confirmed - firstActivity) * BigInt(i)) / 8n)
    expect(blocks.size).toBe(12)
    let holdersSeen = 0
    let burnedSeen = 0
    let burnedListed = 0
    let editionsSeen = 0
    for (const at of [...blocks].sort((a, b) => (a < b ? -1 : 1))) {
      const state = await chainStateAt(at, logs)
      for (const collection of [apes, birds, editions]) {
        const expected = expectedHolders(state, collection)
        holdersSeen += expected.length
        expect(await holdersAt(collection, at), note(`holders of ${collection} at block ${at}`)).toEqual(
          expected,
        )
        if (collection !== editions)
          for (const arm of ['forward', 'back', 'per-token'] as const)
            expect(
              await holdersOneWay(collection, at, arm),
              note(`holders of ${collection} at block ${at}, ${arm}`),
            ).toEqual(expected)
      }
      burnedListed += expectedHoldings(state, ZERO, false).length
      // The zero address: its holdings at a block are the tokens burned by then.
      for (const wallet of [...wallets, ZERO]) {
        expect(
          await holdingsAt(wallet, at, false),
          note(`ERC-721 holdings of ${wallet} at block ${at}`),
        ).toEqual(expectedHoldings(state, wallet, false))
        const all = expectedHoldings(state, wallet, true)
        expect(await holdingsAt(wallet, at, true), note(`all holdings of ${wallet} at block ${at}`)).toEqual(
          all,
        )
        for (const arm of ['forward', 'back'] as const) {
          expect(
            await holdingsOneWay(wallet, at, false, arm),
            note(`ERC-721 holdings of ${wallet} at block ${at}, ${arm}`),
          ).toEqual(expectedHoldings(state, wallet, false))
          expect(
            await holdingsOneWay(wallet, at, true, arm),
            note(`all holdings of ${wallet} at block ${at}, ${arm}`),
          ).toEqual(all)
        }
        // With `collection=` (two of the three): the snapshot's pages of those collections only.
        expect(
          await holdingsAt(wallet, at, true, `&collection=${editions}&collection=${birds}`),
          note(`holdings of ${wallet} in two collections at block ${at}`),
        ).toEqual(all.filter((h) => !h.startsWith(`${apes}:`)))
      }
      for (const collection of [apes, birds]) {
        for (const id of ids721.get(collection)!) {
          const key = `${collection}:${id}`
          const reply = await call(`/v1/nfts/${collection}/${id}?at_block=${at}`)
          const owner = state.owners.get(key)
          if (owner) {
            expect(reply.status, note(`${key} at ${at}: ${reply.text}`)).toBe(200)
            expect(
              { owner: reply.body.data?.current_owner, burned: reply.body.data?.is_burned },
              note(`${key} at ${at}`),
            ).toEqual({ owner, burned: false })
          } else if (state.minted.has(key)) {
            burnedSeen++
            expect(reply.status, note(`${key} at ${at} (burned): ${reply.text}`)).toBe(200)
            expect(
              { owner: reply.body.data?.current_owner, burned: reply.body.data?.is_burned },
              note(`${key} at ${at}`),
            ).toEqual({ owner: ZERO, burned: true })
          } else {
            expect(reply.status, note(`${key} at ${at} (not minted yet): ${reply.text}`)).toBe(404)
            expect(reply.body.error.code).toBe('NOT_FOUND')
          }
          if (reply.status === 200)
            expect(reply.body.data.transfer_count, note(`${key} at ${at}: transfer_count`)).toBe(
              logs.filter((t) => `${t.collection}:${t.tokenId}` === key && BigInt(t.blockNumber) <= at)
                .length,
            )
        }
      }
      // ERC-1155 ids (with `standard`): supply, holders and the sole holder at the block.
      for (const id of IDS_1155) {
        const reply = await call(`/v1/nfts/${editions}/${id}?at_block=${at}&standard=all`)
        const rows = logs.filter(
          (t) => t.collection === editions && t.tokenId === id.toString() && BigInt(t.blockNumber) <= at,
        )
        if (rows.length === 0) {
          expect(reply.status, note(`${editions}:${id} at ${at} (not minted yet): ${reply.text}`)).toBe(404)
          continue
        }
        const held = [...state.balances].filter(([k]) => k.startsWith(`${id}:`))
        const supply = held.reduce((sum, [, b]) => sum + b, 0n)
        if (held.length > 1) editionsSeen++
        expect(reply.status, note(`${editions}:${id} at ${at}: ${reply.text}`)).toBe(200)
        expect(
          {
            total_supply: reply.body.data.total_supply,
            holder_count: reply.body.data.holder_count,
            is_burned: reply.body.data.is_burned,
            current_owner: reply.body.data.current_owner,
            transfer_count: reply.body.data.transfer_count,
          },
          note(`${editions}:${id} at ${at}`),
        ).toEqual({
          total_supply: supply.toString(),
          holder_count: held.length,
          is_burned: supply === 0n,
          current_owner: held.length === 1 ? held[0]![0].split(':')[1] : null,
          transfer_count: rows.length,
        })
      }
    }
    // Not vacuous: the blocks saw holders and burned tokens.
    expect(holdersSeen).toBeGreaterThan(100)
    expect(burnedSeen).toBeGreaterThan(0)
    expect(burnedListed).toBeGreaterThan(0)
    expect(editionsSeen).toBeGreaterThan(12)
  }, 300_000)

  it('without at_block: holders, holdings, collections and transfers equal the chain now', async () => {
    const head = await chain.head()
    const logs = await chainTransfers(chain.clients, {
      standard: [apes, birds],
      legacy: [],
      multi: [editions],
    })
    const state = await chainStateAt(head, logs)
    for (const wallet of wallets)
      expect(await holdingsAt(wallet, undefined, true), note(`holdings of ${wallet}`)).toEqual(
        expectedHoldings(state, wallet, true),
      )
    for (const collection of [apes, birds, editions])
      expect(await holdersAt(collection), note(`holders of ${collection}`)).toEqual(
        expectedHolders(state, collection),
      )
    for (const wallet of wallets) {
      // With `collection=`: one collection, then two (the others' tokens are left out).
      const all = expectedHoldings(state, wallet, true)
      expect(await holdingsAt(wallet, undefined, true, `&collection=${birds}`)).toEqual(
        all.filter((h) => h.startsWith(`${birds}:`)),
      )
      expect(await holdingsAt(wallet, undefined, true, `&collection=${editions}&collection=${apes}`)).toEqual(
        all.filter((h) => !h.startsWith(`${birds}:`)),
      )

      // The wallet's collections: address order, token_count (and balance on the ERC-1155).
      const expectedCollections = [apes, birds, editions]
        .sort()
        .flatMap((c) =>
          expectedHolders(state, c)
            .filter((h) => h.owner === wallet)
            .map((h) => ({ c, h })),
        )
        .map(({ c, h }) => ({
          address: c,
          contract_type: c === editions ? 'ERC1155' : 'ERC721',
          token_count: h.token_count,
          balance: h.balance,
        }))
      const collections = await walk(`/v1/owners/${wallet}/collections?limit=1`)
      expect(
        collections.map((c: Json) => ({
          address: c.collection?.address ?? c.collection_address,
          contract_type: c.collection?.contract_type ?? c.contract_type,
          token_count: c.token_count,
          balance: c.balance,
        })),
        note(`collections of ${wallet}`),
      ).toEqual(expectedCollections)

      // The wallet's transfers: in and out, a self-transfer once, newest first (reverse chain order).
      const mine = logs
        .filter((t) => t.from === wallet || t.to === wallet)
        .map((t) => `${t.id}:${t.amount ?? '1'}`)
        .reverse()
      // ERC-721 rows carry amount '1', as in the other transfer lists' extended shape.
      const identity = (t: Json) => `${t.transaction_hash}:${t.log_index}:${t.batch_index}:${t.amount}`
      const transfers = await walk(`/v1/owners/${wallet}/transfers?limit=7`)
      expect(transfers.map(identity), note(`transfers of ${wallet}`)).toEqual(mine)
      // One direction: received (to = wallet) or sent (from = wallet); a self-transfer is both.
      for (const direction of ['in', 'out'] as const) {
        const expected = logs
          .filter((t) => (direction === 'in' ? t.to : t.from) === wallet)
          .map((t) => `${t.id}:${t.amount ?? '1'}`)
          .reverse()
        const listed = await walk(`/v1/owners/${wallet}/transfers?direction=${direction}&limit=7`)
        expect(listed.map(identity), note(`transfers ${direction} of ${wallet}`)).toEqual(expected)
      }
      expect(mine.length).toBeGreaterThan(5)
    }
  }, 180_000)

  it('a reorganisation deeper than CONFIRMATIONS: answers at the confirmed blocks it replaced follow the new chain', async () => {
    // Blocks of activity, then CONFIRMATIONS empty ones: the last activity block is the confirmed head.
    await history(4)
    await chain.clients.test.mine({ blocks: Number(CONFIRMATIONS) })
    await waitForVerified(db.pool, chain, CONFIRMATIONS)
    api.refresh()
    const at = await confirmedHead()
    expect(at, 'the confirmed head is the last activity block').toBe((await chain.head()) - CONFIRMATIONS)
    const logsBefore = await chainTransfers(chain.clients, {
      standard: [apes, birds],
      legacy: [],
      multi: [editions],
    })
    // Served (and kept by the web process) before the reorganisation.
    const before = await snapshotAnswers(at)
    expect(await holdersAt(apes, at)).toEqual(expectedHolders(await chainStateAt(at, logsBefore), apes))
    // Replaces the three activity blocks up to `at`, confirmed and verified, and the empty ones after.
    await reorgChain(chain.clients, {
      depth: Number(CONFIRMATIONS) + 3,
      accounts: chain.accounts,
      sendReplacementTransactions: async () => {
        // A fresh mint in each new block: every collection's holders at `at` differ from before.
        for (const collection of [apes, birds])
          await send(collection, 'TestNFT', 'mint', [pick(wallets), fresh721(collection)])
        await send(editions, 'TestEditions', 'mint', [pick(wallets), pick(IDS_1155), amount(3n)])
      },
    })
    await chain.clients.test.mine({ blocks: Number(CONFIRMATIONS) })
    await waitForVerified(db.pool, chain, CONFIRMATIONS)
    api.refresh()
    expect(await confirmedHead(), 'the replaced blocks are confirmed again').toBeGreaterThanOrEqual(at)
    const logs = await chainTransfers(chain.clients, {
      standard: [apes, birds],
      legacy: [],
      multi: [editions],
    })
    const state = await chainStateAt(at, logs)
    for (const collection of [apes, birds, editions])
      expect(
        await holdersAt(collection, at),
        note(`holders of ${collection} at block ${at} after a reorganisation replaced it`),
      ).toEqual(expectedHolders(state, collection))
    for (const wallet of wallets)
      expect(
        await holdingsAt(wallet, at, true),
        note(`holdings of ${wallet} at block ${at} after a reorganisation replaced it`),
      ).toEqual(expectedHoldings(state, wallet, true))
    // Not vacuous: the block's answers did change.
    expect(await snapshotAnswers(at)).not.toBe(before)
  }, 180_000)

  it('refuses an at_block past the confirmed head (or malformed) with 400 naming the range', async () => {
    const confirmed = await confirmedHead()
    for (const path of [
      `/v1/collections/${apes}/owners`,
      `/v1/owners/${wallets[0]}/nfts`,
      `/v1/nfts/${apes}/${ids721.get(apes)![0]}`,
    ]) {
      const past = await call(`${path}?at_block=${confirmed + 1n}`)
      expect(past.status, past.text).toBe(400)
      expect(past.body.error.code).toBe('INVALID_ARGUMENT')
      const message = past.body.error.message as string
      expect(message).toContain(String(confirmed + 1n))
      expect(message.replaceAll(',', '')).toContain(`${confirmed}`)
      for (const bad of ['-1', 'abc', '1.5', (2n ** 63n + 1n).toString()]) {
        const reply = await call(`${path}?at_block=${bad}`)
        expect(reply.status, `${path}?at_block=${bad}: ${reply.text}`).toBe(400)
        expect(reply.body.error.code).toBe('INVALID_ARGUMENT')
      }
    }
  })
})
