/**
 * `npm run bench:request`: what the /v1 request path itself costs, without
 * the network, the database or the load generator: the web process's REST
 * handler (access checks with the in-process limiter, the procedure, the
 * response) serves GET /v1/indexer/status to requests written on an
 * in-memory socket, with a database stand-in that answers from memory.
 *
 * Prints microseconds per request (the median of BENCH_ROUNDS rounds of
 * BENCH_REQUESTS), and, when valgrind is installed, instructions per request
 * counted by callgrind over BENCH_COUNTED requests after a warm-up. Time on
 * these shared machines moves by ±30 % from one minute to the next; the
 * instruction count of the same code moves by 2–8 %, so a change of a tenth or
 * more shows where time would hide it (docs/api.md, "The request path").
 *
 * It also prints the bytes the path allocates per request, garbage included (V8's
 * sampling heap profiler keeping the objects collected since, over BENCH_ALLOCATED requests
 * after the warm-up), and the functions that allocate most: allocation drives the
 * garbage collector's share of the request and, unlike time, hardly moves between runs.
 *
 * BENCH_METRICS=on records Prometheus metrics on the way, as with METRICS_PORT
 * set (docs/operations.md, "Metrics"): run it both ways to see what they cost.
 *
 * BENCH_ASYNC_CONTEXT=on puts an AsyncLocalStorage in use first, as Next.js does
 * in a web process that serves the portal: what that costs every /v1 request
 * (docs/api.md, "The request path").
 */
import { AsyncLocalStorage } from 'node:async_hooks'
import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import http from 'node:http'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { Duplex } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { bundleForNode } from '@/indexer/bundle'
import { countedInstructions, hasValgrind, instrument, underCallgrind } from './callgrind'

const HERE = path.dirname(fileURLToPath(import.meta.url))
const ROOT = path.resolve(HERE, '..')
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 20_000)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const COUNTED = Number(process.env.BENCH_COUNTED ?? 5_000)
const WARM_UP = 20_000
const ALLOCATED = Number(process.env.BENCH_ALLOCATED ?? 10_000)
/** The heap profiler's mean sampling interval (bytes): small, so that a request's few hundred-byte objects count. */
const SAMPLING_BYTES = 256
const PATH = '/v1/indexer/status'

// ───────────────────────────── the request loop ─────────────────────────────

/** A socket that takes every write and answers nothing. */
class NullSocket extends Duplex {
  remoteAddress = '127.0.0.1'
  override _read() {}
  override _write(_chunk: unknown, _encoding: unknown, done: () => void) {
    done()
  }
  override _writev(_chunks: unknown, done: () => void) {
    done()
  }
}

