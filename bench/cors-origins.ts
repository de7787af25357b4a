/**
 * `npm run bench:cors`: what a CORS lookup costs with many keys' origins
 * (docs/auth.md, "Origins and CORS"). Seeds BENCH_ORIGINS keys (default
 * 200,000), one origin each, in a schema of its own (dropped afterwards), then
 * asks src/server/credentials/cors-origins.ts about origins no key allows (each one
 * new: every ask is a database lookup), one at a time and BENCH_CONCURRENCY at
 * once, then about origins keys do allow. Prints p50/p90/p99 and the
 * process's resident memory before and after.
 */
import pg from 'pg'
import { openDatabase } from '@/db/database'
import { CorsOrigins } from '@/server/credentials/cors-origins'
import { benchSchema, serverUrl } from './bench-schema'

const ORIGINS = Number(process.env.BENCH_ORIGINS ?? 200_000)
const ASKS = Number(process.env.BENCH_ITERATIONS ?? 2_000)
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32)

const rssMb = () => Math.round(process.memoryUsage().rss / 1024 / 1024)

function report(label: string, samples: number[]) {
  const sorted = [...samples].sort((a, b) => a - b)
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!.toFixed(3)
  console.log(
    `${label.padEnd(40)} p50 ${at(0.5)} ms  p90 ${at(0.9)} ms  p99 ${at(0.99)} ms  RSS ${rssMb()} MB`,
  )
}

async function timed(asks: string[], cors: CorsOrigins, concurrency: number): Promise<number[]> {
  const samples: number[] = []
  let next = 0
  const worker = async () => {
    while (next < asks.length) {
      const origin = asks[next++]!
      const start = performance.now()
      await cors.isAllowed(origin)
      samples.push(performance.now() - start)
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
  return samples
}

const { schema, url, pool } = await benchSchema('bench_cors')
try {
  const {
    rows: [user],
  } = await pool.query<{ id: string }>(
    `INSERT INTO users (address) VALUES ('0x00000000000000000000000000000000000c0125') RETURNING id`,
  )
  await pool.query(
    `INSERT INTO api_keys (user_id, name, scopes, allowed_origins)
     SELECT $1, 'bench', ARRAY['read:nfts'], ARRAY['https://app' || g || '.example.com']
     FROM generate_series(1, $2::int) AS g`,
    [user!.id, ORIGINS],
  )
  // As autovacuum would after such an insert: the GIN index's pending list merged.
  await pool.query('VACUUM ANALYZE api_keys')
  console.log(`${ORIGINS.toLocaleString('en')} keys' origins; RSS ${rssMb()} MB before any lookup`)
  // The web process's credential pool: two connections.
  const db = openDatabase(url, { max: 2 })
  const cors = new CorsOrigins(db, 'http://localhost:3000', 500)
  const unknown = (tag: string) => Array.from({ length: ASKS }, (_, i) => `https://${tag}${i}.example.org`)
  report('unknown origins, one at a time', await timed(unknown('seq'), cors, 1))
  report(`unknown origins, ${CONCURRENCY} at once`, await timed(unknown('par'), cors, CONCURRENCY))
  const known = Array.from({ length: ASKS }, (_, i) => `https://app${(i * 97) % ORIGINS}.example.com`)
  report('allowed origins, one at a time', await timed(known, cors, 1))
  await db.close()
} finally {
  await pool.end()
  const admin = new pg.Client({ connectionString: serverUrl })
  await admin.connect()
  await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
  await admin.end()
}
