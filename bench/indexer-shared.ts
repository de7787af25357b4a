/**
 * What the modes of bench:indexer share (bench/indexer.ts for ERC-721, bench/indexer-1155.ts
 * for ERC-1155): the environment knobs, the provider model, JSON-RPC helpers against anvil
 * and one timed backfill of our indexer process.
 */
import { spawn } from 'node:child_process'
import { appendFileSync } from 'node:fs'
import { mkdtemp } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import type pg from 'pg'
import { FAULT_KINDS, type ProviderProxy, type ProviderProxyOptions } from '@/test/provider-proxy'
import { benchSchema } from './bench-schema'
import { type CpuSeconds, trackCpu } from './cpu-time'
import { trackPeakRss } from './peak-rss'

export const PROVIDER = process.argv.includes('--provider') || process.env.BENCH_PROVIDER === '1'
export const PROVIDER_ENDPOINTS = Number(process.env.BENCH_PROVIDER_ENDPOINTS ?? 1)
export const INDEXER_TIMEOUT_S = Number(process.env.BENCH_INDEXER_TIMEOUT_S ?? 1_200)
/**
 * One backfill's rate moves by up to a third from run to run on a shared 2-core machine, and
 * a Ponder run now and then reports ready short of the chain (no figure): three of each, by
 * default, so that one invocation prints a median and a ratio (docs/indexer.md, "Benchmark").
 */
export const REPEAT = Number(process.env.BENCH_REPEAT ?? 2)
/** Extra node flags for our indexer process, e.g. BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof". */
export const NODE_ARGS = process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? []

export const ZERO = '0x0000000000000000000000000000000000000000'

export const log = (msg: string) => process.stdout.write(`[bench] ${msg}\n`)
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

export const s = (since: number) => `${((performance.now() - since) / 1000).toFixed(1)}s`

/** BENCH_FAULTS, e.g. '{"hang":0.03}': fault rates that replace provider mode's own. */
export const FAULT_OVERRIDES: Partial<ProviderProxyOptions['faults']> = JSON.parse(
  process.env.BENCH_FAULTS ?? '{}',
)

/** A hosted provider as provider mode models it; each proxy instance draws its faults from its own seed. */
export const providerOptions = (upstream: string, seed: number): ProviderProxyOptions => ({
  upstream,
  seed,
  latencyMs: [50, 100],
  getLogsCap: { maxBlocks: 2_000, maxResults: 10_000, style: 'alchemy' },
  faults: {
    rateLimited: 0.02,
    badGateway: 0.01,
    dropConnection: 0.005,
    hang: 0.002,
    nonJson: 0.005,
    itemError: 0.01,
    lagging: 0.1,
    lagBlocks: 3,
    duplicateAndReorder: 0.05,
    omitLog: 0.05,
    ...FAULT_OVERRIDES,
  },
})

export const FAULT_NAMES = [...FAULT_KINDS, 'capRange', 'capResults']

/** Requests, items and faults of one reader's proxies, summed. */
export function proxyTotals(proxies: ProviderProxy[]): Record<string, number> {
  const total: Record<string, number> = {}
  for (const p of proxies) for (const [k, v] of Object.entries(p.stats())) total[k] = (total[k] ?? 0) + v
  return total
}

export function describeTraffic(stats: Record<string, number>, events: number): string {
  const per1k = (n: number) => ((n * 1000) / events).toFixed(1)
  const faults = FAULT_NAMES.filter((k) => stats[k]).map((k) => `${k} ${stats[k]}`)
  return `${stats.requests} HTTP requests, ${stats.items} JSON-RPC items = ${per1k(stats.requests ?? 0)} requests and ${per1k(stats.items ?? 0)} items per 1,000 events; injected: ${faults.join(', ') || 'none'}`
}

export async function anvilBatch(rpcUrl: string, calls: { method: string; params: unknown[] }[]) {
  const response = await fetch(rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(calls.map((c, id) => ({ jsonrpc: '2.0', id, ...c }))),
  })
  const answers = (await response.json()) as { id: number; result?: unknown; error?: { message: string } }[]
  const byId = new Map(answers.map((a) => [a.id, a]))
  return calls.map((_, id) => byId.get(id)!)
}

export async function inParallel<T>(tasks: (() => Promise<T>)[], concurrency: number): Promise<T[]> {
  const out: T[] = new Array(tasks.length)
  let next = 0
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < tasks.length) {
        const i = next++
        out[i] = await tasks[i]!()
      }
    }),
  )
  return out
}

export const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

export const medianCpu = (runs: { cpu: CpuSeconds }[]): CpuSeconds => ({
  indexer: median(runs.map((r) => r.cpu.indexer)),
  postgres: median(runs.map((r) => r.cpu.postgres)),
  node: median(runs.map((r) => r.cpu.node)),
  bench: median(runs.map((r) => r.cpu.bench)),
})

/**
 * Events/s and CPU seconds of one more backfill of the chain into a schema of
 * its own, verified or trusting one read per range (INDEXER_VERIFY=off).
 */
