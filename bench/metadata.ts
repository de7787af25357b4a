/**
 * npm run bench:metadata — the metadata queue at chain scale, through the real
 * indexer process (bundled as `npm start` runs it) on an anvil devnet.
 *
 * A local host simulator (bench/metadata-hosts.ts) serves BENCH_HOSTS (200)
 * hosts, one collection each, BENCH_TOKENS_PER_HOST (100) tokens minted per
 * collection: 10 % slow (a byte every 3 s), 10 % dead (connect time-out), 5 %
 * answering 429 with Retry-After, the rest fast.
 *
 *  1. clean: only the fast hosts' collections; documents/s over the bulk, then
 *     p95 mint -> ok of probe mints on fast hosts.
 *  2. bad hosts present: every collection; the same figures, probes also
 *     minting on bad hosts. The p95 ratio (2 / 1) is the fairness figure.
 *  3. memory: BENCH_PENDING (1,000,000) tokens pending, peak RSS of the indexer.
 *
 * Env: DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres),
 * BENCH_HOSTS, BENCH_TOKENS_PER_HOST, BENCH_PROBES (60), BENCH_PENDING,
 * BENCH_MEMORY_S (60), BENCH_LOG (a file for the indexer's log lines).
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { appendFileSync } from 'node:fs'
import { mkdtemp } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import type pg from 'pg'
import type { Address } from 'viem'
import type { MetadataQueueReport } from '@/db/queries/indexer-state'
import { buildIndexer } from '@/indexer/bundle'
import { startTestChain, type TestChain } from '@/indexer/test/chain'
import { benchSchema } from './bench-schema'
import { type HostKind, type SimHost, startHostSimulator } from './metadata-hosts'
import { trackPeakRss } from './peak-rss'

const HOSTS = Number(process.env.BENCH_HOSTS ?? 200)
const PER_HOST = Number(process.env.BENCH_TOKENS_PER_HOST ?? 100)
const PROBES = Number(process.env.BENCH_PROBES ?? 60)
const PENDING = Number(process.env.BENCH_PENDING ?? 1_000_000)
const MEMORY_S = Number(process.env.BENCH_MEMORY_S ?? 60)

const log = (msg: string) => process.stdout.write(`[bench] ${msg}\n`)
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const root = path.resolve(import.meta.dirname, '..')

function kindsOf(n: number): HostKind[] {
  // Spread evenly: of every 20 hosts, 2 slow, 2 dead, 1 limit, 15 fast.
  const pattern: HostKind[] = ['slow', 'dead', 'limit', 'slow', 'dead', ...Array<HostKind>(15).fill('fast')]
  return Array.from({ length: n }, (_, i) => pattern[(i * 7) % 20]!)
}

interface Indexer {
  child: ChildProcess
  pool: pg.Pool
  rss: { peakKb(): number; stop(): void }
  stop(): Promise<void>
}

async function startIndexerProcess(chain: TestChain, hosts: SimHost[], tag: string): Promise<Indexer> {
  const { schema, url, pool } = await benchSchema(`bench_metadata_${tag}`)
  const mediaDir = await mkdtemp(path.join(os.tmpdir(), 'bench-media-'))
  const args = await buildIndexer(root)
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: url,
      RPC_URL: chain.anvil.rpcUrl,
      CONFIRMATIONS: '2',
      MEDIA_DIR: mediaDir,
      FETCH_ALLOW_HOSTS: hosts.map((h) => h.key).join(','),
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  child.stdout!.on('data', (chunk: Buffer) => {
    if (process.env.BENCH_LOG) appendFileSync(process.env.BENCH_LOG, chunk)
  })
  const rss = trackPeakRss(child.pid!)
  return {
    child,
    pool,
    rss,
    async stop() {
      rss.stop()
      child.kill('SIGTERM')
      await new Promise((r) => (child.exitCode !== null ? r(null) : child.once('exit', r)))
      await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
      await pool.end()
    },
  }
}

async function deployCollections(chain: TestChain, hosts: SimHost[]): Promise<Address[]> {
  const out: Address[] = []
  for (const [i, h] of hosts.entries()) {
    out.push((await chain.deploy('TestNFT', [`Host ${i}`, `H${i}`, `${h.origin}/m/`])).address)
  }
  return out
}

/** Mints `count` ids from `first` on each collection; returns the time each mint was mined. */
async function mintAll(chain: TestChain, collections: Address[], first: bigint, count: number) {
  const [, owner] = chain.accounts
  const hashes: `0x${string}`[] = []
  for (const c of collections)
    hashes.push(await chain.send(c, 'TestNFT', 'mintBatch', [owner, first, BigInt(count)]))
  for (const hash of hashes) await chain.clients.public.waitForTransactionReceipt({ hash })
}

