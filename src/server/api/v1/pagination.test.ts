/**
 * Pagination walks over every list endpoint while the indexer keeps
 * committing new blocks: every row that exists when a walk starts is visited
 * exactly once, no row is visited twice, and the pages follow the endpoint's
 * order.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Page } from '@/lib/schemas'
import { type ApiServer, startApiServer } from '@/test/api-client'
import { fixturePool } from '@/test/api-fixtures'
import { buildVolume, keepInserting, type VolumeIndex, volume } from '@/test/api-volume'
import { createTestDatabase, type TestDatabase } from '@/test/db'

let db: TestDatabase
let api: ApiServer
let index: VolumeIndex

beforeAll(async () => {
  db = await createTestDatabase({ poolSize: 8 })
  index = await buildVolume(fixturePool(db.url), { collections: 150, blocks: 200, perBlock: 15 })
  api = await startApiServer(db.url)
}, 180_000)

afterAll(async () => {
  await api?.close()
  await db?.drop()
})

type AnyPage = Page<Record<string, unknown>, Record<string, string | number>>

/** Follows next_page_params to the end; returns the items in the order served. */
async function walk(path: string, limit: number): Promise<Array<Record<string, unknown>>> {
  const items: Array<Record<string, unknown>> = []
  const sep = path.includes('?') ? '&' : '?'
  let query = `${path}${sep}limit=${limit}`
  for (let pages = 0; pages < 10_000; pages++) {
    const { body } = await api.json<AnyPage>(query)
    expect(body.data.length).toBeLessThanOrEqual(limit)
    items.push(...body.data)
    if (!body.pagination.has_more) return items
    const params = new URLSearchParams(
      Object.entries(body.pagination.next_page_params!).map(([k, v]) => [k, String(v)]),
    )
    query = `${path}${sep}limit=${limit}&${params}`
  }
  throw new Error('walk did not end')
}

/** Walks while the indexer inserts; checks exactly-once against the rows present at the start. */
async function walkWhileInserting(
  path: string,
  limit: number,
  before: () => Promise<string[]>,
  key: (item: Record<string, unknown>) => string,
) {
  const existing = await before()
  expect(existing.length).toBeGreaterThan(limit * 3)
  const inserter = keepInserting(index, { perBlock: 6 })
  let items: Array<Record<string, unknown>>
  try {
    items = await walk(path, limit)
  } finally {
    const blocks = await inserter.stop()
    expect(blocks, 'the indexer committed blocks during the walk').toBeGreaterThan(0)
  }
  const keys = items.map(key)
  const counts = new Map<string, number>()
  for (const k of keys) counts.set(k, (counts.get(k) ?? 0) + 1)
  const repeated = [...counts].filter(([, n]) => n > 1)
  expect(repeated, `${path}: rows served twice`).toEqual([])
  const missing = existing.filter((k) => !counts.has(k))
  expect(missing, `${path}: rows skipped`).toEqual([])
  return items
}

const transferKey = (t: Record<string, unknown>) => `${t.transaction_hash}:${t.log_index}:${t.batch_index}`
const newestFirst = (items: Array<Record<string, unknown>>) => {
  for (let i = 1; i < items.length; i++) {
    expect(String(items[i - 1]!.block_timestamp) >= String(items[i]!.block_timestamp)).toBe(true)
  }
}

