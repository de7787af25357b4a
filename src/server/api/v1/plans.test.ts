/**
 * Every list query uses its index: the handlers run against a few thousand
 * rows with a pool that EXPLAINs each statement first, and the plans must
 * read the expected index and never scan transfers, tokens or collections
 * sequentially. Also: the bounded short search, and the statement timeout
 * the API's pool carries.
 */
import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseConfig } from '@/config/env'
import { openDatabase } from '@/db/database'
import type { ReadContext } from '@/server/api/read/context'
import { indexerSnapshot } from '@/server/api/read/indexer-snapshot'
import { listActivity } from '@/server/api/v1/activity/activity.handler'
import { getCollection, listCollections } from '@/server/api/v1/collections/collections.handler'
import { getCollectionTraits } from '@/server/api/v1/collections/traits.handler'
import { listTokenHolders } from '@/server/api/v1/nfts/holders.handler'
import { getNft, getNftMetadata, listCollectionNfts } from '@/server/api/v1/nfts/nfts.handler'
import { listOwnerNfts } from '@/server/api/v1/owners/owners.handler'
import { listTransfers } from '@/server/api/v1/transfers/transfers.handler'
import { fixturePool } from '@/test/api-fixtures'
import { buildVolume, type VolumeIndex, volume } from '@/test/api-volume'
import { createTestDatabase, isEmbeddedTestDatabase, type TestDatabase } from '@/test/db'
import { explain, type PlanNode } from '@/test/query-plans'
import { computeRarity } from '@/test/rarity-fixtures'

let db: TestDatabase
let index: VolumeIndex

/** A ReadContext whose pool EXPLAINs every statement before running it. */
function explainingContext(pool: pg.Pool): { ctx: ReadContext; plans: PlanNode[][] } {
  const plans: PlanNode[][] = []
  const explaining = {
    async query(sql: string, params?: unknown[]) {
      if (!/indexer_state/.test(sql)) plans.push(await explain(pool, sql, params))
      return pool.query(sql, params)
    },
  } as unknown as pg.Pool
  const ctx: ReadContext = {
    config: { NETWORK: 'devnet', PUBLIC_URL: 'http://api.test', MEDIA_ORIGIN: undefined },
    db: { pool: explaining },
    snapshot: () => indexerSnapshot(pool, 'devnet', 0),
  }
  return { ctx, plans }
}

const BIG_TABLES = ['transfers', 'tokens', 'collections']

function expectIndexUse(nodes: PlanNode[], indexName: string | RegExp) {
  const seqScans = nodes.filter(
    (n) => n['Node Type'] === 'Seq Scan' && BIG_TABLES.includes(n['Relation Name'] ?? ''),
  )
  expect(
    seqScans.map((n) => n['Relation Name']),
    'sequential scans',
  ).toEqual([])
  const indexes = nodes.map((n) => n['Index Name']).filter(Boolean) as string[]
  expect(
    indexes.some((i) => (typeof indexName === 'string' ? i === indexName : indexName.test(i))),
    `expected ${indexName} among ${indexes.join(', ')}`,
  ).toBe(true)
}

/** Pages come in index order: the only Sort is the outer one over the page's own rows. */
function expectNoSort(nodes: PlanNode[]) {
  const sorts = nodes.filter((n) => n['Node Type'] === 'Sort')
  expect(sorts.length, 'sorts').toBeLessThanOrEqual(1)
}

// Plans are PostgreSQL's: the embedded PGlite server (no DATABASE_URL) skips this file.
const embedded = isEmbeddedTestDatabase()

beforeAll(async () => {
  if (embedded) return
  db = await createTestDatabase({ poolSize: 6 })
  const writer = fixturePool(db.url)
  try {
    index = await buildVolume(writer, { collections: 3000, blocks: 200, perBlock: 20 })
    // The stored ranking and trait counts, as the indexer's rarity worker computes them.
    await computeRarity(writer, volume.big)
  } finally {
    await writer.end()
  }
  // As autovacuum would: statistics, and the GIN pending lists merged.
  await db.pool.query('VACUUM ANALYZE')
}, 300_000)

afterAll(async () => {
  await db?.drop()
})

