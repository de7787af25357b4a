import type { Hex } from 'viem'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import type { TransferEvent } from '../events/types'
import { type IngestBatch, StaleStateError, startCommit } from './commit'
import { pgArray } from './db'
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

describe('pgArray', () => {
  it('sends any value through a text[] parameter unchanged', async () => {
    const values = [
      '0x00000000000000000000000000000000000000a1',
      '115792089237316195423570985008687907853269984665640564039457584007913129639935',
      '2026-11-23T03:30:28.912Z',
      '',
      'NULL',
      'null',
      'a,b',
      '{x}',
      'say "hi"',
      'back\\slash',
      ' padded ',
      'tab\there',
      'ünïcødé',
      null,
    ]
    const { rows } = await db.pool.query('SELECT $1::text[] AS v', [pgArray(values)])
    expect(rows[0].v).toEqual(values)
  })

  it('writes numbers, bigints and booleans as PostgreSQL reads them', async () => {
    const { rows } = await db.pool.query(
      'SELECT $1::bigint[]::text[] AS n, $2::numeric[]::text[] AS id, $3::bool[] AS b, $4::int[] AS i',
      [pgArray([1n, -2n, null]), pgArray([2n ** 256n - 1n]), pgArray([true, false]), pgArray([0, 7])],
    )
    expect(rows[0]).toEqual({
      n: ['1', '-2', null],
      id: [(2n ** 256n - 1n).toString()],
      b: [true, false],
      i: [0, 7],
    })
  })
})