const done = async (pool: pg.Pool, collections: Address[]) =>
  (
    await pool.query(
      `SELECT count(*)::int AS n FROM tokens WHERE collection_address = ANY($1) AND metadata_status = 'ok'`,
      [collections],
    )
  ).rows[0].n as number

/** Fast-host bulk: documents/s from the first to the last ok. */
async function bulkRate(pool: pg.Pool, fast: Address[], expected: number, limitS = 300) {
  const started = Date.now()
  while ((await done(pool, fast)) < expected) {
    if (Date.now() - started > limitS * 1000) break
    await sleep(250)
  }
  const { rows } = await pool.query(
    `SELECT count(*)::int AS n, extract(epoch FROM max(metadata_fetched_at) - min(metadata_fetched_at))::float AS s
       FROM tokens WHERE collection_address = ANY($1) AND metadata_status = 'ok'`,
    [fast],
  )
  return { ok: rows[0].n as number, docsPerS: rows[0].n / Math.max(rows[0].s, 0.001) }
}

/** Probe mints on fast hosts (and on bad ones, when given), spaced; p95 of mint -> ok over the fast ones. */
async function probe(chain: TestChain, pool: pg.Pool, fast: Address[], bad: Address[], base: bigint) {
  const [, owner] = chain.accounts
  const samples: Array<{ c: Address; first: bigint; mined: number }> = []
  for (let p = 0; p < PROBES; p++) {
    const c = fast[(p * 13) % fast.length]!
    const first = base + BigInt(p * 5)
    const hash = await chain.send(c, 'TestNFT', 'mintBatch', [owner, first, 5n])
    if (bad.length > 0) await chain.send(bad[p % bad.length]!, 'TestNFT', 'mintBatch', [owner, first, 20n])
    await chain.clients.public.waitForTransactionReceipt({ hash })
    samples.push({ c, first, mined: Date.now() })
    // Spread over ~35 s: through the bad hosts' first time-outs, breakers and a retry wave.
    await sleep(500)
  }
  const latencies: number[] = []
  const deadline = Date.now() + 120_000
  for (const s of samples) {
    for (;;) {
      const { rows } = await pool.query(
        `SELECT (extract(epoch FROM metadata_fetched_at) * 1000)::float AS at FROM tokens
          WHERE collection_address = $1 AND token_id >= $2 AND token_id < $2 + 5 AND metadata_status = 'ok'`,
        [s.c, s.first.toString()],
      )
      if (rows.length === 5 || Date.now() > deadline) {
        for (const r of rows) latencies.push(r.at - s.mined)
        for (let k = rows.length; k < 5; k++) latencies.push(Date.now() - s.mined)
        break
      }
      await sleep(100)
    }
  }
  latencies.sort((a, b) => a - b)
  const p95 = latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * 0.95))]!
  const p50 = latencies[Math.floor(latencies.length / 2)]!
  return { p50, p95 }
}

