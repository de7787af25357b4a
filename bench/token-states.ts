/**
 * `npm run bench:token-states` (after `npm run bench:seed`): one token's state at a past block
 * (selectTokenStatesAt, src/db/queries/owners.ts: GET /v1/nfts/{address}/{tokenId}?at_block= and the
 * token states of a holdings page at a block; docs/api.md, "Snapshots"; bench/RESULTS.md, "API: one
 * token at a block") on `nft_bench` (BENCH_DATABASE_URL to choose another), read-only.
 *
 * Each case forward (the history up to the block, as every token was computed before the back way)
 * and as the API asks, with the same answer (it throws if they differ): p50 / p95 of sequential runs
 * (ms) and the buffers of their statements (EXPLAIN (ANALYZE, BUFFERS)), as a Markdown table. As the
 * API asks, twice: as the API runs them (queryOnGenericPlan: prepared, one generic plan per
 * connection; docs/database.md, "Prepared statements") and unnamed, parsed and planned for their
 * values each time.
 */
import { isDeepStrictEqual } from 'node:util'
import pg from 'pg'
import { createPool } from '@/db/client'
import { selectTokenStatesAt, type TokenStateAtRow } from '@/db/queries/owners'
import { analyzingPool, rowsRead } from '@/test/query-plans'
import { BIG, benchDatabaseUrl, EDITION, EDITION_TOKEN_ID, WHALE } from './seed'

type Query = Parameters<typeof selectTokenStatesAt>[1]

// Two connections: selectTokenStatesAt may run its two statements at once.
const readOnly = '-c default_transaction_read_only=on'
const pool = createPool(`${benchDatabaseUrl()}?options=${encodeURIComponent(readOnly)}`, { max: 2 })
const plainPool = new pg.Pool({ connectionString: benchDatabaseUrl(), max: 2, options: readOnly })
/** The same statements unnamed: parsed and planned for their values on every run. */
const unnamed = {
  query: (query: string | pg.QueryConfig, values?: unknown[]) =>
    typeof query === 'string' ? plainPool.query(query, values) : plainPool.query(query.text, query.values),
} as unknown as pg.Pool

/** The token states, with what their statements read: transfers rows (kept or filtered) and buffers. */
async function measured(q: Query): Promise<{ rows: TokenStateAtRow[]; transfers: number; buffers: number }> {
  const analyzing = analyzingPool(pool)
  const rows = await selectTokenStatesAt({ pool: analyzing.pool }, q)
  const transfers = analyzing.plans.reduce((sum, p) => sum + rowsRead(p.nodes, 'transfers'), 0)
  return {
    rows,
    transfers: Math.round(transfers),
    buffers: analyzing.plans.reduce((sum, p) => sum + p.buffers, 0),
  }
}

/** p50 / p95 (ms) of `runs` sequential calls. */
async function timed(q: Query, runs: number, db: pg.Pool = pool): Promise<string> {
  const t: number[] = []
  for (let i = 0; i < runs; i++) {
    const start = performance.now()
    await selectTokenStatesAt({ pool: db }, q)
    t.push(performance.now() - start)
  }
  t.sort((a, b) => a - b)
  return `${t[Math.floor(runs / 2)]!.toFixed(2)} / ${t[Math.min(runs - 1, Math.floor(runs * 0.95))]!.toFixed(2)}`
}

const byKey = (rows: TokenStateAtRow[]) =>
  [...rows].sort((a, b) =>
    `${a.collection_address}|${a.token_id}`.localeCompare(`${b.collection_address}|${b.token_id}`),
  )

async function main() {
  const { rows: state } = await pool.query('SELECT last_confirmed_block::text AS b FROM indexer_state')
  const confirmed = BigInt(state[0].b)
  const dayBack = confirmed - 7_200n
  const { rows: held } = await pool.query(
    `SELECT collection_address, token_id::text AS token_id FROM tokens WHERE current_owner = $1
      ORDER BY collection_address, token_id LIMIT 100`,
    [WHALE],
  )
  const one = (collection: string, tokenId: string, transfers?: number) => [
    { collection, tokenId, multi: collection === EDITION, transfers },
  ]
  const cases: Array<[string, Query['keys'], bigint]> = [
    ['EDITION #1 (20,000 transfers), a day back', one(EDITION, EDITION_TOKEN_ID, 20_000), dayBack],
    ['EDITION #1, a day back, on a holdings page (count unknown)', one(EDITION, EDITION_TOKEN_ID), dayBack],
    ['EDITION #1, at the confirmed block', one(EDITION, EDITION_TOKEN_ID, 20_000), confirmed],
    ['EDITION #1, block 1,000,000', one(EDITION, EDITION_TOKEN_ID, 20_000), 1_000_000n],
    ['EDITION #1, block 50,000', one(EDITION, EDITION_TOKEN_ID, 20_000), 50_000n],
    ['BIG #63353 (141 transfers), a day back', one(BIG, '63353', 141), dayBack],
    ['BIG #1001 (7 transfers), a day back', one(BIG, '1001', 7), dayBack],
    [
      "WHALE's first 100 tokens, a day back",
      held.map((r) => ({ collection: r.collection_address, tokenId: r.token_id, multi: false })),
      dayBack,
    ],
  ]
  const lines = [
    '| case | forward ms | buffers | as asked ms | buffers | as asked, unnamed ms |',
    '| --- | --- | --- | --- | --- | --- |',
  ]
  for (const [name, keys, block] of cases) {
    const forward = await measured({ keys, block, way: 'forward' })
    const asked = await measured({ keys, block })
    if (!isDeepStrictEqual(byKey(asked.rows), byKey(forward.rows)))
      throw new Error(
        `${name}: as asked ${JSON.stringify(byKey(asked.rows))}, forward ${JSON.stringify(byKey(forward.rows))}`,
      )
    const long = forward.transfers > 1_000
    const runs = long ? 15 : 30
    lines.push(
      `| ${name} | ${await timed({ keys, block, way: 'forward' }, long ? 7 : 30)} | ${forward.buffers} | ${await timed({ keys, block }, runs)} | ${asked.buffers} | ${await timed({ keys, block }, runs, unnamed)} |`,
    )
  }
  console.log(lines.join('\n'))
}

try {
  await main()
} finally {
  await Promise.all([pool.end(), plainPool.end()])
}
