/**
 * The Envio HyperIndex side of bench:indexer: the project in bench/envio (its own package.json,
 * installed on demand like bench/ponder's; Envio's generated code is installed with pnpm, which
 * bench/envio/.tools brings from the npm registry) indexes the same anvil chain over RPC into a
 * fresh database on the same PostgreSQL server, without Docker and without Hasura
 * (ENVIO_PG_* and ENVIO_HASURA=false).
 *
 * The config (addresses, RPC URL, blocks) is written for each run and `envio codegen` runs
 * before the clock starts, as our indexer is bundled before its clock starts. Measured from
 * `envio start` until its Transfer table holds every id/value record of the chain. Never
 * returns a made-up number: when Envio cannot be installed, generated or finished, the result
 * says why, with its last lines.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import pg from 'pg'
import { type CpuSeconds, trackCpu } from './cpu-time'

export interface EnvioRunInput<T> {
  serverUrl: string
  rpcUrl: string
  nodePid: number
  chainId: number
  standard: 'erc721' | 'erc1155'
  addresses: string[]
  startBlock: bigint
  endBlock: bigint
  expectedTransfers: number
  /** Reads Envio's tables (schema public of its database) once it has finished. */
  inspect?: (db: pg.Pool, schema: string) => Promise<T>
}

export type EnvioRunResult<T> =
  | { ok: true; version: string; seconds: number; events: number; cpu: CpuSeconds; inspected?: T }
  | { ok: false; reason: string }

const projectDir = path.resolve(import.meta.dirname, 'envio')
const toolsDir = path.join(projectDir, '.tools')
const envioBin = path.join(projectDir, 'node_modules', '.bin', 'envio')
const pnpmBin = path.join(toolsDir, 'node_modules', '.bin', 'pnpm')
const TIMEOUT_S = Number(process.env.BENCH_ENVIO_TIMEOUT_S ?? 1_200)
// Envio shrinks its eth_getLogs block range only after a request times out, so its first rows can take a while.
const STALLED_MS = Number(process.env.BENCH_ENVIO_STALLED_S ?? 300) * 1000
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

const EVENTS = {
  erc721: {
    contract: 'ERC721',
    events: ['Transfer(address indexed from, address indexed to, uint256 indexed tokenId)'],
  },
  erc1155: {
    contract: 'ERC1155',
    events: [
      'TransferSingle(address indexed operator, address indexed from, address indexed to, uint256 id, uint256 value)',
      'TransferBatch(address indexed operator, address indexed from, address indexed to, uint256[] ids, uint256[] values)',
    ],
  },
}

const tail = (text: string, n = 6) =>
  text
    .trim()
    .split('\n')
    .filter((l) => l.trim() && !/^\s*\d+: |^\s*at |Stack backtrace/.test(l)) // Rust's and node's backtraces say nothing here
    .slice(-n)
    .join(' | ')

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv): string | null {
  const res = spawnSync(cmd, args, { cwd: projectDir, env, encoding: 'utf8', timeout: 600_000 })
  if (res.status === 0) return null
  return `\`${path.basename(cmd)} ${args.join(' ')}\` failed (exit ${res.status}${res.error ? `, ${res.error}` : ''}): ${tail(`${res.stdout ?? ''}\n${res.stderr ?? ''}`)}`
}

function envWithTools(): NodeJS.ProcessEnv {
  return { ...process.env, PATH: `${path.dirname(pnpmBin)}:${process.env.PATH}` }
}

function ensureInstalled(log: (msg: string) => void): string | null {
  const env = envWithTools()
  if (!existsSync(pnpmBin)) {
    // The pnpm of package.json's packageManager, from the npm registry into bench/envio/.tools.
    const pnpm = JSON.parse(readFileSync(path.join(projectDir, 'package.json'), 'utf8'))
      .packageManager as string
    log(`installing ${pnpm} for bench/envio (first run)`)
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
    const failed = run(
      npm,
      ['install', '--no-audit', '--no-fund', '--no-save', '--no-package-lock', '--prefix', toolsDir, pnpm],
      env,
    )
    if (failed) return failed
  }
  if (!existsSync(envioBin)) {
    log('installing bench/envio dependencies (first run)')
    const failed = run(pnpmBin, ['install', '--frozen-lockfile'], env)
    if (failed) return failed
  }
  return null
}

