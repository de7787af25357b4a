import type pg from 'pg'
import { type Address, type Hex, toHex } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import { startTestChain, type TestChain } from './chain'
import { startJsonRpcServer, type TestServer } from './http-server'
import { startIndexer, testConfig } from './indexer'
import { expectDatabaseMatchesChain, waitFor, waitForIndexed } from './oracle'

let chain: TestChain
let db: TestDatabase
const c: Record<string, Address> = {}

const TRANSFER_TOPIC = 'ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef'

/**
 * Init code of an old token: emits the legacy Transfer(0, `to`, 7) (1 topic, 96 bytes of data),
 * then deploys the one-byte runtime 0xfe (INVALID), so every call halts without a revert, as
 * contracts compiled before Solidity 0.4.10 answer an unknown function (anvil: -32603 "EVM error").
 */
function legacyEmitterThatHalts(to: Hex): Hex {
  const addr = to.slice(2).toLowerCase().padStart(40, '0')
  return `0x${[
    `73${addr}`, // PUSH20 to
    '602052', // PUSH1 0x20 MSTORE: word 1 is `to`, word 0 (from) stays zero
    '6007604052', // PUSH1 7 PUSH1 0x40 MSTORE: word 2 is the value
    `7f${TRANSFER_TOPIC}`, // PUSH32 topic0
    '60606000a1', // PUSH1 0x60 PUSH1 0 LOG1
    '60fe600053', // PUSH1 0xfe PUSH1 0 MSTORE8
    '60016000f3', // PUSH1 1 PUSH1 0 RETURN
  ].join('')}` as Hex
}

beforeAll(async () => {
  ;[chain, db] = await Promise.all([startTestChain(), createTestDatabase()])
  const [alice, bob, carol] = chain.accounts
  c.nft = (await chain.deploy('TestNFT', ['Test Apes', 'TAPE', 'http://127.0.0.1:9/meta/'])).address
  c.consecutive = (
    await chain.deploy('TestConsecutive', [
      [alice, bob],
      [5n, 3n],
    ])
  ).address
  c.legacy = (await chain.deploy('LegacyKitties')).address
  c.erc20 = (await chain.deploy('DecoyToken')).address
  c.legacyErc20 = (await chain.deploy('LegacyDecoyToken')).address

  await chain.call(c.nft, 'TestNFT', 'mint', [alice, 1n])
  await chain.call(c.nft, 'TestNFT', 'mint', [alice, 2n ** 256n - 1n])
  await chain.call(c.nft, 'TestNFT', 'mintBatch', [bob, 100n, 10n])
  await chain.call(c.nft, 'TestNFT', 'move', [alice, carol, 1n])
  await chain.call(c.nft, 'TestNFT', 'burn', [100n])
  await chain.call(c.consecutive, 'TestConsecutive', 'move', [alice, carol, 0n])
  await chain.call(c.consecutive, 'TestConsecutive', 'burn', [6n])
  await chain.call(c.legacy, 'LegacyKitties', 'birth', [alice, 7n])
  await chain.call(c.legacy, 'LegacyKitties', 'transfer', [bob, 7n], alice)
  await chain.call(c.erc20, 'DecoyToken', 'mint', [alice, 10n ** 18n])
  await chain.call(c.legacyErc20, 'LegacyDecoyToken', 'mint', [alice, 5n])
  const hash = await chain.clients.wallet.sendTransaction({
    account: alice!,
    data: legacyEmitterThatHalts(alice!),
    chain: null,
  })
  c.haltingToken = (await chain.clients.public.waitForTransactionReceipt({ hash })).contractAddress!
  await chain.call(c.nft, 'TestNFT', 'mint', [alice, 3n])
}, 120_000)

afterAll(async () => {
  await chain?.stop()
  await db?.drop()
})

type RelayItem = { id: number; method: string; params: unknown[] }
type RelayAnswer = { id: number; result?: string }

/**
 * A JSON-RPC relay in front of the test node: `seen` is told of every HTTP request's
 * items, `rewrite` may change the node's answer to each item before it is sent on.
 */