export async function timeBackfill(
  indexer: string[],
  root: string,
  proxies: ProviderProxy[],
  anvil: { rpcUrl: string; pid: number },
  head: bigint,
  verify: boolean,
  sample = true,
  /** Reads the run's schema once the backfill has reached `head`, before the schema is dropped. */
  inspect?: (pool: pg.Pool) => Promise<string>,
): Promise<
  | { rate: number; cpu: CpuSeconds; peakRssKb: number; events: number; seconds: number; inspected?: string }
  | undefined
> {
  const name = !verify ? 'unverified' : sample ? 'verified' : 'unsampled'
  const { schema, url, pool } = await benchSchema(`bench_${name}`, 2)
  const started = performance.now()
  const child = spawn(process.execPath, [...NODE_ARGS, ...indexer], {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: url,
      RPC_URL: proxies.length > 0 ? proxies.map((p) => p.url).join(',') : anvil.rpcUrl,
      CONFIRMATIONS: '2',
      INDEXER_VERIFY: verify ? 'on' : 'off',
      ...(sample ? {} : { INDEXER_PROOF_SAMPLE_RATE: '0' }),
      MEDIA_DIR: await mkdtemp(path.join(os.tmpdir(), 'bench-media-')),
      LOG_LEVEL: process.env.BENCH_LOG ? (process.env.LOG_LEVEL ?? 'info') : 'warn',
    },
    stdio: ['ignore', process.env.BENCH_LOG ? 'pipe' : 'ignore', 'inherit'],
  })
  child.stdout?.on('data', (chunk: Buffer) => appendFileSync(`${process.env.BENCH_LOG}.${name}`, chunk))
  const cpu = trackCpu({ indexer: child.pid!, node: anvil.pid })
  const rss = trackPeakRss(child.pid!)
  try {
    for (;;) {
      const { rows } = await pool.query('SELECT last_indexed_block::text AS b FROM indexer_state')
      if (rows[0]?.b && BigInt(rows[0].b) >= head) break
      if (child.exitCode !== null || (performance.now() - started) / 1000 > INDEXER_TIMEOUT_S)
        return undefined
      await sleep(100)
    }
    const seconds = (performance.now() - started) / 1000
    const used = cpu.stop()
    const { rows } = await pool.query('SELECT count(*)::int AS n FROM transfers')
    const inspected = inspect ? await inspect(pool) : undefined
    return {
      rate: rows[0].n / seconds,
      cpu: used,
      peakRssKb: rss.peakKb(),
      events: rows[0].n,
      seconds,
      inspected,
    }
  } finally {
    cpu.stop()
    rss.stop()
    if (child.exitCode === null) {
      child.kill('SIGTERM')
      await new Promise((r) => child.once('exit', r))
    }
    await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
    await pool.end()
  }
}

/** A peer's (Ponder's, Envio's) column names of `table`, looked up whatever their casing: name => "quoted". */
export async function columnsOf(db: pg.Pool, schema: string, table: string) {
  const { rows } = await db.query(
    'SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2',
    [schema, table],
  )
  const byName = new Map(
    rows.map((r) => [String(r.column_name).replace(/_/g, '').toLowerCase(), r.column_name]),
  )
  return (name: string) => {
    const column = byName.get(name.toLowerCase())
    if (!column) throw new Error(`${table} table has no ${name} column`)
    return `"${column}"`
  }
}

/** How a reader's stored rows differ from the chain's: missing, extra (duplicates included) and wrong. */
export interface RowDiff {
  missing: number
  extra: number
  wrong: number
}

export const diffTotal = (d: RowDiff) => d.missing + d.extra + d.wrong
export const describeRowDiff = (d: RowDiff) => `${d.missing} missing, ${d.extra} extra, ${d.wrong} wrong`

/** Rows (each with its key) against the chain's expected values by key; `same` compares one row with its value. */
export function diffRows<T, R extends { key: string }>(
  truth: Map<string, T>,
  rows: R[],
  same: (expected: T, row: R) => boolean,
): RowDiff {
  const seen = new Set<string>()
  const diff: RowDiff = { missing: 0, extra: 0, wrong: 0 }
  for (const row of rows) {
    const expected = truth.get(row.key)
    if (expected === undefined || seen.has(row.key)) diff.extra++
    else if (!same(expected, row)) diff.wrong++
    seen.add(row.key)
  }
  for (const key of truth.keys()) if (!seen.has(key)) diff.missing++
  return diff
}

/** A transfer as the chain has it (`expected`, lowercase) and as a reader stored it. */
export interface BenchTransfer {
  collection: string
  tokenId: string
  from: string
  to: string
  block: string
  /** ERC-1155 records only. */
  amount?: string
}

/** The stored transfer says what the chain's does (addresses compared lowercase). */
export const sameTransfer = (expected: BenchTransfer, row: BenchTransfer) =>
  expected.collection === row.collection.toLowerCase() &&
  expected.tokenId === row.tokenId &&
  expected.from === row.from.toLowerCase() &&
  expected.to === row.to.toLowerCase() &&
  expected.amount === row.amount &&
  expected.block === row.block