async function requestLoop() {
  if (process.env.BENCH_ASYNC_CONTEXT === 'on') new AsyncLocalStorage().enterWith({ portal: true })
  const { parseConfig } = await import('@/config/env')
  const { createLogger } = await import('@/config/logger')
  const { generateApiKeySecret } = await import('@/server/credentials/secrets')
  const { createRestHandler } = await import('@/server/rest/handler')
  const { createWebServices } = await import('@/server/services/web-services')
  const high = 'sec=100000000,min=100000000,concurrent=1000000'
  const config = parseConfig({
    NODE_ENV: 'production',
    NETWORK: 'mainnet',
    DATABASE_URL: 'postgres://unused/unused',
    PUBLIC_URL: 'http://bench.test',
    LOG_LEVEL: 'silent',
    RATE_LIMIT_KEY: high,
    RATE_LIMIT_IP_KEY: high,
  } as unknown as NodeJS.ProcessEnv)
  const { secret, hash } = generateApiKeySecret()
  const at = new Date()
  // The two reads the path makes, told apart by their SQL: the key (cached by the verifier)
  // and the indexer state (shared, once per 250 ms).
  const keyRow = {
    secret_hash: hash,
    expires_at: null,
    key_id: '1',
    status: 'active',
    scopes: ['read:status'],
    allowed_origins: [],
    address: '0x00000000000000000000000000000000000000b1',
  }
  const stateRow = {
    coverage_status: 'complete',
    coverage_start_block: '0',
    last_seen_block: '1000',
    last_confirmed_block: '988',
    last_indexed_block: '988',
    coverage_verified_at: at,
    updated_at: at,
    last_verified_block: null,
    verification_mismatches: '0',
    verification_repairs: '0',
    verification_spans: [],
    log_index_untrusted: false,
    head_observed_at: at,
    rpc_endpoints: [],
    metadata_queue: null,
  }
  const db = {
    pool: {
      // createWebServices sizes the pool shares from the pool's size.
      options: { max: config.DB_POOL_SIZE },
      query: async (sql: string) => ({
        rows: [sql.includes('FROM api_key_secrets') ? keyRow : stateRow],
      }),
    },
  }
  const rest = createRestHandler(
    createWebServices(config, {
      db: db as never,
      logger: createLogger({ level: 'silent' }),
      metrics: process.env.BENCH_METRICS === 'on',
    }),
  )
  const socket = new NullSocket()

  const request = async () => {
    const req = new http.IncomingMessage(socket as never)
    req.method = 'GET'
    req.url = PATH
    req.headers = { host: 'bench.test', authorization: `Bearer ${secret}`, connection: 'keep-alive' }
    // Complete, as the parser marks a whole request: Node.js 24 destroys the socket of a
    // request that ends incomplete (an aborted one), and the next response would never finish.
    req.complete = true
    req.push(null)
    const res = new http.ServerResponse(req)
    res.assignSocket(socket as never)
    await rest(req, res)
    if (!res.writableFinished) await new Promise((resolve) => res.once('finish', resolve))
    if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode}`)
    res.detachSocket(socket as never)
    res.emit('close')
    // Back to the event loop, as a server is between requests (process.nextTick work runs there).
    await new Promise((resolve) => setImmediate(resolve))
  }
  const many = async (n: number) => {
    for (let i = 0; i < n; i++) await request()
  }
  return { many }
}

// ───────────────────────────── allocations ─────────────────────────────

interface SamplingNode {
  callFrame: { functionName: string; url: string }
  selfSize: number
  children: SamplingNode[]
}

/**
 * Bytes allocated per request over `requests` requests, and the functions that allocated most
 * (their own allocations, by function and file), from V8's sampling heap profiler told to keep
 * the samples of objects collected meanwhile.
 */
async function allocations(
  many: (n: number) => Promise<void>,
  requests: number,
): Promise<{ perRequest: number; top: { site: string; perRequest: number }[] }> {
  const { Session } = await import('node:inspector/promises')
  const session = new Session()
  session.connect()
  try {
    await session.post('HeapProfiler.startSampling', {
      samplingInterval: SAMPLING_BYTES,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    } as never)
    await many(requests)
    const { profile } = (await session.post('HeapProfiler.stopSampling')) as {
      profile: { head: SamplingNode }
    }
    const bySite = new Map<string, number>()
    let total = 0
    const walk = (node: SamplingNode) => {
      const { functionName, url } = node.callFrame
      const site = `${functionName || '(anonymous)'} ${url.replace(/^.*\/node_modules\//, '').replace(`file://${ROOT}/`, '')}`
      bySite.set(site, (bySite.get(site) ?? 0) + node.selfSize)
      total += node.selfSize
      for (const child of node.children) walk(child)
    }
    walk(profile.head)
    const top = [...bySite]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 10)
      .map(([site, bytes]) => ({ site, perRequest: bytes / requests }))
    return { perRequest: total / requests, top }
  } finally {
    session.disconnect()
  }
}

// ───────────────────────────── child under callgrind ─────────────────────────────

