import type { Hex } from 'viem'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import type { TransferEvent } from '../events/types'
import { writeTransfers } from '.'
import { type IngestBatch, StaleStateError, startCommit } from './commit'
import { ensureIndexerState } from './state'

let db: TestDatabase

beforeAll(async () => {
  db = await createTestDatabase()
}, 60_000)
afterAll(async () => {
  await db?.drop()
})
beforeEach(async () => {
  await db.pool.query(
    'TRUNCATE transfers, tokens, collections, collection_holders, blocks, indexed_ranges, indexer_state',
  )
  await ensureIndexerState(db.pool, { network: 'devnet', chainId: 31337, startBlock: 0 })
})

const hex = (n: number, bytes: number) => `0x${n.toString(16).padStart(bytes * 2, '0')}` as Hex
const ctx = (expectedLastIndexed: bigint | null) => ({
  network: 'devnet',
  startBlock: 0n,
  expectedLastIndexed,
  keepBlocks: 64n,
})

/** Block `block` minting tokens 0..count-1 of one collection. */
function mintBlock(block: number, count: number): IngestBatch {
  const transfers: TransferEvent[] = Array.from({ length: count }, (_, i) => ({
    collection: hex(0xf1, 20),
    tokenId: BigInt(block * 1000 + i),
    from: hex(0, 20),
    to: hex(0xa1, 20),
    blockNumber: BigInt(block),
    blockHash: hex(block, 32),
    blockTimestamp: BigInt(1_600_000_000 + block * 12),
    transactionHash: hex(block, 32),
    logIndex: i,
    batchIndex: 0,
    standard: 'ERC721',
  }))
  const number = BigInt(block)
  return {
    fromBlock: number,
    toBlock: number,
    transfers,
    metadataUpdates: [],
    verified: true,
    blocks: [{ number, hash: hex(block, 32), parentHash: hex(block - 1, 32), timestamp: 1n }],
    lastSeenBlock: number,
    chainConfirmedBlock: number,
  }
}

const counts = async () =>
  (
    await db.pool.query(
      `SELECT (SELECT count(*) FROM transfers)::int AS transfers, (SELECT count(*) FROM tokens)::int AS tokens,
              (SELECT last_indexed_block::int FROM indexer_state) AS last`,
    )
  ).rows[0]

/** Every connection of the pool is back and idle: no commit left a transaction open. */
const allReleased = () => db.pool.idleCount === db.pool.totalCount

// Written for both database backends: on the embedded one (a single session) another
// connection's query waits until an open transaction ends, so no test awaits a read
// while a commit of its own is open.
describe('two-phase commits', () => {
  it('a reader during a commit sees all of its batch or none of it', async () => {
    const batch = mintBlock(0, 3)
    const open = await startCommit(db.pool, batch.transfers)
    const during = counts()
    await open.finish(ctx(null), batch)
    expect([
      { transfers: 0, tokens: 0, last: null },
      { transfers: 3, tokens: 3, last: 0 },
    ]).toContainEqual(await during)
    expect(await counts()).toEqual({ transfers: 3, tokens: 3, last: 0 })
    expect(allReleased()).toBe(true)
  })

  it('abort() leaves nothing; a second finish() is refused', async () => {
    const batch = mintBlock(0, 3)
    const open = await startCommit(db.pool, batch.transfers)
    await open.abort()
    expect(await counts()).toEqual({ transfers: 0, tokens: 0, last: null })
    await expect(open.finish(ctx(null), batch)).rejects.toThrow(/already ended/)
    await open.abort() // a no-op once ended
    expect(allReleased()).toBe(true)
  })

  it('a finish() that fails rolls its transfers back with it', async () => {
    const batch = mintBlock(0, 3)
    const open = await startCommit(db.pool, batch.transfers)
    // Based on a state the database does not have (another writer moved it).
    await expect(open.finish(ctx(5n), batch)).rejects.toBeInstanceOf(StaleStateError)
    expect(await counts()).toEqual({ transfers: 0, tokens: 0, last: null })
    expect(allReleased()).toBe(true)
  })

  it('overlapping commits, as a backfill runs them: ids follow the chain', async () => {
    const first = mintBlock(0, 2)
    const second = mintBlock(1, 2)
    const a = await startCommit(db.pool, first.transfers)
    const finishingFirst = a.finish(ctx(null), first)
    // On a server, inserted while the first batch finishes; on the embedded database, once it has.
    const b = await startCommit(db.pool, second.transfers)
    await finishingFirst
    await b.finish(ctx(0n), second)
    expect(await counts()).toEqual({ transfers: 4, tokens: 4, last: 1 })
    const ids = await db.pool.query('SELECT block_number::int AS b FROM transfers ORDER BY id')
    expect(ids.rows.map((r) => r.b)).toEqual([0, 0, 1, 1])
    expect(allReleased()).toBe(true)
  })
})