describe('pagination while the indexer keeps inserting', () => {
  it('GET /v1/activity visits every existing transfer once, newest first', async () => {
    const items = await walkWhileInserting(
      '/v1/activity',
      97,
      async () =>
        (await db.pool.query('SELECT transaction_hash, log_index, batch_index FROM transfers')).rows.map(
          transferKey,
        ),
      transferKey,
    )
    newestFirst(items)
  })

  it('GET /v1/activity?event_type=mint and a collection filter', async () => {
    await walkWhileInserting(
      '/v1/activity?event_type=mint',
      100,
      async () =>
        (
          await db.pool.query(
            "SELECT transaction_hash, log_index, batch_index FROM transfers WHERE event_type = 'mint'",
          )
        ).rows.map(transferKey),
      transferKey,
    )
    await walkWhileInserting(
      `/v1/activity?collection=${volume.big}&event_type=mint`,
      50,
      async () =>
        (
          await db.pool.query(
            "SELECT transaction_hash, log_index, batch_index FROM transfers WHERE event_type = 'mint' AND collection_address = $1",
            [volume.big],
          )
        ).rows.map(transferKey),
      transferKey,
    )
  })

  it('GET /v1/collections/{address}/transfers', async () => {
    const items = await walkWhileInserting(
      `/v1/collections/${volume.big}/transfers`,
      33,
      async () =>
        (
          await db.pool.query(
            'SELECT transaction_hash, log_index, batch_index FROM transfers WHERE collection_address = $1',
            [volume.big],
          )
        ).rows.map(transferKey),
      transferKey,
    )
    newestFirst(items)
  })

  it('GET /v1/nfts/{address}/{tokenId}/transfers', async () => {
    const { rows } = await db.pool.query(
      `SELECT collection_address, token_id::text FROM tokens WHERE transfer_count >= 3 ORDER BY transfer_count DESC LIMIT 1`,
    )
    const token = rows[0]!
    const before = async () =>
      (
        await db.pool.query(
          'SELECT transaction_hash, log_index, batch_index FROM transfers WHERE collection_address = $1 AND token_id = $2',
          [token.collection_address, token.token_id],
        )
      ).rows.map(transferKey)
    const existing = await before()
    const items = await walk(`/v1/nfts/${token.collection_address}/${token.token_id}/transfers`, 1)
    expect(items.map(transferKey).sort()).toEqual(existing.sort())
  })

  it('GET /v1/collections visits every listed collection once, newest first', async () => {
    const items = await walkWhileInserting(
      '/v1/collections',
      13,
      async () =>
        (await db.pool.query('SELECT address FROM collections WHERE listed')).rows.map((r) => r.address),
      (c) => String(c.contract_address),
    )
    for (let i = 1; i < items.length; i++) {
      expect(String(items[i - 1]!.created_at) >= String(items[i]!.created_at)).toBe(true)
    }
  })

  it('GET /v1/collections?search= (trigram and short) visits every match once', async () => {
    for (const search of ['azure', 'Bird', 'z', '1']) {
      const pattern = `%${search}%`
      await walkWhileInserting(
        `/v1/collections?search=${search}`,
        7,
        async () =>
          (
            await db.pool.query(
              'SELECT address FROM collections WHERE listed AND (name ILIKE $1 OR symbol ILIKE $1)',
              [pattern],
            )
          ).rows.map((r) => r.address),
        (c) => String(c.contract_address),
      )
    }
  })

  it('GET /v1/collections/{address}/nfts visits every token once, in numeric order', async () => {
    const items = await walkWhileInserting(
      `/v1/collections/${volume.big}/nfts`,
      41,
      async () =>
        (
          await db.pool.query(
            'SELECT token_id::text FROM tokens WHERE collection_address = $1 AND NOT is_burned',
            [volume.big],
          )
        ).rows.map((r) => r.token_id),
      (t) => String(t.token_id),
    )
    const ids = items.map((t) => BigInt(String(t.token_id)))
    for (let i = 1; i < ids.length; i++) expect(ids[i - 1]! < ids[i]!).toBe(true)
  })

  it('GET /v1/collections/{address}/nfts?include_burned=true', async () => {
    const collection = index.collections[5]!
    const before = (
      await db.pool.query('SELECT token_id::text FROM tokens WHERE collection_address = $1', [collection])
    ).rows
    const items = await walk(`/v1/collections/${collection}/nfts?include_burned=true`, 3)
    expect(items.map((t) => t.token_id).sort()).toEqual(before.map((r) => r.token_id).sort())
  })

  it('GET /v1/owners/{address}/nfts visits every held token once, by collection then token id', async () => {
    const items = await walkWhileInserting(
      `/v1/owners/${volume.holder}/nfts`,
      29,
      async () =>
        (
          await db.pool.query(
            "SELECT collection_address || ':' || token_id::text AS k FROM tokens WHERE current_owner = $1",
            [volume.holder],
          )
        ).rows.map((r) => r.k),
      (t) => `${t.collection_address}:${t.token_id}`,
    )
    for (let i = 1; i < items.length; i++) {
      const a = items[i - 1]!
      const b = items[i]!
      const ordered =
        String(a.collection_address) < String(b.collection_address) ||
        (a.collection_address === b.collection_address &&
          BigInt(String(a.token_id)) < BigInt(String(b.token_id)))
      expect(ordered).toBe(true)
    }
  })
})