function writeConfig(input: EnvioRunInput<unknown>): string {
  const { contract, events } = EVENTS[input.standard]
  const file = 'config.run.yaml'
  const yaml = [
    '# Written by bench/envio-run.ts for one run; see there.',
    'name: bench-envio',
    `schema: schema.${input.standard}.graphql`,
    // What `envio init` configures since 2.27: handlers run a preload pass that batches the
    // entity reads (Envio's docs, "Preload Optimization").
    'preload_handlers: true',
    'field_selection:',
    '  transaction_fields:',
    '    - hash',
    'networks:',
    `  - id: ${input.chainId}`,
    // As many blocks kept for a reorg as ours keeps unconfirmed (CONFIRMATIONS=2 in the bench);
    // Envio's default of 200 keeps a history row for every entity change of the last 200 blocks.
    '    confirmed_block_threshold: 2',
    '    rpc_config:',
    `      url: ${input.rpcUrl}`,
    // Its default eth_getLogs range spans the whole chain: 200,000 ERC-721 transfers in one answer
    // took it past its 20 s query timeout again and again ("RpcSource.QueryTimout"), so it starts
    // at 20 blocks (10,000 logs of the ERC-721 chain) and grows to 40 at most.
    '      initial_block_interval: 20',
    '      interval_ceiling: 40',
    `    start_block: ${input.startBlock}`,
    `    end_block: ${input.endBlock}`,
    '    contracts:',
    `      - name: ${contract}`,
    '        address:',
    ...input.addresses.map((a) => `          - "${a}"`),
    `        handler: src/${input.standard}.ts`,
    '        events:',
    ...events.map((e) => `          - event: "${e}"`),
    '',
  ].join('\n')
  writeFileSync(path.join(projectDir, file), yaml)
  return file
}

export async function runEnvio<T>(
  input: EnvioRunInput<T>,
  log: (msg: string) => void,
): Promise<EnvioRunResult<T>> {
  const installError = ensureInstalled(log)
  if (installError) return { ok: false, reason: installError }
  const version = JSON.parse(
    readFileSync(path.join(projectDir, 'node_modules', 'envio', 'package.json'), 'utf8'),
  ).version as string
  const env = envWithTools()
  const config = writeConfig(input)
  const codegen = run(envioBin, ['codegen', '--config', config], env)
  if (codegen) return { ok: false, reason: `envio ${version}: ${codegen}` }

  const dbName = `bench_envio_${Date.now()}`
  const admin = new pg.Client({ connectionString: input.serverUrl })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${dbName}`)
  const server = new URL(input.serverUrl)
  const dbUrl = new URL(input.serverUrl)
  dbUrl.pathname = `/${dbName}`
  dbUrl.searchParams.delete('schema')
  const schema = 'public'
  const pool = new pg.Pool({ connectionString: dbUrl.toString(), max: 2 })
  pool.on('error', () => {}) // Idle clients are cut when the database is dropped.

  let output = ''
  const child: ChildProcess = spawn(envioBin, ['start', '--config', config], {
    cwd: projectDir,
    env: {
      ...env,
      ENVIO_PG_HOST: server.hostname,
      ENVIO_PG_PORT: server.port || '5432',
      ENVIO_PG_USER: decodeURIComponent(server.username) || 'postgres',
      ENVIO_PG_PASSWORD: decodeURIComponent(server.password),
      ENVIO_PG_DATABASE: dbName,
      ENVIO_PG_PUBLIC_SCHEMA: schema,
      ENVIO_HASURA: 'false',
      TUI_OFF: 'true',
      LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group: `envio start` runs the indexer as a child (node), ended with it.
    detached: true,
  })
  const started = performance.now()
  const keep = (chunk: Buffer) => {
    if (process.env.BENCH_LOG) appendFileSync(process.env.BENCH_LOG, chunk)
    output = (output + chunk.toString()).slice(-20_000)
  }
  child.stdout?.on('data', keep)
  child.stderr?.on('data', keep)
  const cpu = trackCpu({ indexer: child.pid!, node: input.nodePid })
  const exited = () => child.exitCode !== null || child.signalCode !== null

  try {
    const count = async (): Promise<number | null> => {
      try {
        const { rows } = await pool.query(`SELECT count(*)::int AS n FROM "${schema}"."Transfer"`)
        return rows[0].n as number
      } catch {
        return null // Not created yet.
      }
    }
    let last: { n: number | null; since: number } = { n: null, since: performance.now() }
    for (;;) {
      const n = await count()
      if (n === input.expectedTransfers) break
      if (exited())
        return {
          ok: false,
          reason: `envio ${version} exited with ${child.exitCode ?? child.signalCode} (${n ?? 0} of ${input.expectedTransfers} transfers): ${tail(output)}`,
        }
      const elapsed = (performance.now() - started) / 1000
      if (n !== last.n) last = { n, since: performance.now() }
      if (elapsed > TIMEOUT_S || performance.now() - last.since > STALLED_MS)
        return {
          ok: false,
          reason: `envio ${version} had ${n ?? 'no table,'} of ${input.expectedTransfers} transfers after ${elapsed.toFixed(0)}s${elapsed > TIMEOUT_S ? '' : ` (nothing more for ${STALLED_MS / 1000}s)`}: ${tail(output)}`,
        }
      await sleep(100)
    }
    const seconds = (performance.now() - started) / 1000
    const used = cpu.stop()
    const inspected = input.inspect ? await input.inspect(pool, schema) : undefined
    return { ok: true, version, seconds, events: input.expectedTransfers, cpu: used, inspected }
  } finally {
    cpu.stop()
    if (!exited() && child.pid) {
      process.kill(-child.pid, 'SIGTERM')
      await Promise.race([new Promise((r) => child.once('exit', r)), sleep(10_000)])
      if (!exited()) process.kill(-child.pid, 'SIGKILL')
    }
    await pool.end()
    await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => {})
    await admin.end()
  }
}
