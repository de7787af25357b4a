/**
 * npm run bench:push — push delivery under load (docs/push.md).
 *
 * Stack: an anvil devnet mining a mint every BENCH_BLOCK_MS; the real indexer
 * process (bundled as `npm start` runs it) on a fresh schema; one web process
 * (src/server/main.ts, API only) on the same database and Redis.
 *
 * Live stream: BENCH_CLIENTS (1,000) clients hold GET /v1/activity/stream open
 * (STREAMS_PER_KEY per API key, so clients / 5 keys), then BENCH_EVENTS (30)
 * mints are mined. Figures: block mined (its receipt) -> event received at
 * each client, p50 / p95 / max over every delivery (target p95 <= 1 s), events
 * missing at the end, the web process's RSS and CPU per client.
 *
 * Webhooks: BENCH_ENDPOINTS (20) endpoints (10 per key, created through the
 * portal's procedure) point at a local receiver that answers 200 at once;
 * BENCH_WEBHOOK_BLOCKS (10) blocks of BENCH_WEBHOOK_BATCH (50) mints each are
 * mined in a burst. Figures: deliveries per second at the receiver from the
 * first to the last (target >= 200/s), block mined -> delivery received p50 /
 * p95, deliveries missing, duplicates, signatures that do not verify.
 *
 * Env: DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres),
 * REDIS_URL (default redis://127.0.0.1:6379), BENCH_CLIENTS, BENCH_EVENTS,
 * BENCH_BLOCK_MS (1,000), BENCH_ENDPOINTS, BENCH_WEBHOOK_BLOCKS,
 * BENCH_WEBHOOK_BATCH, BENCH_LOG (a file for the indexer's and web process's
 * log lines).
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { appendFileSync, readFileSync } from 'node:fs'
import { mkdtemp } from 'node:fs/promises'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { createParser } from 'eventsource-parser'
import { verifyWebhook } from '@/client'
import { openDatabase } from '@/db/database'
import { buildIndexer } from '@/indexer/bundle'
import { startTestChain } from '@/indexer/test/chain'
import { createPortalHandler } from '@/server/api/portal/handler'
import { createApiKey, ensureUser } from '@/server/api/portal/keys/api-keys'
import { MAX_ENDPOINTS_PER_KEY } from '@/server/api/portal/webhooks/webhooks'
import { CLIENT_IP_HEADER } from '@/server/http/client-ip'
import { STREAMS_PER_KEY } from '@/server/ratelimit/policy'
import { startApiServer } from '@/test/api-client'
import { startWebProcess } from '@/test/web-process'
import { benchSchema } from './bench-schema'

const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 1_000)
const EVENTS = Number(process.env.BENCH_EVENTS ?? 30)
const BLOCK_MS = Number(process.env.BENCH_BLOCK_MS ?? 1_000)
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
const LIMITS = 'sec=100000,min=10000000,concurrent=10000'
const ENDPOINTS = Number(process.env.BENCH_ENDPOINTS ?? 20)
const WEBHOOK_BLOCKS = Number(process.env.BENCH_WEBHOOK_BLOCKS ?? 10)
const WEBHOOK_BATCH = Number(process.env.BENCH_WEBHOOK_BATCH ?? 50)
const AUTH_SECRET = 'bench-push-auth-secret-0123456789abcdef'

const log = (msg: string) => process.stdout.write(`[bench] ${msg}\n`)
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const root = path.resolve(import.meta.dirname, '..')
const pct = (sorted: number[], p: number) =>
  sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!

/** A process's resident set (MiB) and CPU seconds so far, from /proc. */
function processUsage(pid: number) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const rssKb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0)
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
  const ticks = Number(fields[11]) + Number(fields[12])
  return { rssMiB: rssKb / 1024, cpuS: ticks / 100 }
}

