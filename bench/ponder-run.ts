/**
 * The Ponder side of bench:indexer: runs the minimal Ponder project in
 * bench/ponder (ERC-721 Transfer -> a transfers table plus current owners), or
 * with `app: 'erc1155'` the one in bench/ponder/erc1155 (TransferSingle and
 * TransferBatch -> a row per id/value pair, balances and supplies), against the same anvil chain and PostgreSQL server as our indexer, in a
 * fresh database (Ponder's RPC cache, ponder_sync, lives per database and the
 * devnet reuses chain id 31337, so a shared one would serve stale logs).
 *
 * Measured like ours: from process start until Ponder reports historical
 * indexing complete (/ready is 200) and its transfers table holds every
 * transfer of the chain. Through a faulty provider (bench:indexer --provider)
 * Ponder may finish short of that, so there `allowShort` ends the run when it
 * is ready and its table has stopped growing, timed at the last row written.
 * Never returns a made-up number: when Ponder cannot be installed, started or
 * finished, the result says why.
 */
import { spawn, spawnSync } from 'node:child_process'
import { appendFileSync, existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import pg from 'pg'
import { freePort } from '@/test/free-port'
import { type CpuSeconds, trackCpu } from './cpu-time'
import { trackPeakRss } from './peak-rss'

export interface PonderRunInput<T = undefined> {
  serverUrl: string
  rpcUrl: string
  /** The node's process, for the CPU it spends answering Ponder. */
  nodePid: number
  chainId: number
  addresses: string[]
  startBlock: bigint
  endBlock: bigint
  expectedTransfers: number
  /** The Ponder app: a folder of bench/ponder (e.g. 'erc1155'); default bench/ponder's own. */
  app?: string
  /** Finish when Ponder is ready and its transfers stopped growing, even short of expectedTransfers. */
  allowShort?: boolean
  /** Reads Ponder's tables once it has finished, before its database is dropped. */
  inspect?: (db: pg.Pool, schema: string) => Promise<T>
}

export type PonderRunResult<T = undefined> =
  | {
      ok: true
      version: string
      seconds: number
      events: number
      peakRssKb: number
      cpu: CpuSeconds
      inspected?: T
    }
  | { ok: false; reason: string }

const projectDir = path.resolve(import.meta.dirname, 'ponder')
const binPath = path.join(projectDir, 'node_modules', 'ponder', 'dist', 'esm', 'bin', 'ponder.js')
const TIMEOUT_S = Number(process.env.BENCH_PONDER_TIMEOUT_S ?? 1_200)
const STALLED_MS = 20_000
// With allowShort: how long a ready Ponder's row count must stay put to count as finished.
const SETTLED_MS = 5_000
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

function ensureInstalled(log: (msg: string) => void): string | null {
  if (existsSync(binPath)) return null
  log('installing bench/ponder dependencies (first run)')
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
  const res = spawnSync(npm, ['install', '--no-audit', '--no-fund', '--prefix', projectDir], {
    cwd: projectDir,
    encoding: 'utf8',
    timeout: 600_000,
  })
  if (res.status !== 0 || !existsSync(binPath)) {
    const tail = `${res.stderr ?? ''}${res.error ? String(res.error) : ''}`.trim().split('\n').slice(-5)
    return `npm install in bench/ponder failed (exit ${res.status}): ${tail.join(' | ')}`
  }
  return null
}

export async function runPonder<T = undefined>(
  input: PonderRunInput<T>,
  log: (msg: string) => void,
): Promise<PonderRunResult<T>> {
  const installError = ensureInstalled(log)
  if (installError) return { ok: false, reason: installError }
  const version = JSON.parse(
    readFileSync(path.join(projectDir, 'node_modules', 'ponder', 'package.json'), 'utf8'),
  ).version as string

  const dbName = `bench_ponder_${Date.now()}`
  const admin = new pg.Client({ connectionString: input.serverUrl })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${dbName}`)
  const dbUrl = new URL(input.serverUrl)
  dbUrl.pathname = `/${dbName}`
  dbUrl.searchParams.delete('schema')
  const schema = 'bench'
  const port = await freePort()
  const pool = new pg.Pool({ connectionString: dbUrl.toString(), max: 2 })
  pool.on('error', () => {}) // Idle clients are cut when the database is dropped.

  const recent: string[] = []
  const child = spawn(
    process.execPath,
    [binPath, 'start', '--schema', schema, '--port', String(port), '--log-format', 'json'],
    {
      // An app in a subfolder resolves `ponder` and its other packages from bench/ponder/node_modules.
      cwd: input.app ? path.join(projectDir, input.app) : projectDir,
      env: {
        ...process.env,
        DATABASE_URL: dbUrl.toString(),
        DATABASE_SCHEMA: schema,
        DATABASE_PRIVATE_URL: '',
        PONDER_TELEMETRY_DISABLED: 'true',
        PONDER_RPC_URL: input.rpcUrl,
        PONDER_CHAIN_ID: String(input.chainId),
        PONDER_ADDRESSES: input.addresses.join(','),
        PONDER_START_BLOCK: input.startBlock.toString(),
        PONDER_END_BLOCK: input.endBlock.toString(),
        NODE_ENV: 'production',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  )
  const started = performance.now()
  const keep = (chunk: Buffer) => {
    if (process.env.BENCH_LOG) appendFileSync(process.env.BENCH_LOG, chunk)
    for (const line of chunk.toString().split('\n')) {
      if (!line.trim()) continue
      recent.push(line)
      if (recent.length > 20) recent.shift()
    }
  }
  child.stdout.on('data', keep)
  child.stderr.on('data', keep)
  const rss = trackPeakRss(child.pid!)
  const cpu = trackCpu({ indexer: child.pid!, node: input.nodePid })
  const lastLines = () =>
    recent
      .slice(-6)
      .map((l) => {
        try {
          const j = JSON.parse(l)
          return `${j.msg ?? ''}${j.error?.message ? `: ${j.error.message}` : ''}`
        } catch {
          return l
        }
      })
      .join(' | ')

  try {
    const count = async (): Promise<number | null> => {
      try {
        const { rows } = await pool.query(`SELECT count(*)::int AS n FROM "${schema}"."transfers"`)
        return rows[0].n as number
      } catch {
        return null // Not created yet.
      }
    }
    let settled: { count: number | null; since: number } = { count: null, since: performance.now() }
    let finishedAt: number | undefined
    for (;;) {
      if (child.exitCode !== null)
        return { ok: false, reason: `ponder ${version} exited with ${child.exitCode}: ${lastLines()}` }
      const elapsed = (performance.now() - started) / 1000
      if (elapsed > TIMEOUT_S) {
        const n = (await count()) ?? 0
        return {
          ok: false,
          reason: `ponder ${version} had not finished after ${TIMEOUT_S}s (${n} of ${input.expectedTransfers} transfers indexed, i.e. < ${Math.round(n / elapsed)} events/s)`,
        }
      }
      let ready = false
      try {
        ready = (await fetch(`http://127.0.0.1:${port}/ready`)).status === 200
      } catch {
        // The HTTP server is not up yet.
      }
      const n = ready ? await count() : null
      if (n === input.expectedTransfers) break
      // Ready but short of the chain's transfers, and no longer moving: no figure, rather than a long wait.
      if (n !== settled.count) settled = { count: n, since: performance.now() }
      else if (n !== null && input.allowShort && performance.now() - settled.since > SETTLED_MS) {
        finishedAt = settled.since
        break
      } else if (n !== null && performance.now() - settled.since > STALLED_MS) {
        return {
          ok: false,
          reason: `ponder ${version} reported ready with ${n} of ${input.expectedTransfers} transfers and indexed nothing more for ${STALLED_MS / 1000}s`,
        }
      }
      await sleep(100)
    }
    const seconds = ((finishedAt ?? performance.now()) - started) / 1000
    const used = cpu.stop()
    const events = (await count()) ?? 0
    const inspected = input.inspect ? await input.inspect(pool, schema) : undefined
    return { ok: true, version, seconds, events, peakRssKb: rss.peakKb(), cpu: used, inspected }
  } finally {
    rss.stop()
    cpu.stop()
    if (child.exitCode === null) {
      child.kill('SIGTERM')
      await Promise.race([new Promise((r) => child.once('exit', r)), sleep(10_000)])
      if (child.exitCode === null) child.kill('SIGKILL')
    }
    await pool.end()
    await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => {})
    await admin.end()
  }
}
