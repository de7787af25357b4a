import type pg from 'pg'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createTestDatabase, isEmbeddedTestDatabase, type TestDatabase } from '@/test/db'
import { takeWriteLock, withTransaction } from './db'
import { addIndexedRange, ensureIndexerState, lockStateForCommit, updateProgress } from './state'

let db: TestDatabase
const LOCK_NOT_AVAILABLE = '55P03'

beforeAll(async () => {
  db = await createTestDatabase()
}, 60_000)
afterAll(async () => {
  await db?.drop()
})
beforeEach(async () => {
  await db.pool.query('TRUNCATE indexed_ranges, indexer_state')
})

const ranges = async () =>
  (await db.pool.query('SELECT from_block::int AS f, to_block::int AS t FROM indexed_ranges ORDER BY 1')).rows

describe('indexed ranges', () => {
  it('merges each added range with the ranges it overlaps or touches', async () => {
    const steps: Array<[number, number, Array<{ f: number; t: number }>]> = [
      [10, 19, [{ f: 10, t: 19 }]],
      // Touching above: the merged range keeps the deleted one's key.
      [20, 29, [{ f: 10, t: 29 }]],
      [
        40,
        49,
        [
          { f: 10, t: 29 },
          { f: 40, t: 49 },
        ],
      ],
      [
        0,
        9,
        [
          { f: 0, t: 29 },
          { f: 40, t: 49 },
        ],
      ],
      // Fills the gap: both neighbours join it.
      [30, 39, [{ f: 0, t: 49 }]],
      [5, 12, [{ f: 0, t: 49 }]],
      [45, 60, [{ f: 0, t: 60 }]],
    ]
    for (const [from, to, expected] of steps) {
      await withTransaction(db.pool, (client) => addIndexedRange(client, BigInt(from), BigInt(to)))
      expect(await ranges()).toEqual(expected)
    }
  })
})

describe('lockStateForCommit', () => {
  const network = "it's a devnet"

  const commitProgress = async (client: pg.PoolClient) => {
    await addIndexedRange(client, 0n, 41n)
    await updateProgress(client, {
      network,
      startBlock: 0n,
      lastSeenBlock: 50n,
      chainConfirmedBlock: 45n,
      verified: { from: 0n, to: 41n },
    })
  }

  it('reads the locked state and the top indexed block (a network name with a quote)', async () => {
    await ensureIndexerState(db.pool, { network, chainId: 31337, startBlock: 0 })
    await withTransaction(db.pool, commitProgress)
    const { state, topIndexed } = await withTransaction(db.pool, (client) =>
      lockStateForCommit(client, network),
    )
    expect(topIndexed).toBe(41n)
    expect(state).toMatchObject({
      network,
      lastIndexedBlock: 41n,
      lastVerifiedBlock: 41n,
      lastSeenBlock: 50n,
    })
  })

  // A second session waits for the first on the embedded database (one session): nothing to try there.
  it.skipIf(isEmbeddedTestDatabase())('holds the writers lock until the transaction ends', async () => {
    await ensureIndexerState(db.pool, { network, chainId: 31337, startBlock: 0 })
    const other = await db.pool.connect()
    /** Whether another writer gets the writers' lock within 100 ms. */
    const otherTakesLock = async () => {
      await other.query("BEGIN; SET LOCAL lock_timeout = '100ms'")
      try {
        await takeWriteLock(other)
        return true
      } catch (err) {
        if ((err as { code?: string }).code === LOCK_NOT_AVAILABLE) return false
        throw err
      } finally {
        await other.query('ROLLBACK')
      }
    }
    try {
      await withTransaction(db.pool, async (client) => {
        await lockStateForCommit(client, network)
        expect(await otherTakesLock()).toBe(false)
      })
      expect(await otherTakesLock()).toBe(true)
    } finally {
      other.release()
    }
  })

  it('reads an empty indexed_ranges as no top', async () => {
    await ensureIndexerState(db.pool, { network, chainId: 31337, startBlock: 0 })
    const { state, topIndexed } = await withTransaction(db.pool, (client) =>
      lockStateForCommit(client, network),
    )
    expect(topIndexed).toBeNull()
    expect(state.lastIndexedBlock).toBeNull()
  })
})