async function main() {
  const kinds = kindsOf(HOSTS)
  const sim = await startHostSimulator(kinds)
  const tally: Record<string, number> = {}
  for (const k of kinds) tally[k] = (tally[k] ?? 0) + 1
  log(
    `hosts: ${HOSTS} (${Object.entries(tally)
      .map(([k, n]) => `${n} ${k}`)
      .join(', ')}), ${PER_HOST} tokens each`,
  )
  const fastHosts = sim.hosts.filter((h) => h.kind === 'fast')
  const figures: Record<string, string> = {}
  try {
    // 1. Clean.
    {
      const chain = await startTestChain()
      const fast = await deployCollections(chain, fastHosts)
      const indexer = await startIndexerProcess(chain, sim.hosts, 'clean')
      try {
        await mintAll(chain, fast, 0n, PER_HOST)
        const bulk = await bulkRate(indexer.pool, fast, fast.length * PER_HOST)
        log(`clean: ${bulk.ok} fast-host documents at ${bulk.docsPerS.toFixed(0)}/s`)
        const lat = await probe(chain, indexer.pool, fast, [], 10_000n)
        log(`clean: mint -> ok p50 ${lat.p50.toFixed(0)} ms, p95 ${lat.p95.toFixed(0)} ms`)
        figures.cleanRate = bulk.docsPerS.toFixed(0)
        figures.cleanP95 = lat.p95.toFixed(0)
        figures.cleanRss = (indexer.rss.peakKb() / 1024).toFixed(0)
      } finally {
        await indexer.stop()
        await chain.stop()
      }
    }
    // 2. With the bad hosts.
    let chain2: TestChain | undefined
    let all: Address[] = []
    {
      const chain = await startTestChain()
      chain2 = chain
      all = await deployCollections(chain, sim.hosts)
      const fast = all.filter((_, i) => kinds[i] === 'fast')
      const bad = all.filter((_, i) => kinds[i] !== 'fast')
      const indexer = await startIndexerProcess(chain, sim.hosts, 'bad')
      try {
        await mintAll(chain, all, 0n, PER_HOST)
        const bulk = await bulkRate(indexer.pool, fast, fast.length * PER_HOST)
        log(`bad hosts present: ${bulk.ok} fast-host documents at ${bulk.docsPerS.toFixed(0)}/s`)
        const lat = await probe(chain, indexer.pool, fast, bad, 10_000n)
        log(`bad hosts present: mint -> ok p50 ${lat.p50.toFixed(0)} ms, p95 ${lat.p95.toFixed(0)} ms`)
        const { rows } = await indexer.pool.query(
          `SELECT metadata_status AS s, count(*)::int AS n FROM tokens WHERE collection_address = ANY($1) GROUP BY 1 ORDER BY 1`,
          [bad],
        )
        log(
          `bad hosts' tokens: ${rows.map((r) => `${r.s} ${r.n}`).join(', ')}; requests ${JSON.stringify(sim.requests())}`,
        )
        const state = await indexer.pool.query<{ metadata_queue: MetadataQueueReport | null }>(
          'SELECT metadata_queue FROM indexer_state',
        )
        const q = state.rows[0]?.metadata_queue
        log(`status: backlog ${JSON.stringify(q?.backlog)}, ${q?.backed_off_count ?? 0} hosts backed off`)
        figures.badRate = bulk.docsPerS.toFixed(0)
        figures.badP95 = lat.p95.toFixed(0)
        figures.ratio = (lat.p95 / Number(figures.cleanP95)).toFixed(2)
        figures.badRss = (indexer.rss.peakKb() / 1024).toFixed(0)
      } finally {
        await indexer.stop()
      }
    }
    // 3. Memory with a backlog of PENDING tokens (tokenURI of ids never minted: reverts, quickly).
    {
      const indexer = await startIndexerProcess(chain2!, sim.hosts, 'memory')
      try {
        const started = Date.now()
        await indexer.pool.query(
          `INSERT INTO tokens (collection_address, token_id, current_owner)
           SELECT ($1::varchar[])[1 + (g % $3)], 1000000 + g, '0x0000000000000000000000000000000000000001'
             FROM generate_series(1, $2::int) AS g`,
          [all, PENDING, all.length],
        )
        log(`memory: ${PENDING} pending tokens inserted in ${((Date.now() - started) / 1000).toFixed(1)} s`)
        const t0 = Date.now()
        const pending = async () =>
          (
            await indexer.pool.query(
              `SELECT count(*)::int AS n FROM tokens WHERE metadata_status = 'pending'`,
            )
          ).rows[0].n as number
        const before = await pending()
        while (Date.now() - t0 < MEMORY_S * 1000) await sleep(1_000)
        const after = await pending()
        figures.memRss = (indexer.rss.peakKb() / 1024).toFixed(0)
        log(
          `memory: peak RSS ${figures.memRss} MB with ${before} pending; ${before - after} settled in ${MEMORY_S} s (${((before - after) / MEMORY_S).toFixed(0)}/s)`,
        )
      } finally {
        await indexer.stop()
        await chain2!.stop()
      }
    }
  } finally {
    await sim.close()
  }
  log('')
  log(
    `documents/s on fast hosts: ${figures.cleanRate} clean, ${figures.badRate} with bad hosts (target >= 500)`,
  )
  log(
    `p95 mint -> ok on fast hosts: ${figures.cleanP95} ms clean, ${figures.badP95} ms with bad hosts: fairness ratio ${figures.ratio} (target <= 1.25)`,
  )
  log(
    `peak RSS of the indexer: ${figures.cleanRss} MB clean, ${figures.badRss} MB with bad hosts, ${figures.memRss} MB with ${PENDING} pending (target < 400)`,
  )
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err)
    process.exit(1)
  },
)
