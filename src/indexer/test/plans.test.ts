/**
 * The indexer's statements on its hot paths read their indexes whatever the
 * table statistics say. During a backfill tokens arrive faster than
 * autovacuum analyzes them, so the planner works from a table a tenth of its
 * size, or from a time when no token was due for metadata; these plans must
 * not turn into a scan of every token (docs/indexer.md, "Derived state (definitions)").
 */
import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, isEmbeddedTestDatabase, type TestDatabase } from '@/test/db'
import { explain, type PlanNode } from '@/test/query-plans'
import { dueTokens } from '../metadata/token-job'
import { loadTokenStates, tokenKey } from '../store/token-state'

const COLLECTIONS = 30
const PER_COLLECTION = 1_000
const collection = (i: number) => `0x${(0xc0 + i).toString(16).padStart(40, '0')}`

let db: TestDatabase

/** A pool whose clients EXPLAIN each SELECT (on their own connection, so SET LOCAL holds) before running it. */
function explainingPool(pool: pg.Pool): { pool: pg.Pool; plans: PlanNode[][] } {
  const plans: PlanNode[][] = []
  const wrap = (client: pg.PoolClient) =>
    ({
      async query(sql: string, params?: unknown[]) {
        if (/^\s*SELECT/i.test(sql)) plans.push(await explain(client, sql, params))
        return client.query(sql, params)
      },
      release: (err?: Error | boolean) => client.release(err),
    }) as unknown as pg.PoolClient
  const connect = async () => wrap(await pool.connect())
  const query = async (sql: string, params?: unknown[]) => {
    const client = await connect()
    try {
      return await client.query(sql, params)
    } finally {
      client.release()
    }
  }
  return { pool: { connect, query } as unknown as pg.Pool, plans }
}

const scansOfTokens = (nodes: PlanNode[]) =>
  nodes
    .filter((n) => n['Relation Name'] === 'tokens')
    .map((n) => `${n['Node Type']} ${n['Index Name'] ?? ''}`.trim())

// Plans are PostgreSQL's: the embedded PGlite server (no DATABASE_URL) skips this file.
const embedded = isEmbeddedTestDatabase()

beforeAll(async () => {
  if (embedded) return
  db = await createTestDatabase()
  await db.pool.query(
    `INSERT INTO tokens (collection_address, token_id, current_owner, metadata_status, metadata_next_attempt_at)
     SELECT '0x' || lpad(to_hex(192 + c), 40, '0'), n, '0x' || lpad(to_hex(n % 97 + 1), 40, '0'), 'ok', NULL
       FROM generate_series(0, $1 - 1) AS c, generate_series(1, $2) AS n`,
    [COLLECTIONS, PER_COLLECTION],
  )
  await db.pool.query(
    `UPDATE tokens SET metadata_status = 'pending', metadata_next_attempt_at = now() - make_interval(secs => id)`,
  )
}, 120_000)

afterAll(async () => {
  await db?.drop()
})

describe.skipIf(embedded)('indexer statements at 30,000 tokens', () => {
  it("reads a batch's token states one index lookup per key", async () => {
    const keys = Array.from({ length: 1_000 }, (_, i) => tokenKey(collection(i % COLLECTIONS), BigInt(i + 1)))
    const { pool, plans } = explainingPool(db.pool)
    const client = await pool.connect()
    try {
      const states = await loadTokenStates(client, keys)
      expect(states.size).toBe(1_000)
      expect(states.get(keys[5]!)?.owner).toBe(`0x${((6 % 97) + 1).toString(16).padStart(40, '0')}`)
      expect(plans).toHaveLength(1)
      expect(scansOfTokens(plans[0]!)).toEqual(['Index Scan tokens_collection_token_key'])
    } finally {
      client.release()
    }
  })

  it('takes due tokens in index order, not by sorting the backlog', async () => {
    const { pool, plans } = explainingPool(db.pool)
    const jobs = await dueTokens(pool, 200, ['1', '2'])
    // The longest-due first (next attempt = now − id seconds), skipping the ids given.
    expect(jobs.map((j) => Number(j.id))).toEqual(
      Array.from({ length: 200 }, (_, i) => COLLECTIONS * PER_COLLECTION - i),
    )
    expect(plans).toHaveLength(1)
    const nodes = plans[0]!
    expect(nodes.filter((n) => n['Node Type'] === 'Sort')).toEqual([])
    expect(new Set(scansOfTokens(nodes))).toEqual(
      new Set(['Index Scan tokens_metadata_queue_idx', 'Index Scan tokens_metadata_recheck_idx']),
    )
  })

  it('takes due re-checks of settled tokens in index order too', async () => {
    // 500 settled tokens whose re-check is due, longer than any pending token (docs/metadata.md, "Freshness").
    await db.pool.query(
      `UPDATE tokens SET metadata_status = 'http_error', metadata_next_attempt_at = NULL,
              metadata_recheck_at = now() - make_interval(secs => id + 100000) WHERE id <= 500`,
    )
    const { pool, plans } = explainingPool(db.pool)
    const jobs = await dueTokens(pool, 200, ['500'])
    expect(jobs.map((j) => Number(j.id))).toEqual(Array.from({ length: 200 }, (_, i) => 499 - i))
    expect(jobs.every((j) => j.recheck)).toBe(true)
    expect(plans).toHaveLength(1)
    const nodes = plans[0]!
    expect(nodes.filter((n) => n['Node Type'] === 'Sort')).toEqual([])
    expect(new Set(scansOfTokens(nodes))).toEqual(
      new Set(['Index Scan tokens_metadata_queue_idx', 'Index Scan tokens_metadata_recheck_idx']),
    )
  })
})