describe.skipIf(embedded)('query plans at a few thousand rows', () => {
  it('has the volume the plans are judged at', async () => {
    const { rows } = await db.pool.query(
      'SELECT (SELECT count(*) FROM transfers)::int AS t, (SELECT count(*) FROM tokens)::int AS k, (SELECT count(*) FROM collections)::int AS c',
    )
    expect(rows[0].t).toBeGreaterThanOrEqual(5000)
    expect(rows[0].k).toBeGreaterThanOrEqual(3000)
    expect(rows[0].c).toBeGreaterThanOrEqual(1500)
  })

  it.skipIf(isEmbeddedTestDatabase())(
    'each endpoint reads its index, first page and deep page alike',
    async () => {
      const { ctx, plans } = explainingContext(db.pool)
      /** The plans of the statements one call ran (a handler may run two in parallel). */
      const check = async (run: () => Promise<unknown>, index: string | RegExp) => {
        const before = plans.length
        await run()
        expectIndexUse(plans.slice(before).flat(), index)
        return plans.slice(before).flat()
      }
      const deep = { before_timestamp: 1_767_226_000_000_000, before_id: 2000 }

      await check(() => listCollections(ctx, {}), 'collections_listed_created_idx')
      await check(
        () => listCollections(ctx, { before_timestamp: Date.now() * 1000, before_id: 1500 }),
        'collections_listed_created_idx',
      )
      await check(() => listCollections(ctx, { search: 'birds 1234' }), /collections_(name|symbol)_trgm_idx/)
      await check(() => listCollections(ctx, { search: index.collections[7]! }), 'collections_address_key')
      // The production window (1,000) is a third of this small table; a smaller one shows the plan of a large table.
      await check(
        () => listCollections(ctx, { search: 'z' }, { shortSearchWindow: 200 }),
        'collections_listed_created_idx',
      )
      await check(() => getCollection(ctx, { address: volume.big }), 'collections_address_key')

      await check(() => listCollectionNfts(ctx, { address: volume.big }), 'tokens_collection_live_idx')
      await check(
        () => listCollectionNfts(ctx, { address: volume.big, after_token_id: '500', after_id: 1 }),
        'tokens_collection_live_idx',
      )
      const withBurned = await check(
        () =>
          listCollectionNfts(ctx, {
            address: volume.big,
            include_burned: true,
            after_token_id: '500',
            after_id: 1,
          }),
        'tokens_collection_token_key',
      )
      expectNoSort(withBurned)
      await check(
        () => getNft(ctx, { address: volume.big, tokenId: '3' }).catch(() => undefined),
        /tokens_collection_(token_key|live_idx)/,
      )

      await check(() => listOwnerNfts(ctx, { address: volume.holder }), 'tokens_owner_idx')
      await check(
        () =>
          listOwnerNfts(ctx, {
            address: volume.holder,
            after_collection: volume.big,
            after_token_id: '100',
            after_id: 50,
          }),
        'tokens_owner_idx',
      )

      // Feeds without an event type merge the three types' pages: one index scan per type, merged in order.
      const merged = async (run: () => Promise<unknown>, index: string) => {
        const nodes = await check(run, index)
        expect(nodes.filter((n) => n['Index Name'] === index).length, `scans of ${index}`).toBe(3)
        expectNoSort(nodes)
      }
      await merged(
        () => listTransfers(ctx, { address: volume.big }),
        'transfers_collection_event_type_feed_idx',
      )
      await merged(
        () => listTransfers(ctx, { address: volume.big, ...deep }),
        'transfers_collection_event_type_feed_idx',
      )
      await check(() => listTransfers(ctx, { address: volume.big, tokenId: '3' }), 'transfers_token_feed_idx')

      await merged(() => listActivity(ctx, {}), 'transfers_event_type_feed_idx')
      await merged(() => listActivity(ctx, deep), 'transfers_event_type_feed_idx')
      await check(() => listActivity(ctx, { event_type: 'burn' }), 'transfers_event_type_feed_idx')
      await merged(
        () => listActivity(ctx, { collection: volume.big }),
        'transfers_collection_event_type_feed_idx',
      )
      await check(
        () => listActivity(ctx, { collection: volume.big, event_type: 'transfer', ...deep }),
        'transfers_collection_event_type_feed_idx',
      )
    },
  )
})

