/**
 * `npm run bench:search` (after `npm run bench:seed`): the collection search of
 * `GET /v1/collections?search=` with a run of three or more letters or digits, on `nft_bench`
 * (BENCH_DATABASE_URL to choose another), read-only.
 *
 * Each pattern two ways, with the same first page (it throws if they differ): as the API asks
 * (selectListedCollectionsMatching: the window of the list, then the trigram indexes alone;
 * docs/database.md, "Collection search") and as one ordered statement, the way the planner
 * chooses (walk the list or read the trigram indexes, by its guess of how common the pattern
 * is). Per way: p50 / p95 of sequential runs (ms) and the rows of `collections` its plan read
 * (EXPLAIN ANALYZE: kept, filtered out and rechecked; the far part's own statement, inside
 * `collections_matching`, is not in the caller's plan), as a Markdown table. BENCH_SEARCH_WINDOW
 * sets the window (default SEARCH_WINDOW, 1,000).
 */
import { createPool } from '@/db/client'
import { selectListedCollectionsMatching } from '@/db/queries/collections'
import { type ReadDb, substringPattern } from '@/db/queries/sql'
import { SEARCH_WINDOW } from '@/server/api/v1/collections/collections.handler'
import { analyzingPool, rowsRead } from '@/test/query-plans'
import { benchDatabaseUrl } from './seed'

const RUNS = Number(process.env.BENCH_RUNS ?? 40)
const ROWS = 21
const WINDOW = Number(process.env.BENCH_SEARCH_WINDOW ?? SEARCH_WINDOW)
const readOnly = '-c default_transaction_read_only=on'
const pool = createPool(`${benchDatabaseUrl()}?options=${encodeURIComponent(readOnly)}`, { max: 2 })

type Way = (db: ReadDb, search: string) => Promise<string[]>

const asAsked: Way = async (db, search) =>
  (await selectListedCollectionsMatching(db, { search, rows: ROWS, window: WINDOW })).map((r) => r.id)

/** The default list's conditions and one ordered statement: the plan is the planner's choice. */
const plannersChoice: Way = async (db, search) =>
  (
    await db.pool.query<{ id: string }>(
      `SELECT c.id::text AS id FROM collections c
        WHERE c.listed AND c.standard IS DISTINCT FROM 'ERC1155' AND (c.name ILIKE $1 OR c.symbol ILIKE $1)
        ORDER BY c.created_at DESC, c.id DESC LIMIT $2`,
      [substringPattern(search), ROWS],
    )
  ).rows.map((r) => r.id)

async function rowsOfCollections(way: Way, search: string): Promise<number> {
  const analyzing = analyzingPool(pool)
  await way({ pool: analyzing.pool }, search)
  return Math.round(analyzing.plans.reduce((sum, p) => sum + rowsRead(p.nodes, 'collections'), 0))
}

/** p50 / p95 (ms) of RUNS sequential calls. */
async function timed(way: Way, search: string): Promise<string> {
  const t: number[] = []
  for (let i = 0; i < RUNS; i++) {
    const start = performance.now()
    await way({ pool }, search)
    t.push(performance.now() - start)
  }
  t.sort((a, b) => a - b)
  return `${t[Math.floor(RUNS / 2)]!.toFixed(2)} / ${t[Math.min(RUNS - 1, Math.floor(RUNS * 0.95))]!.toFixed(2)}`
}

async function main() {
  // Names on the benchmark index are "Bench <Kind> <n>", symbols "B<n>" (bench/seed.ts).
  const patterns: Array<[string, string]> = [
    ['apes 1234', 'bench:api’s trigram case: no match'],
    ['s 1493', '11 matches, guessed 185'],
    ['Robots 149', '14 matches'],
    ['Pioneers 36', '9 matches'],
    ['zzq', 'no match, three letters'],
    ['ench', 'every collection'],
    ['Bench Robots', 'a fifth of them'],
  ]
  const lines = [
    '| pattern | matches | as asked ms | rows read | planner’s choice ms | rows read |',
    '| --- | --- | --- | --- | --- | --- |',
  ]
  for (const [search, what] of patterns) {
    const [asked, chosen] = [await asAsked({ pool }, search), await plannersChoice({ pool }, search)]
    if (asked.join() !== chosen.join())
      throw new Error(`${search}: as asked ${asked}, planner's choice ${chosen}`)
    lines.push(
      `| \`${search}\` | ${what} | ${await timed(asAsked, search)} | ${await rowsOfCollections(asAsked, search)} | ${await timed(plannersChoice, search)} | ${await rowsOfCollections(plannersChoice, search)} |`,
    )
  }
  console.log(lines.join('\n'))
}

try {
  await main()
} finally {
  await pool.end()
}