function startRelay(
  options: {
    seen?: (items: RelayItem[]) => void
    rewrite?: (item: RelayItem, answer: RelayAnswer) => void
  } = {},
) {
  return startJsonRpcServer<RelayItem | RelayItem[]>(async (body, res) => {
    const items = Array.isArray(body) ? body : [body]
    options.seen?.(items)
    const upstream = await fetch(chain.anvil.rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    const answers = (await upstream.json()) as RelayAnswer | RelayAnswer[]
    const list = Array.isArray(answers) ? answers : [answers]
    for (const item of items) options.rewrite?.(item, list.find((a) => a.id === item.id)!)
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answers))
  })
}

/**
 * Runs `body` against an indexer that reads the chain through `relay` (with `honest`, the
 * node itself as a second endpoint) into a fresh database; then stops it and drops both.
 */
async function withRelayedIndexer(
  relay: TestServer,
  body: (pool: pg.Pool) => Promise<void>,
  options: { honest?: boolean; metadata?: boolean } = {},
) {
  const fresh = await createTestDatabase()
  const config = testConfig({
    DATABASE_URL: fresh.url,
    RPC_URL: options.honest ? `${relay.origin},${chain.anvil.rpcUrl}` : relay.origin,
  })
  const indexer = startIndexer(config, fresh.pool, { metadata: { enabled: options.metadata ?? true } })
  try {
    await body(fresh.pool)
  } finally {
    await indexer.stop()
    await relay.close()
    await fresh.drop()
  }
}

/** The database equals the chain for every NFT contract the chain has. */
const expectIndexMatchesChain = (pool: pg.Pool) =>
  expectDatabaseMatchesChain(pool, chain.clients, {
    standard: [c.nft!, c.consecutive!],
    legacy: [c.legacy!],
  })

/** The endpoints' states as the indexer last recorded them. */
const recordedEndpoints = async (pool: pg.Pool) =>
  (await pool.query('SELECT rpc_endpoints FROM indexer_state')).rows[0]?.rpc_endpoints as
    | Array<{ endpoint: number; state: string; head: string }>
    | undefined

