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
import { selectCollectionOwnersAt, selectOwnerHoldingsAt } from '@/db/queries/owners'
import type { ReadContext } from '@/server/api/read/context'
import { indexerSnapshot } from '@/server/api/read/indexer-snapshot'
import { listActivity } from '@/server/api/v1/activity/activity.handler'
import { listCollectionOwners } from '@/server/api/v1/collections/collection-owners.handler'
import { getCollection, listCollections } from '@/server/api/v1/collections/collections.handler'
import { getCollectionTraits } from '@/server/api/v1/collections/traits.handler'
import { listTokenHolders } from '@/server/api/v1/nfts/holders.handler'
import { getNft, getNftMetadata, listCollectionNfts } from '@/server/api/v1/nfts/nfts.handler'
import {
  listOwnerCollections,
  listOwnerNfts,
  listOwnerTransfers,
} from '@/server/api/v1/owners/owners.handler'
import { listTransfers } from '@/server/api/v1/transfers/transfers.handler'
import { fixturePool } from '@/test/api-fixtures'
import { buildVolume, type VolumeIndex, volume } from '@/test/api-volume'
import { createTestDatabase, isEmbeddedTestDatabase, type TestDatabase } from '@/test/db'
import { analyzingPool, explain, explainAnalyze, type PlanNode } from '@/test/query-plans'
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

/** The plan's scan of `index`, if any. */
const scanOf = (plan: PlanNode[], index: string) => plan.find((n) => n['Index Name'] === index)

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
      // The window of the list, then the trigram indexes through collections_matching (the test below).
      const search = await check(
        () => listCollections(ctx, { search: 'birds 1234' }),
        'collections_listed_created_idx',
      )
      expect(search.some((n) => n['Function Name'] === 'collections_matching')).toBe(true)
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
    // Filtered: also by the GIN index on (collection_address, attributes).
    const filtered = /^tokens_(collection_live_idx|collection_attributes_idx|metadata_queue_idx)$/
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
      /^(token_rarity_position_idx|tokens_collection_attributes_idx|tokens_metadata_queue_idx)$/,
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

