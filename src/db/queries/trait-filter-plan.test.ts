/**
 * A trait-filtered page of a large collection reads the collection's matching tokens, not the
 * whole collection, whatever the value's frequency in other collections (docs/api.md, "Traits").
 *
 * The filter is jsonb containment, which PostgreSQL estimates by the value's share of ALL tokens.
 * Past the 256 tokens walked in order (FILTER_WINDOW), a value that is absent from (or rare in) this
 * collection but common elsewhere was estimated common here too: the page then walked the whole
 * collection in order, filtering each token (a value absent from bench:seed's 500,000-token
 * collection: ~477,000 rows read, 120–330 ms), or scanned the table. The page's matching tokens
 * come from tokens_collection_attributes_idx (collection_address, attributes jsonb_path_ops:
 * btree_gin), in one bitmap index scan planned without the value (tokens.ts, filteredPageIds).
 *
 * Here: BIG, 4,000 tokens, Hat absent and Color Red on 12 of them near the end; OTHER, 6,000
 * tokens, every one with Color Red and Hat Cap (the value on 60 % of all tokens).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { selectCollectionTokensByRarity } from '@/db/queries/rarity'
import type { ReadDb } from '@/db/queries/sql'
import { selectCollectionTokens } from '@/db/queries/tokens'
import { addr } from '@/test/api-fixtures'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import { analyzingPool, rowsRead } from '@/test/query-plans'
import { computeRarity } from '@/test/rarity-fixtures'

let db: TestDatabase
const big = addr('trait-plan-big')
const other = addr('trait-plan-other')
const BIG_TOKENS = 4_000
const OTHER_TOKENS = 6_000
/** BIG's Red tokens: rare there, near the end (past every window). */
const RED_IN_BIG = Array.from({ length: 12 }, (_, i) => BIG_TOKENS - 300 + i * 20)
/** Rows a page may read: the two windows of 256 tokens (near, edge), its matches and a few more. */
const BOUND = 800

beforeAll(async () => {
  db = await createTestDatabase()
  await db.pool.query(
    `INSERT INTO collections (address, name, symbol, listed) VALUES ($1, 'Big', 'B', true), ($2, 'Other', 'O', true)`,
    [big, other],
  )
  await db.pool.query(
    `INSERT INTO tokens (collection_address, token_id, current_owner, is_burned, metadata_status, attributes)
     SELECT $1, g, $2, g % 17 = 0, 'ok',
            jsonb_build_array(jsonb_build_object('trait_type', 'Color', 'value',
              CASE WHEN g = ANY($4::int[]) THEN 'Red' WHEN g % 2 = 0 THEN 'Blue' ELSE 'Green' END))
       FROM generate_series(1, $3::int) g`,
    [big, addr('trait-plan-owner'), BIG_TOKENS, RED_IN_BIG],
  )
  await db.pool.query(
    `INSERT INTO tokens (collection_address, token_id, current_owner, metadata_status, attributes)
     SELECT $1, g, $2, 'ok', '[{"trait_type": "Color", "value": "Red"}, {"trait_type": "Hat", "value": "Cap"}]'
       FROM generate_series(1, $3::int) g`,
    [other, addr('trait-plan-owner'), OTHER_TOKENS],
  )
  await computeRarity(db.pool, big)
  // Statistics as autovacuum leaves them (and GIN's pending entries merged into the index).
  await db.pool.query('VACUUM ANALYZE tokens, token_rarity')
}, 120_000)

afterAll(async () => {
  await db?.drop()
})

type Query = (db: ReadDb) => Promise<Array<{ id: string | null; token_id: string | null }>>

/** The page's rows and the rows its statement read from tokens (kept and discarded, times loops). */
async function tokenRowsRead(run: Query) {
  const { pool, plans } = analyzingPool(db.pool)
  const rows = (await run({ pool })).filter((r) => r.id !== null)
  expect(plans).toHaveLength(1)
  return { tokenIds: rows.map((r) => Number(r.token_id)), read: rowsRead(plans[0]!.nodes, 'tokens') }
}

const trait = (type: string, value: string) => [[JSON.stringify([{ trait_type: type, value }])]]
const list =
  (traits: string[][], after?: { tokenId: string; id: number }): Query =>
  (probe) =>
    selectCollectionTokens(probe, { address: big, includeBurned: false, rows: 21, traits, after })

describe('a trait filter on a large collection, the value common in another', () => {
  it('absent from the collection: an empty page, read without walking the collection', async () => {
    const { tokenIds, read } = await tokenRowsRead(list(trait('Hat', 'Cap')))
    expect(tokenIds).toEqual([])
    expect(read).toBeLessThan(BOUND)
  })

  it('absent, after a cursor in the middle: the same', async () => {
    const { rows } = await db.pool.query<{ id: string }>(
      'SELECT id::text FROM tokens WHERE collection_address = $1 AND token_id = 2000',
      [big],
    )
    const { tokenIds, read } = await tokenRowsRead(
      list(trait('Hat', 'Cap'), { tokenId: '2000', id: Number(rows[0]!.id) }),
    )
    expect(tokenIds).toEqual([])
    expect(read).toBeLessThan(BOUND)
  })

  it('rare in the collection: exactly its matching tokens, read from the index', async () => {
    const { tokenIds, read } = await tokenRowsRead(list(trait('Color', 'Red')))
    expect(tokenIds).toEqual(RED_IN_BIG.filter((n) => n % 17 !== 0))
    expect(read).toBeLessThan(BOUND)
  })

  it('common in the collection: the page from the tokens walked in order', async () => {
    const { tokenIds, read } = await tokenRowsRead(list(trait('Color', 'Blue')))
    expect(tokenIds).toEqual(
      Array.from({ length: 50 }, (_, i) => (i + 1) * 2)
        .filter((n) => n % 17 !== 0)
        .slice(0, 21),
    )
    expect(read).toBeLessThan(BOUND)
  })

  it('sort=rarity, absent from the collection: an empty page, read without walking the collection', async () => {
    const { tokenIds, read } = await tokenRowsRead((probe) =>
      selectCollectionTokensByRarity(probe, { address: big, rows: 21, traits: trait('Hat', 'Cap') }),
    )
    expect(tokenIds).toEqual([])
    expect(read).toBeLessThan(BOUND)
  })
})