describe('tokens first minted in a batch', () => {
  const alice = hex(0xa1, 20)
  const bob = hex(0xb2, 20)
  const zero = hex(0, 20)
  /** One block of events [tokenId, from, to]; every batch one block. */
  const block = (number: number, events: Array<[number, Hex, Hex]>): IngestBatch => ({
    ...mintBlock(number, 0),
    transfers: events.map(([tokenId, from, to], i) => ({
      ...mintBlock(number, 1).transfers[0]!,
      tokenId: BigInt(tokenId),
      from,
      to,
      logIndex: i,
    })),
  })
  const commit = async (batch: IngestBatch, after: bigint | null) =>
    (await startCommit(db.pool, batch.transfers)).finish(ctx(after), batch)
  const tokens = async () =>
    (
      await db.pool.query(
        `SELECT token_id::int AS id, current_owner AS owner, is_burned AS burned, transfer_count AS count,
                minted_block::int AS minted, last_transfer_block::int AS last
           FROM tokens ORDER BY token_id`,
      )
    ).rows
  const counters = async () =>
    (
      await db.pool.query(
        'SELECT total_supply::int AS supply, unique_holders::int AS holders, total_transfers::int AS transfers FROM collections',
      )
    ).rows[0]

  it('are created with the state their events give, counted in the collection', async () => {
    // Token 1 is minted and moved in one batch; token 2 is moved later, token 3 only transferred (history before START_BLOCK).
    await commit(
      block(0, [
        [1, zero, alice],
        [2, zero, alice],
        [1, alice, bob],
        [3, bob, alice],
      ]),
      null,
    )
    await commit(block(1, [[2, alice, bob]]), 0n)
    expect(await tokens()).toEqual([
      { id: 1, owner: bob, burned: false, count: 2, minted: 0, last: 0 },
      { id: 2, owner: bob, burned: false, count: 2, minted: 0, last: 1 },
      { id: 3, owner: alice, burned: false, count: 1, minted: null, last: 0 },
    ])
    expect(await counters()).toEqual({ supply: 3, holders: 2, transfers: 5 })
  })

  it('a burned token minted again in a later batch keeps its history (read, not created)', async () => {
    await commit(
      block(0, [
        [1, zero, alice],
        [2, zero, alice],
      ]),
      null,
    )
    await commit(block(1, [[1, alice, zero]]), 0n)
    // Both tokens' first event here is a mint; token 1 exists (burned), so the batch is read and folded.
    await commit(
      block(2, [
        [1, zero, bob],
        [4, zero, bob],
      ]),
      1n,
    )
    expect(await tokens()).toEqual([
      { id: 1, owner: bob, burned: false, count: 3, minted: 0, last: 2 },
      { id: 2, owner: alice, burned: false, count: 1, minted: 0, last: 0 },
      { id: 4, owner: bob, burned: false, count: 1, minted: 2, last: 2 },
    ])
    expect(await counters()).toEqual({ supply: 3, holders: 2, transfers: 5 })
    expect(allReleased()).toBe(true)
  })

  it('a batch overlapping imported history stores and counts only its new events', async () => {
    const batch = block(0, [
      [1, zero, alice],
      [2, zero, alice],
      [1, alice, bob],
    ])
    // The batch's first event was imported from a file before the chain reached it.
    const [imported] = batch.transfers
    await writeTransfers(db.pool, [{ ...imported!, blockHash: imported!.blockHash }], { source: 'import' })
    await commit(batch, null)
    expect(await tokens()).toEqual([
      { id: 1, owner: bob, burned: false, count: 2, minted: 0, last: 0 },
      { id: 2, owner: alice, burned: false, count: 1, minted: 0, last: 0 },
    ])
    expect(await counters()).toEqual({ supply: 2, holders: 2, transfers: 3 })
    const sources = await db.pool.query(
      'SELECT source, count(*)::int AS n FROM transfers GROUP BY source ORDER BY source',
    )
    expect(sources.rows).toEqual([
      { source: 'import', n: 1 },
      { source: 'rpc', n: 2 },
    ])
    expect(allReleased()).toBe(true)
  })
})
