/**
 * `npm run bench:cost`: the cost curve. Runs bench:api against the index of
 * each scale (default scales 1 and 3: `npm run bench:seed` and
 * `npm run bench:seed -- --scale 3` first), one after the other in this run,
 * and prints side by side, per endpoint, the server-side p50/p95 of the first
 * page and of page 1,000, the full stack's throughput as a share of the bare
 * node+pg floor, and the table and index bytes per transfer. Latency that
 * stays flat as the data grows is the point (docs/operations.md, "The cost curve").
 *
 * `--scales 1,3` chooses the scales. Results: printed, and bench/results/cost.json.
 */
import { spawnSync } from 'node:child_process'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { apiResultsFile } from './api'
import { benchDatabaseUrl } from './seed'

const HERE = path.dirname(fileURLToPath(import.meta.url))
const RESULTS = path.join(HERE, 'results')
const P95_TARGET_MS = 10
const RATIO_TARGET = 80
/** The one endpoint that reads no table per request (a shared snapshot): its ratio is the stack's own cost. */
const NO_QUERY_CASE = 'GET /v1/indexer/status'

interface ApiResults {
  latency: Array<Record<string, string>>
  throughput: Array<Record<string, string>>
}

interface Storage {
  transfers: number
  tableBytes: number
  indexBytes: number
}

/** Bytes of every table of the index (heap, TOAST and free-space maps) and of their indexes. */
async function storage(url: string): Promise<Storage> {
  const pool = new pg.Pool({ connectionString: url, max: 1 })
  try {
    const { rows } = await pool.query<{ transfers: string; table_bytes: string; index_bytes: string }>(
      `SELECT (SELECT count(*) FROM transfers)::text AS transfers,
              sum(pg_table_size(c.oid))::text AS table_bytes,
              sum(pg_indexes_size(c.oid))::text AS index_bytes
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE c.relkind = 'r' AND n.nspname = current_schema()`,
    )
    const row = rows[0]!
    return {
      transfers: Number(row.transfers),
      tableBytes: Number(row.table_bytes),
      indexBytes: Number(row.index_bytes),
    }
  } finally {
    await pool.end()
  }
}

function runApiBench(scale: number): ApiResults {
  const run = spawnSync(
    process.execPath,
    ['--import', 'tsx', path.join(HERE, 'api.ts'), '--scale', String(scale)],
    {
      stdio: 'inherit',
      env: process.env,
    },
  )
  if (run.status !== 0) throw new Error(`bench:api --scale ${scale} failed (exit ${run.status})`)
  return JSON.parse(readFileSync(path.join(RESULTS, apiResultsFile(scale)), 'utf8')) as ApiResults
}

const ms = (v: string | undefined) => (v ? Number(v) : undefined)

async function main() {
  const at = process.argv.indexOf('--scales')
  const scales = (at === -1 ? '1,3' : process.argv[at + 1]!).split(',').map(Number)
  if (scales.some((s) => !(s > 0)))
    throw new Error('--scales must be a comma-separated list of positive numbers')

  const sizes = new Map<number, Storage>()
  for (const scale of scales) {
    const size = await storage(benchDatabaseUrl(scale)).catch((err: Error) => {
      throw new Error(`scale ${scale}: ${err.message} — run \`npm run bench:seed -- --scale ${scale}\` first`)
    })
    if (size.transfers === 0)
      throw new Error(`scale ${scale} is empty: run \`npm run bench:seed -- --scale ${scale}\``)
    sizes.set(scale, size)
  }
  const results = new Map<number, ApiResults>()
  for (const scale of scales) {
    console.log(`\n━━━ bench:api at scale ${scale} ━━━`)
    results.set(scale, runApiBench(scale))
  }

  console.log('\n━━━ the cost curve ━━━')
  console.log('\nstorage')
  console.table(
    scales.map((scale) => {
      const s = sizes.get(scale)!
      return {
        scale,
        transfers: s.transfers.toLocaleString('en'),
        'table GiB': (s.tableBytes / 2 ** 30).toFixed(2),
        'index GiB': (s.indexBytes / 2 ** 30).toFixed(2),
        'table bytes / transfer': (s.tableBytes / s.transfers).toFixed(0),
        'index bytes / transfer': (s.indexBytes / s.transfers).toFixed(0),
      }
    }),
  )

  const [base, top] = [scales[0]!, scales[scales.length - 1]!]
  const failures: string[] = []
  const latencyRows = results.get(base)!.latency.map((row) => {
    const out: Record<string, string> = { endpoint: row.endpoint! }
    for (const scale of scales) {
      const r = results.get(scale)!.latency.find((l) => l.endpoint === row.endpoint)
      out[`s${scale} first p50/p95`] = r ? `${r['first p50']} / ${r['first p95']}` : ''
      out[`s${scale} deep p50/p95`] = r?.['deep p95'] ? `${r['deep p50']} / ${r['deep p95']}` : ''
      for (const p95 of [ms(r?.['first p95']), ms(r?.['deep p95'])]) {
        if (p95 !== undefined && p95 >= P95_TARGET_MS)
          failures.push(`${row.endpoint} p95 ${p95} ms at scale ${scale}`)
      }
    }
    const b = results.get(base)!.latency.find((l) => l.endpoint === row.endpoint)
    const t = results.get(top)!.latency.find((l) => l.endpoint === row.endpoint)
    const worst = (r: Record<string, string> | undefined) =>
      Math.max(ms(r?.['first p95']) ?? 0, ms(r?.['deep p95']) ?? 0)
    out[`worst p95 s${top}/s${base}`] = b && t ? `${(worst(t) / worst(b)).toFixed(2)}×` : ''
    return out
  })
  console.log('\nserver-side latency (ms), first page and page 1,000')
  console.table(latencyRows)

  const throughputRows = results.get(base)!.throughput.map((row) => {
    const out: Record<string, string> = { endpoint: row.endpoint! }
    for (const scale of scales) {
      const r = results.get(scale)!.throughput.find((x) => x.endpoint === row.endpoint)
      out[`s${scale} full / floor (req/s)`] = r ? `${r['full stack']} / ${r.floor}` : ''
      out[`s${scale} ratio`] = r?.ratio ?? ''
      const ratio = r?.ratio ? Number.parseFloat(r.ratio) : undefined
      if (row.endpoint !== NO_QUERY_CASE && ratio !== undefined && ratio < RATIO_TARGET) {
        failures.push(`${row.endpoint} full stack at ${ratio} % of the floor at scale ${scale}`)
      }
    }
    return out
  })
  console.log('\nthroughput, full stack next to the node+pg floor')
  console.table(throughputRows)

  console.log(
    failures.length === 0
      ? `\nevery endpoint and depth: p95 < ${P95_TARGET_MS} ms at every scale; every database endpoint ≥ ${RATIO_TARGET} % of the floor`
      : `\nmissed targets:\n  ${failures.join('\n  ')}`,
  )
  mkdirSync(RESULTS, { recursive: true })
  writeFileSync(
    path.join(RESULTS, 'cost.json'),
    JSON.stringify(
      {
        at: new Date().toISOString(),
        storage: Object.fromEntries(sizes),
        latency: latencyRows,
        throughput: throughputRows,
        failures,
      },
      null,
      2,
    ),
  )
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err)
  process.exit(1)
})