/** One SSE client over a plain HTTP request; calls onEvent with each event's data and the arrival time. */
function openStream(base: string, credential: string, onEvent: (data: string, at: number) => void) {
  return new Promise<http.ClientRequest>((resolve, reject) => {
    const req = http.get(
      `${base}/v1/activity/stream`,
      { headers: { Authorization: `Bearer ${credential}`, Accept: 'text/event-stream' }, agent: false },
      (res) => {
        if (res.statusCode !== 200) {
          let body = ''
          res.on('data', (c: Buffer) => {
            body += c.toString()
          })
          res.on('end', () => reject(new Error(`stream refused: ${res.statusCode} ${body}`)))
          return
        }
        const parser = createParser({ onEvent: (e) => onEvent(e.data, performance.now()) })
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => parser.feed(chunk))
        resolve(req)
      },
    )
    req.on('error', reject)
  })
}

/** The webhook receiver: 200 at once; every request kept with its arrival time. */
async function startReceiver() {
  const received: Array<{ path: string; headers: http.IncomingHttpHeaders; body: string; at: number }> = []
  const server = http.createServer((req, res) => {
    let body = ''
    req.setEncoding('utf8')
    req.on('data', (c: string) => {
      body += c
    })
    req.on('end', () => {
      received.push({ path: req.url ?? '', headers: req.headers, body, at: performance.now() })
      res.writeHead(200).end()
    })
  })
  server.keepAliveTimeout = 30_000
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  return {
    origin: `http://127.0.0.1:${port}`,
    host: `127.0.0.1:${port}`,
    received,
    close: () => server.close(),
  }
}

