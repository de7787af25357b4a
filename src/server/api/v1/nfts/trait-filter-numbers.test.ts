/**
 * `trait=Type:Value` matches the number a value spells exactly as PostgreSQL
 * compares jsonb numbers (docs/api.md, "Traits"): a number a double would round
 * (0.000…01, 2^53 + 1) is not the number it rounds to, and one PostgreSQL
 * cannot store matches as a string only, never failing the request.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ApiServer, startApiServer } from '@/test/api-client'
import { addr } from '@/test/api-fixtures'
import { createTestDatabase, type TestDatabase } from '@/test/db'

let db: TestDatabase
let api: ApiServer
const collection = addr('trait-filter-numbers')

beforeAll(async () => {
  db = await createTestDatabase()
  await db.pool.query(
    `INSERT INTO collections (address, name, symbol, listed) VALUES ($1, 'Numbers', 'NUM', true)`,
    [collection],
  )
  // Token 1: Level 0; token 2: Level 2^53 (both exact jsonb numbers, as a document can give them).
  await db.pool.query(
    `INSERT INTO tokens (collection_address, token_id, current_owner, is_burned, metadata_status, attributes)
     VALUES ($1, 1, $2, false, 'ok', '[{"trait_type": "Level", "value": 0}]'),
            ($1, 2, $2, false, 'ok', '[{"trait_type": "Level", "value": 9007199254740992}]')`,
    [collection, addr('trait-filter-numbers-owner')],
  )
  api = await startApiServer(db.url)
}, 60_000)

afterAll(async () => {
  await api?.close()
  await db?.drop()
})

async function ids(param: string): Promise<string[]> {
  const { status, body } = await api.json<{ data: Array<{ token_id: string }> }>(
    `/v1/collections/${collection}/nfts?trait=${encodeURIComponent(param)}`,
  )
  expect(status, param.slice(0, 40)).toBe(200)
  return body.data.map((t) => t.token_id)
}

describe('trait filter values that spell numbers', () => {
  it('a small nonzero number does not match 0', async () => {
    expect(await ids('Level:0')).toEqual(['1'])
    expect(await ids(`Level:0.${'0'.repeat(400)}1`)).toEqual([])
    expect(await ids('Level:1e-400')).toEqual([])
  })

  it('2^53 + 1 does not match 2^53', async () => {
    expect(await ids('Level:9007199254740992')).toEqual(['2'])
    expect(await ids('Level:9007199254740993')).toEqual([])
  })

  it('a number PostgreSQL cannot store matches as a string only', async () => {
    expect(await ids('Level:1e-20000')).toEqual([])
    expect(await ids('Level:0e-99999')).toEqual([])
    expect(await ids('Level:1e999999')).toEqual([])
  })
})
