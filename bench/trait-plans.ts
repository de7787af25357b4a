/**
 * `npm run bench:traits` (after `npm run bench:seed`): the database side of trait-filtered
 * pages (docs/api.md, "Traits") on `nft_bench` (BENCH_DATABASE_URL to choose another), read-only.
 * Each case runs the statement of selectCollectionTokens (src/db/queries/tokens.ts) or
 * selectCollectionTokensByRarity under EXPLAIN (ANALYZE, BUFFERS), BENCH_SAMPLES times (default 5),
 * and prints the median execution time, the rows read from `tokens` (rows kept and removed by
 * filters, index rechecks included, times loops), the buffers and the indexes the plan read
 * (those of the nodes that ran).
 *
 * Cases: filters absent from BIG (500,000 tokens, no attributes) but present in TRAITS (Blue its
 * most common Background, Red the next, Gold the rarest; the three traits below); on TRAITS a common
 * value (Background:Red), a rare one (Background:Gold) and three traits (Background:Blue, Body:Plain,
 * Eyes:Eyes 1), the first page and a page from the middle of the matching tokens; the rare value
 * under sort=rarity when TRAITS is ranked.
 */
import pg from 'pg'
import { selectCollectionTokensByRarity } from '@/db/queries/rarity'
import { selectCollectionTokens } from '@/db/queries/tokens'
import { analyzingPool, rowsRead } from '@/test/query-plans'
import { BIG, benchDatabaseUrl, TRAITS } from './seed'

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 5)
const ROWS = 21

const pool = new pg.Pool({
  connectionString: benchDatabaseUrl(),
  max: 1,
  options: '-c default_transaction_read_only=on',
})

interface Measure {
  ms: number
  tokenRows: number
  buffers: number
  indexes: string[]
  rows: number
}

async function measure(run: (db: { pool: pg.Pool }) => Promise<unknown[]>): Promise<Measure> {
  const analyzing = analyzingPool(pool)
  const rows = (await run({ pool: analyzing.pool })).filter((r) => (r as { id: unknown }).id !== null).length
  const plan = analyzing.plans.at(-1)
  if (!plan) throw new Error('no statement ran')
  const indexes = [
    ...new Set(plan.nodes.flatMap((n) => (n['Index Name'] && n['Actual Loops'] ? [n['Index Name']] : []))),
  ]
  return {
    ms: plan.executionMs,
    tokenRows: rowsRead(plan.nodes, 'tokens'),
    buffers: plan.buffers,
    indexes,
    rows,
  }
}

const doc = (type: string, value: string) => JSON.stringify([{ trait_type: type, value }])

async function matching(address: string, traits: string[][]): Promise<{ tokenId: string; id: number }[]> {
  const { rows } = await pool.query<{ token_id: string; id: string }>(
    `SELECT t.token_id::text, t.id::text FROM tokens t
      WHERE t.collection_address = $1 AND NOT t.is_burned AND t.metadata_status = 'ok'
        AND t.attributes @> ALL($2::jsonb[]) ORDER BY t.token_id, t.id`,
    [address, traits.map((documents) => documents[0])],
  )
  return rows.map((r) => ({ tokenId: r.token_id, id: Number(r.id) }))
}

async function main() {
  const red = [[doc('Background', 'Red')]]
  const gold = [[doc('Background', 'Gold')]]
  const three = [[doc('Background', 'Blue')], [doc('Body', 'Plain')], [doc('Eyes', 'Eyes 1')]]
  const cases: Array<{ name: string; run: (db: { pool: pg.Pool }) => Promise<unknown[]> }> = []
  const list =
    (address: string, traits: string[][], after?: { tokenId: string; id: number }) =>
    (db: { pool: pg.Pool }) =>
      selectCollectionTokens(db, { address, includeBurned: false, rows: ROWS, traits, after })
  for (const [name, traits] of [
    ['Background:Blue', [[doc('Background', 'Blue')]]],
    ['Background:Red', red],
    ['Background:Gold', gold],
    ['three traits', three],
  ] as const)
    cases.push({ name: `BIG ${name} (absent), first page`, run: list(BIG, traits as string[][]) })
  for (const [name, traits] of [
    ['Background:Red', red],
    ['Background:Gold (rare)', gold],
    ['three traits', three],
  ] as const) {
    const found = await matching(TRAITS, traits as string[][])
    cases.push({
      name: `TRAITS ${name} (${found.length} tokens), first page`,
      run: list(TRAITS, traits as string[][]),
    })
    const middle = found[Math.floor(found.length / 2)]
    if (middle)
      cases.push({
        name: `TRAITS ${name}, a page from the middle`,
        run: list(TRAITS, traits as string[][], middle),
      })
  }
  // sort=rarity reads the stored ranking: measured only where bench:seed left one.
  const ranked = await pool.query('SELECT 1 FROM token_rarity WHERE collection_address = $1 LIMIT 1', [
    TRAITS,
  ])
  if (ranked.rowCount)
    cases.push({
      name: 'TRAITS sort=rarity Background:Gold (rare), first page',
      run: (db) => selectCollectionTokensByRarity(db, { address: TRAITS, rows: ROWS, traits: gold }),
    })

  for (const c of cases) {
    const samples: Measure[] = []
    for (let i = 0; i < SAMPLES; i++) samples.push(await measure(c.run))
    samples.sort((a, b) => a.ms - b.ms)
    const m = samples[Math.floor(samples.length / 2)]!
    console.log(
      `${c.name}: ${m.ms.toFixed(2)} ms (min ${samples[0]!.ms.toFixed(2)}), ${m.rows} rows, ` +
        `${m.tokenRows.toLocaleString('en-US')} token rows read, ${m.buffers.toLocaleString('en-US')} buffers; ${m.indexes.join(', ')}`,
    )
  }
}

try {
  await main()
} finally {
  await pool.end()
}