describe('the metadata document', () => {
  it.skipIf(isEmbeddedTestDatabase())(
    'lists with include_metadata read tokens alone (never token_documents); the document is read by key',
    async () => {
      const sqls: string[] = []
      const plans: PlanNode[][] = []
      const pool = {
        async query(sql: string, params?: unknown[]) {
          if (!/indexer_state/.test(sql)) {
            sqls.push(sql)
            plans.push(await explain(db.pool, sql, params))
          }
          return db.pool.query(sql, params)
        },
      } as unknown as pg.Pool
      const ctx: ReadContext = {
        config: { NETWORK: 'devnet', PUBLIC_URL: 'http://api.test', MEDIA_ORIGIN: undefined },
        db: { pool },
        snapshot: () => indexerSnapshot(db.pool, 'devnet', 0),
      }
      await listCollectionNfts(ctx, { address: volume.big, include_metadata: true })
      expectIndexUse(plans.at(-1)!, 'tokens_collection_live_idx')
      await listCollectionNfts(ctx, {
        address: volume.big,
        include_metadata: true,
        after_token_id: '500',
        after_id: 1,
      })
      expectIndexUse(plans.at(-1)!, 'tokens_collection_live_idx')
      await listOwnerNfts(ctx, { address: volume.holder, include_metadata: true })
      expectIndexUse(plans.at(-1)!, 'tokens_owner_idx')
      await getNft(ctx, { address: volume.big, tokenId: '3', include_metadata: true }).catch(() => undefined)
      expect(sqls.some((q) => /token_documents/.test(q))).toBe(false)
      // The lists without include_metadata read none of the document's columns.
      const before = sqls.length
      await listCollectionNfts(ctx, { address: volume.big })
      await listOwnerNfts(ctx, { address: volume.holder })
      for (const q of sqls.slice(before)) expect(q).not.toMatch(/attributes|description/)
      await getNftMetadata(ctx, { address: volume.big, tokenId: '3' }).catch(() => undefined)
      expect(sqls.at(-1)).toMatch(/token_documents/)
      // By key on both tables (which one drives depends on their sizes); never a scan of tokens.
      expectIndexUse(plans.at(-1)!, /^(tokens_collection_token_key|tokens_pkey|token_documents_pkey)$/)
    },
  )

  it('traits, trait filters and rarity read the collection by index, never a scan of tokens', async () => {
    const { ctx, plans } = explainingContext(db.pool)
    // The stored answer, by the collection's key.
    await getCollectionTraits(ctx, { address: volume.big })
    expectIndexUse(plans.at(-1)!, /^(collection_rarity_pkey|collections_address_key)$/)
    // Filtered: also by the GIN index on attributes.
    const filtered = /^tokens_(collection_live_idx|attributes_idx|metadata_queue_idx)$/
    const trait = ['Background:Blue', 'Background:Red', 'Level:3']
    await listCollectionNfts(ctx, { address: volume.big, trait })
    expectIndexUse(plans.at(-1)!, filtered)
    await listCollectionNfts(ctx, { address: volume.big, trait, after_token_id: '500', after_id: 1 })
    expectIndexUse(plans.at(-1)!, filtered)
    // The stored ranking, first page and after a cursor: its range of token_rarity_position_idx, or (here,
    // where few tokens have metadata 'ok' and the ranking is small) the ranked tokens read by metadata_status.
    const ranked = /^(token_rarity_position_idx|tokens_metadata_queue_idx)$/
    await listCollectionNfts(ctx, { address: volume.big, sort: 'rarity' })
    expectIndexUse(plans.at(-1)!, ranked)
    await listCollectionNfts(ctx, { address: volume.big, sort: 'rarity', after_token_id: '500', after_id: 1 })
    expectIndexUse(plans.at(-1)!, ranked)
    await listCollectionNfts(ctx, { address: volume.big, sort: 'rarity', trait })
    expectIndexUse(
      plans.at(-1)!,
      /^(token_rarity_position_idx|tokens_attributes_idx|tokens_metadata_queue_idx)$/,
    )
  })
})

describe.skipIf(embedded)('short searches', () => {
  it('walk at most the window per request, yet find every match across pages', async () => {
    const { ctx, plans } = explainingContext(db.pool)
    const { rows } = await db.pool.query(
      "SELECT address FROM collections WHERE listed AND (name ILIKE '%z%' OR symbol ILIKE '%z%')",
    )
    const found: string[] = []
    let cursor: { before_timestamp: number; before_id: number } | undefined
    let requests = 0
    for (;;) {
      const page = await listCollections(
        ctx,
        { search: 'z', limit: 100, ...cursor },
        { shortSearchWindow: 200 },
      )
      requests++
      found.push(...page.data.map((c) => c.contract_address))
      if (!page.pagination.has_more) break
      cursor = page.pagination.next_page_params
    }
    expect(found.sort()).toEqual(rows.map((r) => r.address).sort())
    expect(requests).toBeGreaterThan(3)
    expect(plans.length).toBe(requests)
  })
})

describe.skipIf(embedded)('statement timeout', () => {
  it('bounds every statement on the API pool', async () => {
    const config = parseConfig({ DATABASE_URL: db.url } as unknown as NodeJS.ProcessEnv)
    const api = openDatabase(db.url, { statementTimeoutMs: config.DB_STATEMENT_TIMEOUT_MS })
    try {
      const { rows } = await api.pool.query('SHOW statement_timeout')
      expect(rows[0].statement_timeout).toBe('5s')
      const quick = openDatabase(db.url, { statementTimeoutMs: 100 })
      await expect(quick.pool.query('SELECT pg_sleep(1)')).rejects.toThrow(/statement timeout/)
      await quick.close()
    } finally {
      await api.close()
    }
  })
})