describe.skipIf(embedded)('trigram searches', () => {
  it('walk at most the window in list order, then read the trigram indexes, and page every match once in order', async () => {
    const { pool, plans } = analyzingPool(db.pool)
    const ctx: ReadContext = {
      config: { NETWORK: 'devnet', PUBLIC_URL: 'http://api.test', MEDIA_ORIGIN: undefined },
      db: { pool },
      snapshot: () => indexerSnapshot(db.pool, 'devnet', 0),
    }
    const window = 100
    // ERC-1155 collections among the newest, matching too: the default list's walk passes over
    // them, so it reaches further than the window's end counted over every listed collection.
    const editions = Array.from(
      { length: 40 },
      (_, i) => `0x${(0xe1155e00 + i).toString(16).padStart(40, '0')}`,
    )
    await db.pool.query(
      `INSERT INTO collections (address, name, symbol, standard, listed, metadata_status, created_at)
       SELECT a, 'Azure Editions ' || i, 'AED', 'ERC1155', true, 'ok', now() + i * interval '1 second'
         FROM unnest($1::text[]) WITH ORDINALITY AS e(a, i)`,
      [editions],
    )
    // A name past the window's end that the default list's walk still reaches: near and far both find it.
    const { rows: reached } = await db.pool.query(
      `SELECT name FROM collections WHERE listed AND standard IS DISTINCT FROM 'ERC1155'
        ORDER BY created_at DESC, id DESC OFFSET 80 LIMIT 1`,
    )
    const ofStandard = {
      ERC721: "standard IS DISTINCT FROM 'ERC1155'",
      ERC1155: "standard = 'ERC1155'",
      all: 'true',
    }
    try {
      // Names are "Azure|Crimson Apes|Punks|Birds|Glyphs <n>" (src/test/api-volume.ts): common, rarer,
      // rare (a few matches, the oldest among them far past the window) and none at all.
      for (const standard of ['ERC721', 'ERC1155', 'all'] as const) {
        for (const search of [
          'azure',
          'Punks 1',
          's 123',
          'Glyphs 99',
          'Editions 3',
          reached[0].name,
          'no such',
        ]) {
          const { rows } = await db.pool.query(
            `SELECT address FROM collections
              WHERE listed AND ${ofStandard[standard]} AND (name ILIKE $1 OR symbol ILIKE $1)
              ORDER BY created_at DESC, id DESC`,
            [`%${search}%`],
          )
          const found: string[] = []
          let cursor: { before_timestamp: number; before_id: number } | undefined
          for (;;) {
            plans.length = 0
            const input = { search, limit: 7, standard, ...cursor }
            const page = await listCollections(ctx, input, { searchWindow: window })
            // Rows read in list order: the window (and the ERC-1155 rows the default list passes
            // over, as its plain list does), and the window again to find where it ends; never the
            // rest of the list.
            const read = plans
              .flatMap((p) => p.nodes)
              .filter((n) => /^collections_(listed_created|erc1155_listed)_idx$/.test(n['Index Name'] ?? ''))
              .reduce((sum, n) => sum + (n['Actual Rows'] ?? 0) + (n['Rows Removed by Filter'] ?? 0), 0)
            const passedOver = standard === 'ERC721' ? editions.length : 0
            expect(read, `${standard} ${search}: rows walked in list order`).toBeLessThanOrEqual(
              2 * window + passedOver,
            )
            found.push(...page.data.map((c) => c.contract_address))
            if (!page.pagination.has_more) break
            cursor = page.pagination.next_page_params
          }
          expect(found, `${standard} ${search}`).toEqual(rows.map((r) => r.address))
        }
      }
    } finally {
      await db.pool.query('DELETE FROM collections WHERE address = ANY($1)', [editions])
    }
    // The far part's own statement, as the function defines it, under its settings: the trigram
    // indexes alone (a walk of the list or a scan of the table is not allowed to it).
    const client = await db.pool.connect()
    try {
      await client.query('BEGIN')
      const { rows } = await client.query(
        `SELECT prosrc, proconfig FROM pg_proc
          WHERE proname = 'collections_matching' AND pronamespace = current_schema()::regnamespace`,
      )
      for (const setting of rows[0].proconfig as string[]) {
        const [name, value] = setting.split('=')
        await client.query(`SET LOCAL ${name} = ${value}`)
      }
      for (const pattern of ['%azure%', '%s 123%', '%no such name%']) {
        expectIndexUse(await explain(client, rows[0].prosrc, [pattern]), /collections_(name|symbol)_trgm_idx/)
      }
    } finally {
      await client.query('ROLLBACK')
      client.release()
    }
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
    // After a cursor the scan starts at the cursor: the row comparison is the only bound on the
    // owner (with owner = beside it the scan starts at the owner's first entry), and nothing sorts
    // the owner's rows.
    const deep = await run(() =>
      listOwnerNfts(ctx, {
        address: volume.holder,
        standard: 'ERC1155',
        after_collection: multi,
        after_token_id: '3',
        after_id: 1,
      }),
    )
    const [deepScan] = scans(deep, 'token_balances_owner_idx')
    expect(deepScan?.['Index Cond']).toMatch(/ROW\(/)
    expect(deepScan?.['Index Cond']).not.toMatch(/owner\)::text = /)
    expectNoSort(deep) // the page's own ORDER BY over its rows only
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
    // Each side of the cursor is one range of the index (the cursor in its bounds, not in a
    // filter over the token's entries from the first).
    expect(
      scans(holders, 'token_balances_holders_idx').map((n) => n['Index Cond']?.match(/balance [=<] /)?.[0]),
    ).toEqual(['balance = ', 'balance < '])
    expectIndexUse(holders, 'tokens_collection_token_key')
  })
})

