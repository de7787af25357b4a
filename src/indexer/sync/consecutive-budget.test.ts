/**
 * ERC-2309 ranges are capped per log and per block, and a range of blocks whose logs expand
 * to more rows than one block may is read again smaller (sync/fetch.ts; docs/indexer.md,
 * "Events"); unconfirmed blocks followed at the head are committed in as many steps as their
 * rows need. So logs each under the per-log cap, many in one block or spread over a few,
 * never exhaust the indexer's heap under the limits it runs with (src/indexer/bundle.ts:
 * 192 MiB old space): any contract could otherwise stop the index for good, since a
 * restarted process reads the same block again.
 */
import type { Address, Hex } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import { MAX_CONSECUTIVE_RANGE } from '../events/consecutive'
import { CONSECUTIVE_TRANSFER_TOPIC } from '../events/topics'
import { startTestChain, type TestChain } from '../test/chain'
import { type ChildIndexer, spawnIndexer } from '../test/child'

const PER_BLOCK = Number(MAX_CONSECUTIVE_RANGE)
/** Blocks within this many of the head are unconfirmed: followed one header at a time. */
const CONFIRMATIONS = 12
const word3 = (n: number) => n.toString(16).padStart(6, '0')

/** Init code emitting `logs` ConsecutiveTransfer mints to `to` of `perLog` tokens each (ids from 0); deploys no code. */
function consecutiveFlood(to: Hex, logs: number, perLog: number): Hex {
  const addr = to.slice(2).toLowerCase()
  let code = ''
  for (let i = 0; i < logs; i++) {
    const first = i * perLog
    code += `62${word3(first + perLog - 1)}600052` // PUSH3 toTokenId PUSH1 0 MSTORE
    code += `73${addr}` // topic3: to
    code += '6000' // topic2: from (zero: a mint)
    code += `62${word3(first)}` // topic1: fromTokenId
    code += `7f${CONSECUTIVE_TRANSFER_TOPIC.slice(2)}` // topic0
    code += '60206000a4' // PUSH1 32 PUSH1 0 LOG4
  }
  return `0x${code}00` as Hex
}

let chain: TestChain
let db: TestDatabase
let child: ChildIndexer | undefined

beforeAll(async () => {
  ;[chain, db] = await Promise.all([startTestChain(), createTestDatabase()])
}, 120_000)

afterAll(async () => {
  await child?.kill9()
  await chain?.stop()
  await db?.drop()
})

async function flood(logs: number, perLog: number): Promise<Address> {
  const [alice] = chain.accounts
  const hash = await chain.clients.wallet.sendTransaction({
    account: alice!,
    data: consecutiveFlood(alice!, logs, perLog),
    chain: null,
    gas: 5_000_000n,
  })
  const receipt = await chain.clients.public.waitForTransactionReceipt({ hash })
  expect(receipt.logs).toHaveLength(logs)
  return receipt.contractAddress!.toLowerCase() as Address
}

let exit: { code: number | null; signal: NodeJS.Signals | null } | null = null

/** Waits until the indexer has stored `block`, and checks it did so alive, its heap whole. */
async function expectIndexedAlive(block: bigint) {
  const deadline = Date.now() + 150_000
  let indexed = -1n
  while (Date.now() < deadline && exit === null) {
    const { rows } = await db.pool.query('SELECT last_indexed_block::text AS n FROM indexer_state')
    indexed = BigInt(rows[0]?.n ?? -1)
    if (indexed >= block) break
    await new Promise((r) => setTimeout(r, 500))
  }
  const heapDeath = child!.stderr.join('').match(/heap out of memory|Allocation failed[^\n]*/)?.[0] ?? null
  expect({ exit, heapDeath }).toEqual({ exit: null, heapDeath: null })
  expect(indexed).toBeGreaterThanOrEqual(block)
}

describe('ERC-2309 logs each under the per-log cap', () => {
  it('many in one block, or a few blocks of them: the indexer keeps its heap and moves past them', async () => {
    const [alice] = chain.accounts
    const nft = (await chain.deploy('TestNFT', ['Flood Apes', 'FAPE', ''])).address
    await chain.call(nft, 'TestNFT', 'mint', [alice, 1n])
    // Four logs just under the per-log cap in one block: the first fills the block's rows.
    const oneBlock = await flood(4, PER_BLOCK - 1)
    // Three blocks, each within the cap, together over it: their range is read again smaller.
    const spread = [await flood(1, 90_000), await flood(1, 90_000), await flood(1, 90_000)]
    const after = await chain.call(nft, 'TestNFT', 'mint', [alice, 2n])
    for (let i = 0; i < 3; i++) await chain.call(nft, 'TestNFT', 'mint', [alice, 10n + BigInt(i)])
    // Past the confirmations: the blocks above are backfilled (read by range).
    await chain.clients.test.mine({ blocks: CONFIRMATIONS })

    child = spawnIndexer({
      DATABASE_URL: db.url,
      RPC_URL: chain.anvil.rpcUrl,
      CONFIRMATIONS: String(CONFIRMATIONS),
      MEDIA_DIR: `/tmp/consecutive-budget-media-${process.pid}`,
      // The V8 limits the indexer process runs with (src/indexer/bundle.ts).
      NODE_OPTIONS: '--max-old-space-size=192 --max-semi-space-size=32',
    })
    child.exited.then((e) => {
      exit = e
    })
    await expectIndexedAlive(after)

    const { rows } = await db.pool.query<{ collection: string; tokens: number }>(
      `SELECT collection_address AS collection, count(*)::int AS tokens FROM transfers
        WHERE collection_address = ANY($1::varchar[]) GROUP BY 1`,
      [[oneBlock, ...spread]],
    )
    expect(new Map(rows.map((r) => [r.collection, r.tokens]))).toEqual(
      new Map([[oneBlock, PER_BLOCK - 1], ...spread.map((c) => [c, 90_000] as const)]),
    )
    expect(child.lines.some((l) => l.includes('its block already expands to the most rows'))).toBe(true)
    expect(child.lines.some((l) => l.includes('ERC-2309 rows: reading smaller ranges'))).toBe(true)
  }, 240_000)

  it('unconfirmed blocks that arrive together, each within the cap, together over it: committed in steps', async () => {
    // The indexer of the test above follows the head. It is paused while three blocks of 200,000
    // rows each are mined, all within the confirmations: one realtime step would read them together.
    const group = -child!.process.pid!
    process.kill(group, 'SIGSTOP')
    let floods: Address[]
    try {
      floods = [await flood(1, 200_000), await flood(1, 200_000), await flood(1, 200_000)]
    } finally {
      process.kill(group, 'SIGCONT')
    }
    await expectIndexedAlive(await chain.head())
    const { rows } = await db.pool.query<{ tokens: number }>(
      `SELECT count(*)::int AS tokens FROM transfers WHERE collection_address = ANY($1::varchar[])`,
      [floods],
    )
    expect(rows[0]!.tokens).toBe(600_000)
  }, 240_000)
})
