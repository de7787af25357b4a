/**
 * Smoke test of `npm run bench:seed` at a thousandth of its scale: the shape
 * asked for, and derived state that agrees with the generated history.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ZERO_ADDRESS } from '@/lib/schemas'
import { createTestDatabase, isEmbeddedTestDatabase, type TestDatabase } from '@/test/db'
import { BIG, EDITION, EDITION_TOKEN_ID, seed, shapeFor, WHALE, WHALE_1155 } from './seed'

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
      `SELECT (SELECT count(*) FROM transfers WHERE amount IS NULL)::int AS transfers,
              (SELECT count(*) FROM tokens WHERE total_supply IS NULL)::int AS tokens,
              (SELECT count(*) FROM collections WHERE standard = 'ERC721')::int AS collections,
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
    const multi = await db.pool.query(
      `SELECT (SELECT count(*) FROM transfers WHERE amount IS NOT NULL)::int AS transfers,
              (SELECT count(*) FROM collections WHERE standard = 'ERC1155')::int AS collections,
              (SELECT holder_count FROM tokens WHERE collection_address = $1 AND token_id = $2) AS edition,
              (SELECT count(*) FROM token_balances WHERE owner = $3 AND balance > 0)::int AS whale,
              (SELECT count(DISTINCT collection_address) FROM token_balances WHERE owner = $3)::int AS whale_collections,
              (SELECT count(*) FROM (SELECT 1 FROM transfers WHERE amount IS NOT NULL
                                      GROUP BY transaction_hash, log_index HAVING count(*) > 1) b)::int > 0 AS batches`,
      [EDITION, EDITION_TOKEN_ID, WHALE_1155],
    )
    expect(multi.rows[0]).toEqual({
      transfers: shape.multiTransfers,
      collections: shape.multiCollections,
      edition: shape.editionHolders,
      whale: shape.whale1155Tokens,
      whale_collections: shape.multiCollections,
      batches: true,
    })
  })

  it('derives tokens and counters from the history, with ids in chain order', async () => {
    const mismatched = await db.pool.query(`
      SELECT count(*)::int AS n FROM tokens t
        JOIN LATERAL (SELECT to_address, count(*) OVER () AS c FROM transfers tr
                       WHERE tr.collection_address = t.collection_address AND tr.token_id = t.token_id
                       ORDER BY block_timestamp DESC, id DESC LIMIT 1) last ON true
       WHERE (t.total_supply IS NULL AND last.to_address <> t.current_owner) OR last.c <> t.transfer_count`)
    expect(mismatched.rows[0].n).toBe(0)
    const counters = await db.pool.query(`
      SELECT count(*)::int AS n FROM collections c
       WHERE total_transfers <> (SELECT count(*) FROM transfers WHERE collection_address = c.address)
          OR total_supply <> (SELECT count(*) FROM tokens WHERE collection_address = c.address AND NOT is_burned)`)
    expect(counters.rows[0].n).toBe(0)
    const order = await db.pool.query(`
      SELECT count(*)::int AS n FROM (
        SELECT id, lag(id) OVER (ORDER BY block_timestamp, block_number, log_index, batch_index) AS prev FROM transfers) s
       WHERE prev > id`)
    expect(order.rows[0].n).toBe(0)
    // collection_holders of ERC-721 collections: each owner's tokens not burned, as the indexer counts them.
    const holders = await db.pool.query(`
      SELECT count(*)::int AS n FROM (
        SELECT collection_address, current_owner AS owner, count(*)::int AS n FROM tokens
         WHERE total_supply IS NULL AND NOT is_burned GROUP BY 1, 2) t
        FULL JOIN (SELECT h.* FROM collection_holders h JOIN collections c ON c.address = h.collection_address
                    WHERE c.standard = 'ERC721') h USING (collection_address, owner)
       WHERE t.n IS DISTINCT FROM h.token_count`)
    expect(holders.rows[0].n).toBe(0)
    const someHolders = await db.pool.query(
      'SELECT count(*)::int AS n FROM collection_holders WHERE collection_address = $1',
      [BIG],
    )
    expect(someHolders.rows[0].n).toBeGreaterThan(10)
    const state = await db.pool.query('SELECT coverage_status FROM indexer_state')
    expect(state.rows).toEqual([{ coverage_status: 'complete' }])
  })

  it('derives the ERC-1155 state as the indexer does (balances, supply, holders, counters)', async () => {
    const count = async (sql: string) =>
      (await db.pool.query(`SELECT count(*)::int AS n FROM (${sql}) s`)).rows[0].n
    // Rows of one standard in collections of that standard; a batch's rows numbered 0, 1, … in the log.
    expect(
      await count(`SELECT 1 FROM transfers tr JOIN collections c ON c.address = tr.collection_address
                    WHERE (tr.amount IS NOT NULL) <> (c.standard = 'ERC1155')`),
    ).toBe(0)
    expect(
      await count(`SELECT 1 FROM transfers WHERE amount IS NOT NULL GROUP BY transaction_hash, log_index
                   HAVING min(batch_index) <> 0 OR max(batch_index) <> count(*) - 1
                       OR count(DISTINCT batch_index) <> count(*) OR count(DISTINCT (from_address, to_address)) <> 1`),
    ).toBe(0)
    // token_balances is exactly the positive balances the history adds up to.
    expect(
      await count(`
        WITH moves AS (
          SELECT collection_address, token_id, to_address AS owner, amount AS v FROM transfers
           WHERE amount IS NOT NULL AND to_address <> '${ZERO_ADDRESS}'
          UNION ALL
          SELECT collection_address, token_id, from_address, -amount FROM transfers
           WHERE amount IS NOT NULL AND from_address <> '${ZERO_ADDRESS}'),
        history AS (SELECT collection_address, token_id, owner, sum(v) AS balance FROM moves
                     GROUP BY collection_address, token_id, owner HAVING sum(v) <> 0)
        SELECT 1 FROM history h FULL JOIN token_balances b USING (collection_address, token_id, owner)
         WHERE h.balance IS DISTINCT FROM b.balance OR b.balance <= 0`),
    ).toBe(0)
    // Tokens: supply minted minus burned = the sum of the balances, holders = the positive balances.
    expect(
      await count(`
        SELECT 1 FROM tokens t
          JOIN collections c ON c.address = t.collection_address AND c.standard = 'ERC1155'
          LEFT JOIN LATERAL (
            SELECT coalesce(sum(balance), 0) AS balances, count(*) FILTER (WHERE balance > 0) AS holders
              FROM token_balances b WHERE b.collection_address = t.collection_address AND b.token_id = t.token_id) b ON true
          LEFT JOIN LATERAL (
            SELECT sum(amount) FILTER (WHERE from_address = '${ZERO_ADDRESS}')
                   - coalesce(sum(amount) FILTER (WHERE to_address = '${ZERO_ADDRESS}'), 0) AS supply,
                   min(block_number) FILTER (WHERE from_address = '${ZERO_ADDRESS}') AS minted,
                   max(block_number) AS last
              FROM transfers tr WHERE tr.collection_address = t.collection_address AND tr.token_id = t.token_id) h ON true
         WHERE t.total_supply IS NULL OR t.total_supply <> b.balances OR t.total_supply <> h.supply
            OR t.holder_count <> b.holders OR t.is_burned <> (t.total_supply <= 0)
            OR t.current_owner <> '${ZERO_ADDRESS}' OR t.minted_block <> h.minted OR t.last_transfer_block <> h.last`),
    ).toBe(0)
    expect(await count('SELECT 1 FROM tokens WHERE total_supply IS NOT NULL AND is_burned')).toBeGreaterThan(
      0,
    )
    // collection_holders counts the ids each owner holds; the counters agree with tokens and balances.
    expect(
      await count(`
        SELECT 1 FROM (SELECT collection_address, owner, count(*) AS n FROM token_balances WHERE balance > 0
                        GROUP BY collection_address, owner) b
          FULL JOIN (SELECT h.* FROM collection_holders h JOIN collections c ON c.address = h.collection_address
                      WHERE c.standard = 'ERC1155') h USING (collection_address, owner)
         WHERE b.n IS DISTINCT FROM h.token_count`),
    ).toBe(0)
    expect(
      await count(`
        SELECT 1 FROM collections c WHERE c.standard = 'ERC1155' AND (
          c.total_supply <> (SELECT count(*) FROM tokens WHERE collection_address = c.address AND total_supply > 0)
          OR c.unique_holders <> (SELECT count(DISTINCT owner) FROM token_balances
                                   WHERE collection_address = c.address AND balance > 0)
          OR c.total_transfers <> (SELECT count(*) FROM transfers WHERE collection_address = c.address))`),
    ).toBe(0)
  })
})
