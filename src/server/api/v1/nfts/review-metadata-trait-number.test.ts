/**
 * Review: docs/api.md, "Traits": a `trait=Type:Value` value "matches the
 * string it is and also the number or boolean it spells". trait-filter.ts
 * turns the text into a JS double (Number(text)) before it builds the jsonb
 * containment document, so a text that spells one number matches another:
 * `0.000…01` (underflows to 0) lists tokens whose value is 0, and
 * 9007199254740993 lists tokens whose value is 9007199254740992. PostgreSQL
 * compares jsonb numbers exactly; the rounding is the filter's own.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ApiServer, startApiServer } from '@/test/api-client'
import { addr } from '@/test/api-fixtures'
import { createTestDatabase, type TestDatabase } from '@/test/db'

let db: TestDatabase
let api: ApiServer
const collection = addr('review-trait-number')

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
    [collection, addr('review-trait-number-owner')],
  )
  api = await startApiServer(db.url)
}, 60_000)

afterAll(async () => {
  await api?.close()
  await db?.drop()
})

async function ids(param: string): Promise<string[]> {
  const { body } = await api.json<{ data: Array<{ token_id: string }> }>(
    `/v1/collections/${collection}/nfts?trait=${encodeURIComponent(param)}`,
  )
  return body.data.map((t) => t.token_id)
}

describe('review: trait filter values that spell numbers', () => {
  it('a small nonzero number does not match 0', async () => {
    expect(await ids('Level:0')).toEqual(['1'])
    expect(await ids(`Level:0.${'0'.repeat(400)}1`)).toEqual([])
    expect(await ids('Level:1e-400')).toEqual([])
  })

  it('2^53 + 1 does not match 2^53', async () => {
    expect(await ids('Level:9007199254740992')).toEqual(['2'])
    expect(await ids('Level:9007199254740993')).toEqual([])
  })
})
