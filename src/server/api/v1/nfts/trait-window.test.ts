/**
 * Trait-filtered pages beyond the ordered window (src/db/queries/tokens.ts,
 * FILTER_WINDOW): a collection larger than the window, filters common (the
 * window fills the page), rare (the page continues from the attributes
 * index after the window) and absent; every walk, from any cursor, with and
 * without burned tokens, must list exactly the matching tokens in order;
 * likewise under sort=rarity, where the most common value ranks last (past
 * the window of ranked tokens walked first).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { selectCollectionTokensByRarity } from '@/db/queries/rarity'
import { FILTER_WINDOW, selectCollectionTokens } from '@/db/queries/tokens'
import { addr } from '@/test/api-fixtures'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import { computeRarity } from '@/test/rarity-fixtures'

let db: TestDatabase
const collection = addr('trait-window')
const TOKENS = FILTER_WINDOW * 2 + 500
interface Row {
  tokenId: number
  burned: boolean
  color: string
}
const rows: Row[] = []

beforeAll(async () => {
  db = await createTestDatabase()
  for (let i = 0; i < TOKENS; i++) {
    // Common: Blue (half); rare: Gold, only near the end and once near the start; Red elsewhere.
    const color = i % 2 === 0 ? 'Blue' : i === 7 || i > TOKENS - 40 ? 'Gold' : 'Red'
    rows.push({ tokenId: i + 1, burned: i % 13 === 0, color })
  }
  await db.pool.query(`INSERT INTO collections (address, name, symbol, listed) VALUES ($1, 'W', 'W', true)`, [
    collection,
  ])
  await db.pool.query(
    `INSERT INTO tokens (collection_address, token_id, current_owner, is_burned, metadata_status, attributes)
     SELECT $1, x.token_id, $2, x.burned, 'ok', jsonb_build_array(jsonb_build_object('trait_type', 'Color', 'value', x.color))
       FROM jsonb_to_recordset($3::jsonb) AS x(token_id numeric, burned boolean, color text)`,
    [
      collection,
      addr('trait-window-owner'),
      JSON.stringify(rows.map((r) => ({ token_id: r.tokenId, burned: r.burned, color: r.color }))),
    ],
  )
  await db.pool.query('ANALYZE tokens')
  await computeRarity(db.pool, collection)
}, 60_000)

afterAll(async () => {
  await db?.drop()
})

async function walk(color: string, includeBurned: boolean, pageSize: number): Promise<number[]> {
  const out: number[] = []
  let after: { tokenId: string; id: number } | undefined
  for (let i = 0; i < 10_000; i++) {
    const page = (
      await selectCollectionTokens(db, {
        address: collection,
        includeBurned,
        after,
        rows: pageSize,
        traits: [[JSON.stringify([{ trait_type: 'Color', value: color }])]],
      })
    ).filter((r) => r.id !== null)
    // With burned tokens the cursor's own token may come back (the handler drops it).
    const fresh = page.filter((r) => !after || BigInt(r.token_id) > BigInt(after.tokenId))
    out.push(...fresh.map((r) => Number(r.token_id)))
    if (page.length < pageSize) return out
    const last = page.at(-1)!
    after = { tokenId: last.token_id, id: Number(last.id) }
  }
  throw new Error('walk did not end')
}

describe('trait-filtered pages beyond the ordered window', () => {
  for (const color of ['Blue', 'Red', 'Gold', 'Purple'])
    for (const includeBurned of [false, true])
      it(`lists exactly the ${color} tokens${includeBurned ? ', burned ones too' : ''}`, async () => {
        const expected = rows
          .filter((r) => r.color === color && (includeBurned || !r.burned))
          .map((r) => r.tokenId)
        if (color === 'Gold') expect(expected.length).toBeGreaterThan(10)
        for (const pageSize of [7, 50]) expect(await walk(color, includeBurned, pageSize)).toEqual(expected)
      })
})

async function walkRarity(color: string, pageSize: number): Promise<number[]> {
  const out: number[] = []
  let after: { tokenId: string; id: number } | undefined
  for (let i = 0; i < 10_000; i++) {
    const page = (
      await selectCollectionTokensByRarity(db, {
        address: collection,
        after,
        rows: pageSize,
        traits: [[JSON.stringify([{ trait_type: 'Color', value: color }])]],
      })
    ).filter((r) => r.id !== null)
    out.push(...page.map((r) => Number(r.token_id)))
    if (page.length < pageSize) return out
    const last = page.at(-1)!
    after = { tokenId: last.token_id, id: Number(last.id) }
  }
  throw new Error('walk did not end')
}

describe('trait-filtered rarity pages beyond the ordered window', () => {
  for (const color of ['Blue', 'Red', 'Gold', 'Purple'])
    it(`lists exactly the ${color} tokens in the collection's ranking`, async () => {
      // Every token has one trait: rarest color first, then token order.
      const live = rows.filter((r) => !r.burned)
      const count = (c: string) => live.filter((r) => r.color === c).length
      const byRank = [...live].sort((a, b) => count(a.color) - count(b.color) || a.tokenId - b.tokenId)
      const expected = byRank.filter((r) => r.color === color).map((r) => r.tokenId)
      if (color === 'Blue') expect(byRank.findIndex((r) => r.color === 'Blue')).toBeGreaterThan(FILTER_WINDOW)
      for (const pageSize of [7, 50]) expect(await walkRarity(color, pageSize)).toEqual(expected)
    })
})
