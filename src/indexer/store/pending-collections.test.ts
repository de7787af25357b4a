/**
 * The collection queue's order (collections.ts, pendingCollections): collections never read
 * come first, then those an ERC-7572 ContractURIUpdated asked to read again, oldest request
 * first. A contract that emits the event in every block cannot keep the others unnamed (an
 * unnamed collection is not listed), nor jump ahead of other re-reads.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { addr } from '@/test/api-fixtures'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import { markCollectionsStale, pendingCollections } from './collections'

let db: TestDatabase

beforeAll(async () => {
  db = await createTestDatabase()
}, 60_000)

afterAll(async () => {
  await db?.drop()
})

const named = (label: string) => addr(label).toLowerCase()

describe('the collection queue', () => {
  it('reads collections never read before the ones asked again, and those in the order asked', async () => {
    // Ten read collections found first (lower ids), then five never read.
    const spam = Array.from({ length: 10 }, (_, i) => named(`spam-${i}`))
    const fresh = Array.from({ length: 5 }, (_, i) => named(`fresh-${i}`))
    for (const address of spam)
      await db.pool.query(
        `INSERT INTO collections (address, name, metadata_status) VALUES ($1, 'Spam', 'ok')`,
        [address],
      )
    for (const address of fresh)
      await db.pool.query(`INSERT INTO collections (address) VALUES ($1)`, [address])
    // The spam contracts emit ContractURIUpdated: one of them first, the others a moment later.
    await markCollectionsStale(db.pool, [spam[9]!])
    await new Promise((r) => setTimeout(r, 20))
    await markCollectionsStale(db.pool, spam.slice(0, 9))
    const order = (await pendingCollections(db.pool, 20)).map((r) => r.address)
    expect(order.slice(0, 5)).toEqual(fresh)
    expect(order[5]).toBe(spam[9])
    expect(new Set(order.slice(6))).toEqual(new Set(spam.slice(0, 9)))
    // Asked again while never read: it keeps its place among the collections never read.
    await markCollectionsStale(db.pool, [fresh[0]!])
    expect((await pendingCollections(db.pool, 1)).map((r) => r.address)).toEqual([fresh[0]])
  })
})
