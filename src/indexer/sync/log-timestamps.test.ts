/**
 * A provider that lies about logs' `blockTimestamp` (a field geth, reth and anvil put in
 * every log). The block's header, where it was read and linked by hash, wins; elsewhere a
 * log's timestamp is taken only between its range's first and last headers (sync/fetch.ts).
 * So a followed block stores its header's time, a backfilled one never a time outside its
 * range nor out of the chain's order (a later block dated before an earlier one: folded in
 * that order, a transfer would come before the mint it follows), and a rollback, which finds the rows to delete by block time (store/rollback.ts
 * orphanedTransfers), removes every row of a block a reorganisation replaced.
 */
import type { Address, Hex } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { reorgChain } from '@/dev/devnet/reorg'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import { startTestChain, type TestChain } from '../test/chain'
import { type RunningIndexer, startIndexer, testConfig } from '../test/indexer'
import { expectDatabaseMatchesChain, waitFor, waitForIndexed } from '../test/oracle'
import { type JsonRpcItem, type RewritingRelay, startRewritingRelay } from '../test/rewriting-relay'

/** Block numbers whose logs the proxy dates to 1970-01-01T00:00:01Z, or to the time given. */
const lieAbout = new Map<number, Hex>()
const LIE: Hex = '0x1'

function rewriteLog(log: Record<string, unknown>) {
  const lie = typeof log.blockNumber === 'string' ? lieAbout.get(Number(log.blockNumber)) : undefined
  if (lie) log.blockTimestamp = lie
}

/** Honest but for the blockTimestamp of lieAbout's logs. */
function rewrite(request: JsonRpcItem, item: JsonRpcItem): JsonRpcItem {
  if (!Array.isArray(item.result)) return item
  if (request.method === 'eth_getLogs') for (const log of item.result) rewriteLog(log)
  if (request.method === 'eth_getBlockReceipts')
    for (const receipt of item.result as Array<{ logs?: Record<string, unknown>[] }>)
      for (const log of receipt.logs ?? []) rewriteLog(log)
  return item
}

let chain: TestChain
let db: TestDatabase
let proxy: RewritingRelay
let indexer: RunningIndexer
let nft: Address
/** The block the provider lies about: a mint of token 77 to carol, followed at the head. */
let lied: { number: bigint; hash: Hex; timestamp: bigint }
/** A block of the backfill the provider lies about. */
let backfilled: { number: bigint; timestamp: bigint }
/** A backfilled move of token 20 that the provider dates inside its range, before token 20's mint. */
let movedBack: { number: bigint; timestamp: bigint }

beforeAll(async () => {
  ;[chain, db] = await Promise.all([startTestChain(), createTestDatabase()])
  proxy = await startRewritingRelay(chain.anvil.rpcUrl, rewrite)
  nft = (await chain.deploy('TestNFT', ['Timestamp Apes', 'TAPE', ''])).address
  for (let i = 1n; i <= 4n; i++) {
    const block = await chain.call(nft, 'TestNFT', 'mint', [chain.accounts[0], i])
    // Token 2's block is backfilled in the middle of a range, with a lie about its time.
    if (i === 2n)
      backfilled = {
        number: block,
        timestamp: (await chain.clients.public.getBlock({ blockNumber: block })).timestamp,
      }
  }
  lieAbout.set(Number(backfilled.number), LIE)
  // Token 20 is minted 100 s after the blocks before it, then moved to bob; the move's logs
  // claim a time 50 s before the mint's block: inside the range, out of the chain's order.
  await chain.clients.test.increaseTime({ seconds: 100 })
  const minted = await chain.call(nft, 'TestNFT', 'mint', [chain.accounts[0], 20n])
  const mintedAt = (await chain.clients.public.getBlock({ blockNumber: minted })).timestamp
  const moved = await chain.call(nft, 'TestNFT', 'move', [chain.accounts[0], chain.accounts[1], 20n])
  movedBack = {
    number: moved,
    timestamp: (await chain.clients.public.getBlock({ blockNumber: moved })).timestamp,
  }
  lieAbout.set(Number(moved), `0x${(mintedAt - 50n).toString(16)}`)
  // Blocks after the move keep it in the middle of the backfill's range.
  for (let i = 21n; i <= 23n; i++) await chain.call(nft, 'TestNFT', 'mint', [chain.accounts[0], i])
  const config = testConfig({ DATABASE_URL: db.url, RPC_URL: proxy.url, CONFIRMATIONS: '2' })
  indexer = startIndexer(config, db.pool, { metadata: { enabled: false } })
  await waitForIndexed(db.pool, chain.clients)

  // The block to lie about is mined while the indexer follows the head: every block is stored
  // (blocks), so the rollback below has a common ancestor just under it.
  lieAbout.set(Number((await chain.head()) + 1n), LIE)
  const number = await chain.call(nft, 'TestNFT', 'mint', [chain.accounts[2], 77n])
  expect(lieAbout.has(Number(number))).toBe(true)
  const block = await chain.clients.public.getBlock({ blockNumber: number })
  lied = { number: block.number, hash: block.hash, timestamp: block.timestamp }
  // Two more blocks: the lied-about block reaches CONFIRMATIONS and is verified.
  await chain.call(nft, 'TestNFT', 'mint', [chain.accounts[0], 5n])
  await chain.call(nft, 'TestNFT', 'mint', [chain.accounts[0], 6n])
  await waitForIndexed(db.pool, chain.clients)
  await waitFor(
    async () => {
      const { rows } = await db.pool.query(
        `SELECT 1 FROM indexer_state WHERE coverage_status = 'complete' AND last_verified_block >= $1`,
        [lied.number.toString()],
      )
      return rows.length > 0
    },
    60_000,
    `block ${lied?.number} verified`,
  )
}, 180_000)