/** Warms up, says READY, waits for a line on stdin (instrumentation switched on), runs COUNTED requests. */
async function countedChild() {
  const { many } = await requestLoop()
  await many(WARM_UP)
  process.stdout.write('READY\n')
  await new Promise<void>((resolve) =>
    createInterface({ input: process.stdin }).once('line', () => resolve()),
  )
  await many(COUNTED)
  process.stdout.write('DONE\n')
  process.exit(0)
}

/** Instructions per request: this file bundled, run under callgrind, counted only around the measured requests. */
async function countInstructions(): Promise<number> {
  // Under the project, so that the modules left out of the bundle (sharp) resolve from node_modules.
  mkdirSync(path.join(ROOT, '.build'), { recursive: true })
  const dir = mkdtempSync(path.join(ROOT, '.build', 'bench-request-'))
  const bundle = path.join(dir, 'request-path.mjs')
  await bundleForNode(ROOT, fileURLToPath(import.meta.url), bundle)
  const out = path.join(dir, 'callgrind.out')
  const [command, args] = underCallgrind(out, [bundle, '--counted'])
  const child = spawn(command, args, {
    cwd: ROOT,
    env: { ...process.env, NODE_ENV: 'production' },
    stdio: ['pipe', 'pipe', 'ignore'],
  })
  const lines = createInterface({ input: child.stdout! })
  // A child that dies (a bundle that does not load) fails the count instead of leaving it waiting.
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code) => reject(new Error(`the counted child exited (${code})`))),
  )
  exited.catch(() => {})
  const next = () => Promise.race([new Promise<string>((resolve) => lines.once('line', resolve)), exited])
  if ((await next()) !== 'READY') throw new Error('the counted child did not start')
  instrument(child.pid!, true)
  child.stdin!.write('go\n')
  if ((await next()) !== 'DONE') throw new Error('the counted child did not finish')
  await exited.catch(() => {})
  try {
    return countedInstructions(out) / COUNTED
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

async function main() {
  const { many } = await requestLoop()
  await many(WARM_UP)
  const rounds: number[] = []
  for (let r = 0; r < ROUNDS; r++) {
    const started = performance.now()
    await many(REQUESTS)
    rounds.push(((performance.now() - started) * 1000) / REQUESTS)
  }
  rounds.sort((a, b) => a - b)
  console.log(
    `GET ${PATH}, in-process, metrics ${process.env.BENCH_METRICS === 'on' ? 'on' : 'off'}, AsyncLocalStorage ${process.env.BENCH_ASYNC_CONTEXT === 'on' ? 'in use' : 'not in use'}: ${rounds[Math.floor(rounds.length / 2)]!.toFixed(1)} µs per request (median of ${ROUNDS} rounds of ${REQUESTS}; rounds ${rounds.map((r) => r.toFixed(1)).join(', ')})`,
  )
  const allocated = await allocations(many, ALLOCATED)
  console.log(
    `allocated per request: ${Math.round(allocated.perRequest).toLocaleString('en')} bytes, garbage included (sampling heap profiler, every ${SAMPLING_BYTES} bytes on average, ${ALLOCATED} requests); most by:`,
  )
  for (const { site, perRequest } of allocated.top) {
    console.log(`  ${Math.round(perRequest).toLocaleString('en').padStart(6)}  ${site}`)
  }
  if (!hasValgrind()) {
    console.log('instructions per request: not counted (valgrind is not installed)')
    return
  }
  console.log(
    `instructions per request: ${Math.round(await countInstructions()).toLocaleString('en')} (callgrind, ${COUNTED} requests after ${WARM_UP})`,
  )
}

if (process.argv.includes('--counted')) void countedChild()
else {
  // A request whose response never finishes leaves nothing for the event loop: say so, not exit 0.
  process.once('beforeExit', () => {
    console.error('bench:request stopped: a response never finished')
    process.exit(1)
  })
  main().then(
    () => process.exit(0),
    (err) => {
      console.error(err)
      process.exit(1)
    },
  )
}