/** A ReadContext that records each statement with its plan and the buffers it touched. */
function measuringContext(pool: pg.Pool) {
  const statements: Array<{ sql: string; plan: PlanNode[]; buffers: number }> = []
  /** Records a statement (transaction control and settings are run, not recorded). */
  const record = async (sql: string, params?: unknown[]) => {
    if (!/indexer_state|set_config/.test(sql) && /^\s*(SELECT|WITH)/i.test(sql))
      statements.push({
        sql,
        plan: await explain(pool, sql, params),
        buffers: (await explainAnalyze(pool, sql, params)).buffers,
      })
  }
  // Named statements come as a query config (src/db/queries/owners.ts).
  type Query = string | { text: string; values?: unknown[] }
  const recordQuery = (query: Query, params?: unknown[]) =>
    typeof query === 'string' ? record(query, params) : record(query.text, query.values)
  const measuring = {
    async query(query: Query, params?: unknown[]) {
      await recordQuery(query, params)
      return pool.query(query, params)
    },
    // A snapshot's statement runs on one connection, in its own transaction.
    async connect() {
      const client = await pool.connect()
      return {
        async query(query: Query, params?: unknown[]) {
          await recordQuery(query, params)
          return client.query(query, params)
        },
        release: () => client.release(),
      }
    },
  } as unknown as pg.Pool
  const ctx: ReadContext = {
    config: { NETWORK: 'devnet', PUBLIC_URL: 'http://api.test', MEDIA_ORIGIN: undefined },
    db: { pool: measuring },
    snapshot: () => indexerSnapshot(pool, 'devnet', 0),
  }
  /** The statements one call ran. */
  const run = async (call: () => Promise<unknown>) => {
    const before = statements.length
    await call()
    return statements.slice(before)
  }
  return { ctx, run }
}

