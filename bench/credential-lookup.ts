/**
 * `npm run bench:credentials`: what one credential lookup costs the web process.
 *
 * Every /v1 request whose API key the verifier has not checked in the last
 * `CREDENTIAL_CACHE_MS` (≤ 1 s) looks its secret up (src/server/credentials/verifier.ts),
 * so a process serving N active keys makes up to N lookups a second on its
 * 2-connection credential pool. Measured in a fresh schema on DATABASE_URL's
 * server: the lookup as shipped (one join over the pool,
 * src/db/queries/api-keys.ts) beside the same read through Prisma Client (its
 * nested `select`, the way it was written before), one after the other and 16
 * at once; the process's own CPU per lookup (the database's is not counted) and
 * lookups per second. docs/auth.md, "Admission before waiting", quotes the figures.
 */
import { openDatabase } from '@/db/database'
import { findKeySecretByHash } from '@/db/queries/api-keys'
import { benchSchema } from './bench-schema'

const LOOKUPS = Number(process.env.BENCH_ITERATIONS ?? 3_000)
const CONCURRENCY = 16
/** Distinct keys, looked up in turn: concurrent lookups are of different secrets, as the verifier's are. */
const KEYS = 64
const hashOf = (i: number) => i.toString(16).padStart(64, '0')

type Lookup = (hash: string) => Promise<unknown>

async function measure(lookup: Lookup, concurrency: number) {
  for (let i = 0; i < 200; i++) await lookup(hashOf(i % KEYS)) // warm-up: connections, plans, JIT
  const cpuBefore = process.cpuUsage()
  const started = performance.now()
  let next = 0
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < LOOKUPS) await lookup(hashOf(next++ % KEYS))
    }),
  )
  const wallMs = performance.now() - started
  const cpu = process.cpuUsage(cpuBefore)
  return { cpuUs: (cpu.user + cpu.system) / LOOKUPS, perSecond: (LOOKUPS / wallMs) * 1000 }
}

async function main() {
  const { schema, url, pool: admin } = await benchSchema('bench_credentials', 1)
  const db = openDatabase(url, { max: 2, applicationName: 'bench-credentials' })
  try {
    await admin.query(
      `INSERT INTO users (address) VALUES ('0x00000000000000000000000000000000000000b1');
       INSERT INTO api_keys (user_id, name, scopes)
         SELECT u.id, 'bench ' || i, ARRAY['read:nfts'] FROM users u, generate_series(0, ${KEYS - 1}) i;
       INSERT INTO api_key_secrets (key_id, secret_hash, prefix)
         SELECT k.id, lpad(to_hex(k.id - min(k.id) OVER ()), 64, '0'), 'nft_bench' FROM api_keys k;`,
    )
    const shipped: Lookup = (hash) => findKeySecretByHash(db, hash)
    const prisma: Lookup = (hash) =>
      db.prisma.apiKeySecret.findUnique({
        where: { secretHash: hash },
        select: {
          secretHash: true,
          expiresAt: true,
          key: {
            select: {
              id: true,
              status: true,
              scopes: true,
              allowedOrigins: true,
              user: { select: { address: true } },
            },
          },
        },
      })
    console.log(`bench:credentials: ${LOOKUPS} lookups of ${KEYS} API keys' secrets in turn, per measure`)
    for (const concurrency of [1, CONCURRENCY]) {
      const ours = await measure(shipped, concurrency)
      const reference = await measure(prisma, concurrency)
      const line = (name: string, m: { cpuUs: number; perSecond: number }) =>
        `  ${name.padEnd(28)} ${m.cpuUs.toFixed(0).padStart(5)} µs CPU per lookup  ${Math.round(m.perSecond).toLocaleString('en').padStart(6)} lookups/s`
      console.log(`${concurrency === 1 ? 'one at a time' : `${concurrency} at once`}:`)
      console.log(line('one join over the pool', ours))
      console.log(line('Prisma nested select', reference))
      console.log(
        `  CPU per lookup: Prisma / pool ${(reference.cpuUs / ours.cpuUs).toFixed(1)}x; lookups/s: pool / Prisma ${(ours.perSecond / reference.perSecond).toFixed(1)}x`,
      )
    }
  } finally {
    await db.close()
    await admin.query(`DROP SCHEMA ${schema} CASCADE`)
    await admin.end()
  }
}

await main()