describe('sync', () => {
  it('indexes every ERC-721 shape and nothing else, matching the chain', async () => {
    const config = testConfig({ DATABASE_URL: db.url, RPC_URL: chain.anvil.rpcUrl })
    const indexer = startIndexer(config, db.pool, { metadata: { enabled: false } })
    try {
      await waitForIndexed(db.pool, chain.clients)
      await expectIndexMatchesChain(db.pool)
      const { rows } = await db.pool.query('SELECT address, standard FROM collections ORDER BY address')
      expect(rows).toEqual(
        [
          { address: c.nft, standard: 'ERC721' },
          { address: c.consecutive, standard: 'ERC721' },
          { address: c.legacy, standard: 'ERC721_LEGACY' },
        ].sort((a, b) => a.address!.localeCompare(b.address!)),
      )
      const rejected = await db.pool.query('SELECT address FROM non_nft_contracts')
      // A contract whose calls halt without a revert is not an NFT either (it stopped the index before).
      expect(rejected.rows.map((r) => r.address).sort()).toEqual(
        [c.legacyErc20!, c.haltingToken!.toLowerCase()].sort(),
      )
      const max = await db.pool.query('SELECT token_id::text FROM tokens WHERE token_id = 2^256 - 1::numeric')
      expect(max.rows).toEqual([{ token_id: (2n ** 256n - 1n).toString() }])
    } finally {
      await indexer.stop()
    }
  })

  it('follows a new block in two round trips: its header is read with the head, its logs next', async () => {
    // A recording relay in front of the node: every HTTP request's JSON-RPC items, in order.
    const requests: RelayItem[][] = []
    const relay = await startRelay({ seen: (items) => requests.push(items) })
    await withRelayedIndexer(
      relay,
      async (pool) => {
        await waitForIndexed(pool, chain.clients)
        const block = await chain.call(c.nft!, 'TestNFT', 'mint', [chain.accounts[3], 555n])
        await waitForIndexed(pool, chain.clients)
        const hash = (await chain.clients.public.getBlock({ blockNumber: block })).hash
        const readsHeader = (r: RelayItem[]) =>
          r.some((i) => i.method === 'eth_getBlockByNumber' && i.params[0] === toHex(block))
        const readsLogs = (r: RelayItem[]) =>
          r.some(
            (i) => i.method === 'eth_getLogs' && (i.params[0] as { blockHash?: string }).blockHash === hash,
          )
        const logs = requests.findIndex(readsLogs)
        // The request before the one that reads the new block's logs (by hash) is the poll that
        // found it, with its header: no round trip for the header alone.
        expect(requests[logs - 1]!.map((i) => i.method)).toContain('eth_blockNumber')
        expect(readsHeader(requests[logs - 1]!)).toBe(true)
      },
      { metadata: false },
    )
  })

  it.each([
    ['the only endpoint', false],
    ['one of two endpoints', true],
  ])(
    'takes a head only from a block a node serves: %s saying on every poll a head far ahead changes nothing',
    async (_, withHonest) => {
      // From some poll on, while the indexer follows the head, every eth_blockNumber answer says a
      // million blocks more (a backend of another network behind the load balancer); no node has them.
      let polls = 0
      const relay = await startRelay({
        rewrite: (item, answer) => {
          if (item.method !== 'eth_blockNumber' || ++polls < 12) return
          answer.result = `0x${(BigInt(answer.result!) + 1_000_000n).toString(16)}`
        },
      })
      await withRelayedIndexer(
        relay,
        async (pool) => {
          await waitForIndexed(pool, chain.clients)
          await waitFor(async () => polls >= 12, 20_000, 'the first claim')
          // The indexer still follows the chain, and its head is the chain's.
          await chain.call(c.nft!, 'TestNFT', 'mint', [chain.accounts[3], withHonest ? 557n : 556n])
          await waitForIndexed(pool, chain.clients, 20_000)
          await expectIndexMatchesChain(pool)
          const { rows } = await pool.query(
            'SELECT last_seen_block::text AS seen, last_confirmed_block::text AS confirmed FROM indexer_state',
          )
          const head = await chain.head()
          expect(BigInt(rows[0].seen)).toBe(head)
          expect(BigInt(rows[0].confirmed)).toBeLessThanOrEqual(head)
          // The endpoint that claims blocks it does not serve shows as failing, with the head it
          // serves (written with the poll: the other endpoint's head may be a poll behind).
          const endpoint = (n: number, state: string) => ({ endpoint: n, state, head: head.toString() })
          const expected = withHonest ? [endpoint(1, 'failing'), endpoint(2, 'ok')] : [endpoint(1, 'failing')]
          await expect.poll(() => recordedEndpoints(pool), { timeout: 5_000 }).toEqual(expected)
        },
        { honest: withHonest, metadata: false },
      )
    },
  )

  it.each([
    ['the only endpoint', false],
    ['one of two endpoints', true],
  ])(
    'stops using %s while it answers another chain id, and uses it again once it answers CHAIN_ID',
    async (_, withHonest) => {
      // A relay in front of the node that, while `otherChain` is set, says it serves chain 999.
      let otherChain = false
      let readsWhileOther = 0
      const relay = await startRelay({
        seen: (items) => {
          if (otherChain && items.some((i) => i.method !== 'eth_chainId' && i.method !== 'eth_blockNumber'))
            readsWhileOther++
        },
        rewrite: (item, answer) => {
          if (item.method === 'eth_chainId' && otherChain) answer.result = '0x3e7'
        },
      })
      await withRelayedIndexer(
        relay,
        async (pool) => {
          const indexed = async () =>
            BigInt((await pool.query('SELECT last_indexed_block::text AS n FROM indexer_state')).rows[0].n)
          await waitForIndexed(pool, chain.clients)
          otherChain = true
          await waitFor(
            async () => (await recordedEndpoints(pool))![0]!.state === 'failing',
            10_000,
            'the endpoint shown failing',
          )
          const mark = readsWhileOther
          const minted = await chain.call(c.nft!, 'TestNFT', 'mint', [
            chain.accounts[3],
            withHonest ? 559n : 558n,
          ])
          if (withHonest) {
            // Followed through the other endpoint; nothing but its chain id and head asked of this one.
            await waitForIndexed(pool, chain.clients, 20_000)
            expect(readsWhileOther).toBe(mark)
          } else {
            // Nothing is read from a node of another chain: the index waits.
            await new Promise((r) => setTimeout(r, 1_500))
            expect(await indexed()).toBeLessThan(minted)
          }
          otherChain = false
          await waitForIndexed(pool, chain.clients, 20_000)
          await waitFor(
            async () => (await recordedEndpoints(pool))!.every((e) => e.state === 'ok'),
            10_000,
            'every endpoint ok',
          )
          await expectIndexMatchesChain(pool)
        },
        { honest: withHonest },
      )
    },
  )

  it('records coverage: START_BLOCK onwards only, complete once confirmed, with the lag and deploy blocks', async () => {
    const later = await createTestDatabase()
    try {
      const mintBlock = await chain.call(c.nft!, 'TestNFT', 'mint', [chain.accounts[4], 77n])
      const head = await chain.head()
      const config = testConfig({
        DATABASE_URL: later.url,
        RPC_URL: chain.anvil.rpcUrl,
        START_BLOCK: String(mintBlock),
      })
      const indexer = startIndexer(config, later.pool)
      try {
        await waitForIndexed(later.pool, chain.clients)
        await waitFor(async () => {
          const { rows } = await later.pool.query(
            "SELECT 1 FROM collections WHERE metadata_status <> 'pending'",
          )
          return rows.length > 0
        })
      } finally {
        await indexer.stop()
      }
      const transfers = await later.pool.query('SELECT token_id::text, block_number::int FROM transfers')
      expect(transfers.rows).toEqual([{ token_id: '77', block_number: Number(mintBlock) }])
      const state = await later.pool.query(
        `SELECT coverage_status, coverage_start_block::int, last_seen_block::int, last_confirmed_block::int,
                last_indexed_block::int, coverage_verified_at IS NOT NULL AS verified FROM indexer_state`,
      )
      expect(state.rows).toEqual([
        {
          coverage_status: 'complete',
          coverage_start_block: Number(mintBlock),
          last_seen_block: Number(head),
          last_confirmed_block: Number(head) - 2,
          last_indexed_block: Number(head),
          verified: true,
        },
      ])
      // The collection predates START_BLOCK: its deploy block says so.
      const collection = await later.pool.query('SELECT deploy_block::int, name FROM collections')
      expect(collection.rows).toEqual([{ deploy_block: expect.any(Number), name: 'Test Apes' }])
      expect(collection.rows[0].deploy_block).toBeLessThan(Number(mintBlock))

      // START_BLOCK lowered to 0: the gap below is filled and joins the indexed range.
      const full = startIndexer({ ...config, START_BLOCK: 0 }, later.pool, { metadata: { enabled: false } })
      try {
        // Complete once the confirmed blocks are covered; the unconfirmed ones between the
        // filled gap and the range above follow a step later, and join it.
        await waitFor(async () => {
          const { rows } = await later.pool.query(
            `SELECT 1 FROM indexer_state WHERE coverage_status = 'complete' AND coverage_start_block = 0
                AND last_indexed_block = $1`,
            [Number(head)],
          )
          return rows.length > 0
        })
      } finally {
        await full.stop()
      }
      await expectIndexMatchesChain(later.pool)
      const ranges = await later.pool.query('SELECT from_block::int, to_block::int FROM indexed_ranges')
      expect(ranges.rows).toEqual([{ from_block: 0, to_block: Number(head) }])
    } finally {
      await later.drop()
    }
  })
})