describe.skipIf(embedded)('ownership views (docs/api.md, "Ownership views")', () => {
  const owned = '0x00000000000000000000000000000000000c0113'
  const multi = '0x00000000000000000000000000000000000e1156'
  const busy = '0x00000000000000000000000000000000000b0b05'
  const HOLDERS = 20_000

  beforeAll(async () => {
    // A collection of 20,000 holders with tied counts, and a wallet in 2,000 of 20,000 collections with
    // 20,000 transfers in and out, among the volume's rows (what the indexer would have written).
    await db.pool.query(
      `INSERT INTO collections (address, name, symbol, standard, listed, metadata_status)
       VALUES ($1, 'Owned', 'OWN', 'ERC721', true, 'ok')`,
      [owned],
    )
    await db.pool.query(
      `INSERT INTO collection_holders (collection_address, owner, token_count)
       SELECT $1, '0x' || lpad(to_hex(n), 40, '0'), 1 + n % 50 FROM generate_series(1, $2::int) n`,
      [owned, HOLDERS],
    )
    await db.pool.query(
      `INSERT INTO collection_holders (collection_address, owner, token_count)
       SELECT '0xcc' || lpad(to_hex(n * 10), 38, '0'), $1, 1 + n % 3 FROM generate_series(1, $2::int) n`,
      [busy, HOLDERS / 10],
    )
    // Ten other holders in each of those collections: one wallet is a small share of all holdings.
    await db.pool.query(
      `INSERT INTO collection_holders (collection_address, owner, token_count)
       SELECT '0xcc' || lpad(to_hex(1 + n % $1::int), 38, '0'), '0xaa' || lpad(to_hex(n), 38, '0'), 1
         FROM generate_series(1, 10 * $1::int) n`,
      [HOLDERS],
    )
    await db.pool.query(
      `INSERT INTO transfers (collection_address, token_id, from_address, to_address, event_type, block_number,
                              block_timestamp, transaction_hash, log_index)
       SELECT $1, n, CASE WHEN n % 2 = 0 THEN $2 ELSE '0xdd' || lpad(to_hex(n), 38, '0') END,
              CASE WHEN n % 2 = 1 THEN $2 ELSE '0xdd' || lpad(to_hex(n), 38, '0') END, 'transfer', 1,
              '2026-01-01T00:00:00Z'::timestamptz + n * interval '1 second',
              '0x' || md5('busy ' || n) || md5('busy tx ' || n), 0
         FROM generate_series(1, $3::int) n`,
      [owned, busy, HOLDERS],
    )
    // An ERC-1155 collection: 5 token ids, 2,000 holders of 1 to 5 of them, counted as the indexer counts.
    await db.pool.query(
      `INSERT INTO collections (address, name, symbol, standard, listed, metadata_status)
       VALUES ($1, 'Multi owned', 'MOWN', 'ERC1155', true, 'ok')`,
      [multi],
    )
    await db.pool.query(
      `INSERT INTO token_balances (collection_address, token_id, owner, balance)
       SELECT $1, t, '0xee' || lpad(to_hex(h), 38, '0'), h % 7 + 1
         FROM generate_series(1, 2000) h, generate_series(1, 5) t WHERE t <= 1 + h % 5`,
      [multi],
    )
    await db.pool.query(
      `INSERT INTO collection_holders (collection_address, owner, token_count)
       SELECT collection_address, owner, count(*) FROM token_balances
        WHERE collection_address = $1 AND balance > 0 GROUP BY collection_address, owner`,
      [multi],
    )
    await db.pool.query('VACUUM ANALYZE')
  }, 120_000)

  it('reads each list as index ranges, with the same bounded buffers on the first and a deep page', async () => {
    const { ctx, run } = measuringContext(db.pool)
    /** Runs first and deep pages: each reads `index`, never sorts its range, and touches few buffers. */
    const bounded = async (
      index: string,
      first: () => Promise<unknown>,
      deep: () => Promise<unknown>,
      maxSorts = 1,
    ) => {
      const [a, b] = [await run(first), await run(deep)]
      for (const statements of [a, b]) {
        const nodes = statements.flatMap((s) => s.plan)
        expectIndexUse(nodes, index)
        expect(nodes.filter((n) => n['Node Type'] === 'Sort').length, 'sorts').toBeLessThanOrEqual(maxSorts)
      }
      const [fa, fb] = [a, b].map((statements) => statements.reduce((sum, s) => sum + s.buffers, 0)) as [
        number,
        number,
      ]
      // Depth costs nothing: a deep page touches about what the first one does (pages of 100 rows).
      expect(fb, `${index}: ${fa} buffers on page 1, ${fb} deep`).toBeLessThanOrEqual(
        Math.max(2 * fa, fa + 40),
      )
      // A page of 100 rows: a few buffers per row at most (an ERC-1155 holder's balance is a lookup of its own).
      expect(fb, index).toBeLessThan(1000)
      return b
    }

    const holders = await bounded(
      'collection_holders_count_idx',
      () => listCollectionOwners(ctx, { address: owned, limit: 100 }),
      () =>
        listCollectionOwners(ctx, {
          address: owned,
          limit: 100,
          after_token_count: 25,
          after_owner: `0x${(12_345).toString(16).padStart(40, '0')}`,
        }),
      2,
    )
    // An ERC-1155 collection: each holder's balance summed from its range of token_balances_owner_idx.
    const multiHolders = await bounded(
      'token_balances_owner_idx',
      () => listCollectionOwners(ctx, { address: multi, limit: 100 }),
      () =>
        listCollectionOwners(ctx, {
          address: multi,
          limit: 100,
          after_token_count: 2,
          after_owner: `0xee${(1000).toString(16).padStart(38, '0')}`,
        }),
      2,
    )
    expectIndexUse(
      multiHolders.flatMap((s) => s.plan),
      'collection_holders_count_idx',
    )
    // After a cursor, each side of it is one range: the rest of its count, then the smaller counts
    // (the first range, read in owner order, is sorted into the merge: at most a page of rows).
    expect(
      holders
        .flatMap((s) => s.plan)
        .filter((n) => n['Index Name'] === 'collection_holders_count_idx')
        .map((n) => n['Index Cond']?.match(/token_count [=<] /)?.[0]),
    ).toEqual(['token_count = ', 'token_count < '])

    await bounded(
      'collection_holders_owner_idx',
      () => listOwnerCollections(ctx, { address: busy, limit: 100 }),
      () =>
        listOwnerCollections(ctx, {
          address: busy,
          limit: 100,
          after_collection: `0xcc${(15_000).toString(16).padStart(38, '0')}`, // the 1,500th of its 2,000
        }),
    )

    const deepTime = { before_timestamp: 1_767_225_600_000_000 + 5_000 * 1_000_000, before_id: 2 ** 40 }
    for (const [direction, index] of [
      ['all', /^transfers_(from|to)_feed_idx$/],
      ['in', 'transfers_to_feed_idx'],
      ['out', 'transfers_from_feed_idx'],
    ] as const) {
      const feed = await bounded(
        typeof index === 'string' ? index : 'transfers_from_feed_idx',
        () => listOwnerTransfers(ctx, { address: busy, limit: 100, direction }),
        () => listOwnerTransfers(ctx, { address: busy, limit: 100, direction, ...deepTime }),
      )
      if (direction === 'all')
        expectIndexUse(
          feed.flatMap((s) => s.plan),
          'transfers_to_feed_idx',
        )
    }

    // The collection filter: one range of tokens_owner_idx per collection, starting at the cursor, each
    // at most a page; the first page of them is picked by a sort of at most (collections × page) rows.
    // The first collection (the cursor's) is walked alone first, the others only when it leaves the
    // page short: at most two statements of two sorts each.
    const collections = [volume.big, ...index.collections.slice(1, 100)]
    const filtered = await bounded(
      'tokens_owner_idx',
      () => listOwnerNfts(ctx, { address: volume.holder, limit: 100, collection: collections }),
      () =>
        listOwnerNfts(ctx, {
          address: volume.holder,
          limit: 100,
          collection: collections,
          after_collection: volume.big,
          after_token_id: '300',
          after_id: 1,
        }),
      4,
    )
    // Deep in a collection that fills the page, the other 99 are not read.
    expect(filtered).toHaveLength(1)
  })

  it('computes a snapshot from index ranges once, then pages it without the database', async () => {
    const { ctx, run } = measuringContext(db.pool)
    const { rows } = await db.pool.query(
      "SELECT last_confirmed_block::text AS b FROM indexer_state WHERE network = 'devnet'",
    )
    const at_block = rows[0].b as string
    const scanned = (statements: Array<{ plan: PlanNode[] }>) => statements.flatMap((s) => s.plan)
    // The holders at a block: one pass over the collection's transfers, by index (a sort of them is the
    // snapshot's computation); the next pages read nothing.
    const first = await run(() => listCollectionOwners(ctx, { address: volume.big, limit: 10, at_block }))
    expectIndexUse(scanned(first.filter((s) => /block_number <=/.test(s.sql))), /^transfers_/)
    const page = await listCollectionOwners(ctx, { address: volume.big, limit: 10, at_block })
    const next = await run(() =>
      listCollectionOwners(ctx, {
        address: volume.big,
        limit: 10,
        at_block,
        after_token_count: page.pagination.next_page_params!.after_token_count,
        after_owner: page.pagination.next_page_params!.after_owner,
      }),
    )
    expect(next.filter((s) => /block_number <=/.test(s.sql))).toEqual([])

    // A wallet's holdings at a block near the head, back from now: its holdings now (tokens_owner_idx,
    // token_balances_owner_idx) and its transfers since the block (both wallet indexes, from a time
    // bound), each changed token's last transfer up to the block by the token's feed index; a page
    // then reads its own tokens' histories only.
    const wallet = volume.others[3]!
    const holdings = await run(() => listOwnerNfts(ctx, { address: wallet, standard: 'all', at_block }))
    const back = scanned(holdings.filter((s) => /changed AS MATERIALIZED/.test(s.sql)))
    for (const index of [
      'tokens_owner_idx',
      'token_balances_owner_idx',
      'transfers_to_feed_idx',
      'transfers_from_feed_idx',
      'transfers_token_feed_idx',
    ])
      expectIndexUse(back, index)
    for (const index of ['transfers_to_feed_idx', 'transfers_from_feed_idx'])
      expect(scanOf(back, index)?.['Index Cond']).toMatch(/block_timestamp >=/)
    const states = scanned(holdings.filter((s) => /row_number\(\) OVER/.test(s.sql)))
    expectIndexUse(states, 'transfers_token_feed_idx')
    const again = await run(() => listOwnerNfts(ctx, { address: wallet, standard: 'all', at_block }))
    expect(again.filter((s) => /changed AS MATERIALIZED/.test(s.sql))).toEqual([])
    expect(again.reduce((sum, s) => sum + s.buffers, 0)).toBeLessThan(1000)
    // Forward, from its history: its transfers in and out by the wallet indexes, each candidate token's
    // last transfer by the token's feed index.
    const { rows: span } = await db.pool.query(
      "SELECT coalesce(coverage_start_block, 0)::text AS since, last_seen_block::text AS head FROM indexer_state WHERE network = 'devnet'",
    )
    const forward = scanned(
      await run(() =>
        selectOwnerHoldingsAt(ctx.db, {
          owner: wallet,
          block: BigInt(at_block),
          standard: 'all',
          head: BigInt(span[0].head),
          since: BigInt(span[0].since),
          arm: 'forward',
        }),
      ),
    )
    for (const index of ['transfers_to_feed_idx', 'transfers_from_feed_idx', 'transfers_token_feed_idx'])
      expectIndexUse(forward, index)
  })

  it('computes a collection’s holders at a block each way from index ranges, the block bounded in time by bisection', async () => {
    const { ctx, run } = measuringContext(db.pool)
    const { rows } = await db.pool.query(
      `SELECT coalesce(c.first_seen_block, c.deploy_block, 0)::text AS since, s.last_seen_block::text AS head,
              (SELECT count(*)::int FROM tokens t WHERE t.collection_address = c.address) AS tokens
         FROM collections c, indexer_state s WHERE c.address = $1 AND s.network = 'devnet'`,
      [volume.big],
    )
    const [since, head] = [BigInt(rows[0].since), BigInt(rows[0].head)]
    const tokens = rows[0].tokens as number
    expect(tokens).toBeGreaterThan(500)
    const q = { address: volume.big, block: (since + head) / 2n, multi: false, head, since }
    /** The node of `index` in a plan, with its condition. */
    for (const arm of ['forward', 'back', 'per-token'] as const) {
      const [bounds, computation, ...more] = await run(() => selectCollectionOwnersAt(ctx.db, { ...q, arm }))
      expect(more).toEqual([])
      // The bisection: a descent of each event type's range per step, a few hundred buffers whatever the
      // collection's size (about log2 of its time span in microseconds steps).
      expect(bounds!.sql).toMatch(/WITH RECURSIVE/)
      expectIndexUse(bounds!.plan, 'transfers_collection_event_type_feed_idx')
      expect(bounds!.buffers, 'bisection').toBeLessThan(1500)
      const plan = computation!.plan
      if (arm === 'per-token') {
        // Each token's entry, then one descent of its transfers from the time bound: a few buffers per token.
        expectIndexUse(plan, /^tokens_collection_/)
        expect(scanOf(plan, 'transfers_token_feed_idx')?.['Index Cond']).toMatch(/block_timestamp <=/)
        expect(computation!.buffers, 'per token').toBeLessThan(10 * tokens)
      } else {
        // One time range per event type: the history up to the block, or the changes since.
        expect(scanOf(plan, 'transfers_collection_event_type_feed_idx')?.['Index Cond']).toMatch(
          arm === 'forward' ? /block_timestamp <=/ : /block_timestamp >=/,
        )
        expectIndexUse(plan, 'transfers_collection_event_type_feed_idx')
      }
    }
  })
})
