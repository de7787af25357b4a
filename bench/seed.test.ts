/**
 * Smoke test of `npm run bench:seed` at a thousandth of its scale: the shape
 * asked for, and derived state that agrees with the generated history.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, isEmbeddedTestDatabase, type TestDatabase } from '@/test/db'
import { BIG, seed, shapeFor, WHALE } from './seed'

let db: TestDatabase
// COPY streams and VACUUM need a real PostgreSQL (CI has one; the embedded PGlite server is skipped).
const embedded = isEmbeddedTestDatabase()

beforeAll(async () => {
  if (embedded) return
  db = await createTestDatabase()
  await seed({ url: db.url, scale: 0.001, log: () => {} })
}, 120_000)

afterAll(async () => {
  await db?.drop()
})

describe.skipIf(embedded)('bench:seed (scale 0.001)', () => {
  it('builds the requested shape', async () => {
    const shape = shapeFor(0.001)
    const { rows } = await db.pool.query(
      `SELECT (SELECT count(*) FROM transfers)::int AS transfers, (SELECT count(*) FROM tokens)::int AS tokens,
              (SELECT count(*) FROM collections)::int AS collections,
              (SELECT count(*) FROM tokens WHERE collection_address = $1)::int AS big,
              (SELECT count(*) FROM tokens WHERE current_owner = $2)::int AS whale`,
      [BIG, WHALE],
    )
    expect(rows[0]).toEqual({
      transfers: shape.transfers,
      tokens: shape.tokens,
      collections: shape.collections,
      big: shape.bigTokens,
      whale: shape.whaleTokens,
    })
  })

  it('derives tokens and counters from the history, with ids in chain order', async () => {
    const mismatched = await db.pool.query(`
      SELECT count(*)::int AS n FROM tokens t
        JOIN LATERAL (SELECT to_address, count(*) OVER () AS c FROM transfers tr
                       WHERE tr.collection_address = t.collection_address AND tr.token_id = t.token_id
                       ORDER BY block_timestamp DESC, id DESC LIMIT 1) last ON true
       WHERE last.to_address <> t.current_owner OR last.c <> t.transfer_count`)
    expect(mismatched.rows[0].n).toBe(0)
    const counters = await db.pool.query(`
      SELECT count(*)::int AS n FROM collections c
       WHERE total_transfers <> (SELECT count(*) FROM transfers WHERE collection_address = c.address)
          OR total_supply <> (SELECT count(*) FROM tokens WHERE collection_address = c.address AND NOT is_burned)`)
    expect(counters.rows[0].n).toBe(0)
    const order = await db.pool.query(`
      SELECT count(*)::int AS n FROM (
        SELECT id, lag(id) OVER (ORDER BY block_timestamp, block_number, log_index) AS prev FROM transfers) s
       WHERE prev > id`)
    expect(order.rows[0].n).toBe(0)
    const state = await db.pool.query('SELECT coverage_status FROM indexer_state')
    expect(state.rows).toEqual([{ coverage_status: 'complete' }])
  })
})