describe.skipIf(embedded)('the ERC-1155 opt-in (docs/api.md, "ERC-1155")', () => {
  it('keeps the default feeds on the full feed index and reads the ERC-1155 ones from their indexes', async () => {
    const multi = '0x00000000000000000000000000000000000e1155'
    const tokens = 400
    // ERC-1155 rows among the ERC-721 ones, as the indexer stores them: a listed collection, tokens, 50
    // holders each (the volume's holder holds 30 of them), transfers with an amount over the same time range.
    await db.pool.query(
      `INSERT INTO collections (address, name, symbol, standard, listed, metadata_status)
       VALUES ($1, 'Multi', 'MULTI', 'ERC1155', true, 'ok')`,
      [multi],
    )
    await db.pool.query(
      `INSERT INTO tokens (collection_address, token_id, current_owner, total_supply, holder_count)
       SELECT $1, n, '0x0000000000000000000000000000000000000000', 1000, 50 FROM generate_series(1, $2::int) n`,
      [multi, tokens],
    )
    await db.pool.query(
      `INSERT INTO token_balances (collection_address, token_id, owner, balance)
       SELECT $1, n, CASE WHEN h = 1 AND n % 13 = 0 THEN $3 ELSE '0x' || lpad(to_hex(n * 100 + h), 40, '0') END, 20
         FROM generate_series(1, $2::int) n, generate_series(1, 50) h`,
      [multi, tokens, volume.holder],
    )
    await db.pool.query(
      `INSERT INTO transfers (collection_address, token_id, from_address, to_address, event_type, block_number,
                              block_timestamp, transaction_hash, log_index, amount)
       SELECT $1, 1 + n % $2, '0x0000000000000000000000000000000000000000', $3, 'mint', 1,
              lo + (hi - lo) * random(), '0x' || md5('erc1155 ' || n) || md5('tx ' || n), 0, 7
         FROM generate_series(1, 2000) n,
              (SELECT min(block_timestamp) AS lo, max(block_timestamp) AS hi
                 FROM transfers) r`,
      [multi, tokens, volume.holder],
    )
    await db.pool.query('VACUUM ANALYZE')
    const { ctx, plans } = explainingContext(db.pool)
    const run = async (call: () => Promise<unknown>) => {
      const before = plans.length
      await call()
      return plans.slice(before).flat()
    }
    const scans = (nodes: PlanNode[], index: string) => nodes.filter((n) => n['Index Name'] === index)

    // Default: each event type's page walked on the full index as before, each entry's row checked (ERC-1155
    // rows have an amount); never the partial index, never a sort.
    for (const input of [{}, { before_timestamp: 1_767_226_000_000_000, before_id: 2000 }]) {
      const nodes = await run(() => listActivity(ctx, input))
      expectIndexUse(nodes, 'transfers_event_type_feed_idx')
      expect(scans(nodes, 'transfers_event_type_feed_idx').length).toBe(3)
      expect(scans(nodes, 'transfers_erc1155_feed_idx')).toEqual([])
      expectNoSort(nodes)
    }
    // ERC-1155 only: the partial index, one scan per event type.
    const erc1155 = await run(() => listActivity(ctx, { standard: 'ERC1155' }))
    expect(scans(erc1155, 'transfers_erc1155_feed_idx').map((n) => n['Node Type'])).toEqual(
      Array(3).fill('Index Only Scan'),
    )
    expectIndexUse(await run(() => listActivity(ctx, { standard: 'all' })), 'transfers_event_type_feed_idx')

    expectIndexUse(
      await run(() => listCollections(ctx, { standard: 'ERC1155' })),
      'collections_erc1155_listed_idx',
    )
    expectIndexUse(await run(() => listCollections(ctx, {})), 'collections_listed_created_idx')

    expectIndexUse(
      await run(() => listOwnerNfts(ctx, { address: volume.holder, standard: 'ERC1155' })),
      'token_balances_owner_idx',
    )
    const all = await run(() =>
      listOwnerNfts(ctx, {
        address: volume.holder,
        standard: 'all',
        after_collection: volume.big,
        after_token_id: '100',
        after_id: 50,
      }),
    )
    expectIndexUse(all, 'tokens_owner_idx')
    expectIndexUse(all, 'token_balances_owner_idx')

    const holders = await run(() =>
      listTokenHolders(ctx, {
        address: multi,
        tokenId: '7',
        after_balance: '20',
        after_owner: volume.holder,
      }),
    )
    expectIndexUse(holders, 'token_balances_holders_idx')
    expectIndexUse(holders, 'tokens_collection_token_key')
  })
})