afterAll(async () => {
  await indexer?.stop()
  await proxy?.stop()
  await chain?.stop()
  await db?.drop()
})

describe("a provider that lies about logs' blockTimestamp", () => {
  it('a verified block stores the timestamp of its header, not the one its logs claim', async () => {
    const { rows } = await db.pool.query(
      `SELECT extract(epoch FROM block_timestamp)::bigint::text AS ts FROM transfers WHERE block_number = $1`,
      [lied.number.toString()],
    )
    expect(rows).toHaveLength(1)
    expect(rows[0].ts).toBe(lied.timestamp.toString())
  })

  it('a backfilled block never stores a time outside its range: there, its header is read', async () => {
    const { rows } = await db.pool.query(
      `SELECT extract(epoch FROM block_timestamp)::bigint::text AS ts FROM transfers WHERE block_number = $1`,
      [backfilled.number.toString()],
    )
    expect(rows).toEqual([{ ts: backfilled.timestamp.toString() }])
  })

  it('a backfilled block dated before an earlier one of its range: its header is read, and the token has its owner', async () => {
    const { rows } = await db.pool.query(
      `SELECT extract(epoch FROM block_timestamp)::bigint::text AS ts FROM transfers WHERE block_number = $1`,
      [movedBack.number.toString()],
    )
    expect(rows).toEqual([{ ts: movedBack.timestamp.toString() }])
    const owner = await db.pool.query(
      `SELECT current_owner FROM tokens WHERE collection_address = $1 AND token_id = 20`,
      [nft.toLowerCase()],
    )
    expect(owner.rows).toEqual([{ current_owner: chain.accounts[1]!.toLowerCase() }])
  })

  it('a reorganisation that replaces the block removes its transfer and the token it minted', async () => {
    const head = await chain.head()
    const depth = Number(head - lied.number + 1n)
    // The replacement blocks hold no NFT activity: token 77 never existed on the new chain.
    const result = await reorgChain(chain.clients, { depth, accounts: chain.accounts })
    expect(result.replaced.some((r) => r.oldHash === lied.hash)).toBe(true)
    await chain.call(nft, 'TestNFT', 'mint', [chain.accounts[0], 8n])
    await waitForIndexed(db.pool, chain.clients)
    const { rows } = await db.pool.query(
      `SELECT block_number::text AS block, block_hash FROM transfers WHERE token_id = 77`,
    )
    // With the log's time (1970) the row would lie below the ancestor's and survive the rollback.
    expect(rows).toEqual([])
    await expectDatabaseMatchesChain(db.pool, chain.clients, { standard: [nft], legacy: [], multi: [] })
  })
})