async function main() {
  log(
    `load average at start: ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(', ')} (${os.cpus().length} cores)`,
  )
  const chain = await startTestChain()
  const { schema, url, pool } = await benchSchema('bench_push')
  let indexer: ChildProcess | undefined
  let web: Awaited<ReturnType<typeof startWebProcess>> | undefined
  let api: Awaited<ReturnType<typeof startApiServer>> | undefined
  const receiver = await startReceiver()
  const streams: http.ClientRequest[] = []
  const db = openDatabase(url, { max: 4 })
  try {
    const [owner] = chain.accounts
    const nft = (await chain.deploy('TestNFT', ['Pushed', 'PSH', ''])).address
    const args = await buildIndexer(root)
    indexer = spawn(process.execPath, args, {
      cwd: root,
      env: {
        ...process.env,
        DATABASE_URL: url,
        RPC_URL: chain.anvil.rpcUrl,
        CONFIRMATIONS: '2',
        MEDIA_DIR: await mkdtemp(path.join(os.tmpdir(), 'bench-push-media-')),
        LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    indexer.stdout!.on('data', (chunk: Buffer) => {
      if (process.env.BENCH_LOG) appendFileSync(process.env.BENCH_LOG, chunk)
    })
    const head = await chain.head()
    for (const started = Date.now(); ; ) {
      const { rows } = await pool.query('SELECT last_indexed_block FROM indexer_state')
      if (rows[0] && BigInt(rows[0].last_indexed_block ?? -1) >= head) break
      if (Date.now() - started > 120_000) throw new Error('the indexer did not catch up in 120 s')
      await sleep(200)
    }

    web = await startWebProcess('web', {
      DATABASE_URL: url,
      REDIS_URL,
      REDIS_KEY_PREFIX: `${schema}:`,
      LOG_LEVEL: 'warn',
      // Generous per-IP limits: every client comes from this one address.
      RATE_LIMIT_IP_KEY: LIMITS,
      RATE_LIMIT_KEY: LIMITS,
      AUTH_SECRET,
      WEBHOOK_ALLOW_HOSTS: receiver.host,
    })
    web.child.stdout!.on('data', (chunk: Buffer) => {
      if (process.env.BENCH_LOG) appendFileSync(process.env.BENCH_LOG, chunk)
    })
    const keyCount = Math.ceil(CLIENTS / STREAMS_PER_KEY)
    const secrets: string[] = []
    for (let k = 0; k < keyCount; k++) {
      const user = await ensureUser(db, `0x${(0xb0000 + k).toString(16).padStart(40, '0')}`)
      secrets.push(
        (await createApiKey(db, { userId: user.id, address: user.address }, { name: 'bench' })).secret,
      )
    }
    const pid = web.child.pid!
    await sleep(1_000)
    const idle = processUsage(pid)

    // token id -> when its block was mined (the receipt); per client, token id -> arrival.
    const mined = new Map<string, number>()
    const arrivals: Array<Map<string, number>> = []
    for (let c = 0; c < CLIENTS; c++) {
      const seen = new Map<string, number>()
      arrivals.push(seen)
      streams.push(
        await openStream(web.base, secrets[Math.floor(c / STREAMS_PER_KEY)]!, (data, at) => {
          const event = JSON.parse(data) as { type: string; data: { token_id: string } }
          if (event.type === 'activity.added') seen.set(event.data.token_id, at)
        }),
      )
    }
    await sleep(2_000)
    const connected = processUsage(pid)
    log(`${CLIENTS} streams open on ${keyCount} keys`)

    const firstId = 1_000_000
    for (let i = 0; i < EVENTS; i++) {
      const tokenId = BigInt(firstId + i)
      const tick = sleep(BLOCK_MS)
      await chain.call(nft, 'TestNFT', 'mint', [owner, tokenId])
      mined.set(tokenId.toString(), performance.now())
      await tick
    }
    // Late deliveries get 10 s.
    for (const end = Date.now() + 10_000; Date.now() < end; ) {
      if (arrivals.every((seen) => seen.size >= EVENTS)) break
      await sleep(100)
    }
    const after = processUsage(pid)

    const latencies: number[] = []
    let missing = 0
    for (const seen of arrivals) {
      for (const [tokenId, minedAt] of mined) {
        const at = seen.get(tokenId)
        if (at === undefined) missing++
        else latencies.push(Math.max(0, at - minedAt))
      }
    }
    latencies.sort((a, b) => a - b)
    const seconds = (EVENTS * BLOCK_MS) / 1000
    log('')
    log(
      `live stream, ${CLIENTS} clients x ${EVENTS} events (a block every ${BLOCK_MS} ms): block mined -> event received p50 ${pct(latencies, 0.5).toFixed(0)} ms, p95 ${pct(latencies, 0.95).toFixed(0)} ms, max ${latencies.at(-1)?.toFixed(0)} ms (target p95 <= 1000 ms); ${missing} deliveries missing`,
    )
    log(
      `web process: RSS ${idle.rssMiB.toFixed(0)} MiB idle, ${connected.rssMiB.toFixed(0)} MiB with ${CLIENTS} streams (${(((connected.rssMiB - idle.rssMiB) * 1024) / CLIENTS).toFixed(1)} KiB per client), ${after.rssMiB.toFixed(0)} MiB at the end; CPU ${(after.cpuS - connected.cpuS).toFixed(1)} s over ${seconds.toFixed(0)} s of events (${(((after.cpuS - connected.cpuS) / CLIENTS / seconds) * 1e6).toFixed(0)} µs per client per second)`,
    )

    // Webhooks: the streams close, endpoints are made, a burst of mints is mined.
    for (const stream of streams.splice(0)) stream.destroy()
    api = await startApiServer(url, {
      AUTH_SECRET,
      WEBHOOK_ALLOW_HOSTS: receiver.host,
      RATE_LIMIT_PORTAL: LIMITS,
    })
    const secretsByPath = new Map<string, string>()
    const hookKeys = Math.ceil(ENDPOINTS / MAX_ENDPOINTS_PER_KEY)
    for (let k = 0; k < hookKeys; k++) {
      const user = await ensureUser(api.db, `0x${(0xc0000 + k).toString(16).padStart(40, '0')}`)
      const key = await createApiKey(api.db, { userId: user.id, address: user.address }, { name: 'hooks' })
      const portal = createPortalHandler(api.services, async () => user)
      for (let e = 0; e < MAX_ENDPOINTS_PER_KEY && secretsByPath.size < ENDPOINTS; e++) {
        const path = `/e/${secretsByPath.size}`
        const res = await portal(
          new Request('http://localhost/api/trpc/webhooks.create', {
            method: 'POST',
            headers: { 'content-type': 'application/json', [CLIENT_IP_HEADER]: '198.51.100.7' },
            body: JSON.stringify({ key_id: key.key.id.toString(), url: `${receiver.origin}${path}` }),
          }),
        )
        const text = await res.text()
        if (res.status !== 200) throw new Error(`webhooks.create: ${res.status} ${text}`)
        secretsByPath.set(
          path,
          (JSON.parse(text) as { result: { data: { secret: string } } }).result.data.secret,
        )
      }
    }
    await sleep(2_000)
    const hookMined = new Map<string, number>()
    let nextId = 2_000_000
    for (let b = 0; b < WEBHOOK_BLOCKS; b++) {
      const first = nextId
      nextId += WEBHOOK_BATCH
      await chain.call(nft, 'TestNFT', 'mintBatch', [owner, BigInt(first), BigInt(WEBHOOK_BATCH)])
      const at = performance.now()
      for (let i = first; i < nextId; i++) hookMined.set(String(i), at)
    }
    const expected = ENDPOINTS * WEBHOOK_BLOCKS * WEBHOOK_BATCH
    const hooks = () => receiver.received.filter((r) => r.body.includes('"activity.added"'))
    for (const end = Date.now() + 120_000; Date.now() < end && hooks().length < expected; ) await sleep(200)
    const deliveries = hooks()
    const perEndpoint = new Map<string, Set<string>>()
    let duplicates = 0
    let unverified = 0
    const hookLatencies: number[] = []
    for (const d of deliveries) {
      const ids = perEndpoint.get(d.path) ?? new Set<string>()
      perEndpoint.set(d.path, ids)
      const id = String(d.headers['webhook-id'])
      if (ids.has(id)) duplicates++
      ids.add(id)
      try {
        const event = await verifyWebhook(
          d.body,
          d.headers as Record<string, string>,
          secretsByPath.get(d.path)!,
        )
        const minedAt = hookMined.get(event.data.token_id)
        if (minedAt !== undefined) hookLatencies.push(Math.max(0, d.at - minedAt))
      } catch {
        unverified++
      }
    }
    hookLatencies.sort((a, b) => a - b)
    const span = deliveries.length > 1 ? (deliveries.at(-1)!.at - deliveries[0]!.at) / 1000 : Number.NaN
    log(
      `webhooks, ${ENDPOINTS} endpoints x ${WEBHOOK_BLOCKS * WEBHOOK_BATCH} events (${WEBHOOK_BLOCKS} blocks of ${WEBHOOK_BATCH} mints): ${deliveries.length} of ${expected} delivered, ${(deliveries.length / span).toFixed(0)} deliveries/s from the first to the last (target >= 200/s); block mined -> delivery received p50 ${pct(hookLatencies, 0.5).toFixed(0)} ms, p95 ${pct(hookLatencies, 0.95).toFixed(0)} ms; ${duplicates} duplicates, ${unverified} signatures that do not verify`,
    )
    log(
      `load average at the end: ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(', ')}`,
    )
  } finally {
    for (const s of streams) s.destroy()
    await api?.close()
    receiver.close()
    await web?.stop()
    if (indexer && indexer.exitCode === null) {
      indexer.kill('SIGTERM')
      await new Promise((r) => indexer!.once('exit', r))
    }
    await db.close()
    for (const name of [schema, `${schema}_pgboss`])
      await pool.query(`DROP SCHEMA IF EXISTS "${name}" CASCADE`).catch(() => undefined)
    await pool.end()
    await chain.stop()
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err)
    process.exit(1)
  },
)
