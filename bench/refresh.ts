/**
 * npm run bench:refresh — a refresh asked for in the portal, until /v1 serves
 * the new document (docs/metadata.md, "Refresh requests"; target: p95 within 5 s
 * on a fast host).
 *
 * Stack: an anvil devnet; the real indexer process (bundled as `npm start` runs
 * it) on a fresh schema; in this process the web side — the portal's /api/trpc
 * handler (the refresh procedures) and /v1 on a port — on the same database.
 * Hosts: a fast local host whose documents carry a version that the bench
 * changes, and a slow host (headers, then a byte every 3 s) behind an ERC-2309
 * range of BENCH_BACKLOG (10,000) tokens still pending: the backlog the refreshed
 * tokens must pass.
 *
 * Then BENCH_REFRESHES (50) tokens of the fast collection, one every
 * BENCH_SPACING_MS (300): the document's version is changed, the refresh is
 * asked for through the procedure (5 users, so the per-user limit never
 * refuses), and GET /v1/nfts/{address}/{tokenId} is polled every 50 ms until
 * it shows the new name. Figures: p50 / p95 / max of request -> visible.
 *
 * Env: DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres),
 * BENCH_BACKLOG, BENCH_REFRESHES, BENCH_SPACING_MS, BENCH_LOG (a file for the
 * indexer's log lines).
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { appendFileSync } from 'node:fs'
import { mkdtemp } from 'node:fs/promises'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { buildIndexer } from '@/indexer/bundle'
import { startTestChain } from '@/indexer/test/chain'
import { createPortalHandler } from '@/server/api/portal/handler'
import { ensureUser } from '@/server/api/portal/keys/api-keys'
import { CLIENT_IP_HEADER } from '@/server/http/client-ip'
import type { SessionUser } from '@/server/portal-auth/session-user'
import { startApiServer } from '@/test/api-client'
import { benchSchema } from './bench-schema'
import { startHostSimulator } from './metadata-hosts'

const BACKLOG = Number(process.env.BENCH_BACKLOG ?? 10_000)
const REFRESHES = Number(process.env.BENCH_REFRESHES ?? 50)
const SPACING_MS = Number(process.env.BENCH_SPACING_MS ?? 300)

const log = (msg: string) => process.stdout.write(`[bench] ${msg}\n`)
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const root = path.resolve(import.meta.dirname, '..')

/** The fast host: `{ name: "Token <id> v<version>" }` at once, the version per token set by the bench. */
async function startFastHost() {
  const versions = new Map<string, number>()
  const server = http.createServer((req, res) => {
    const id = (req.url ?? '').split('/').pop() ?? ''
    const v = versions.get(id) ?? 1
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ name: `Token ${id} v${v}` }))
  })
  server.keepAliveTimeout = 30_000
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  return {
    origin: `http://127.0.0.1:${port}`,
    key: `127.0.0.1:${port}`,
    setVersion: (id: number, v: number) => versions.set(String(id), v),
    close: () => new Promise((r) => server.close(r)),
  }
}

const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!

async function main() {
  const load = os.loadavg().map((l) => l.toFixed(2))
  log(`load average at start: ${load.join(', ')} (${os.cpus().length} cores)`)
  const fast = await startFastHost()
  const sim = await startHostSimulator(['slow'])
  const slow = sim.hosts[0]!
  const chain = await startTestChain()
  const { schema, url, pool } = await benchSchema('bench_refresh')
  let indexer: ChildProcess | undefined
  let api: Awaited<ReturnType<typeof startApiServer>> | undefined
  try {
    const [, owner] = chain.accounts
    // The backlog first: a range of BACKLOG tokens whose documents live on the slow host.
    const range = (await chain.deploy('TestConsecutiveURI', [owner, BigInt(BACKLOG), `${slow.origin}/meta/`]))
      .address
    const collection = (await chain.deploy('TestNFT', ['Refreshed', 'RFR', `${fast.origin}/m/`])).address
    await chain.call(collection, 'TestNFT', 'mintBatch', [owner, 1n, BigInt(REFRESHES)])

    const mediaDir = await mkdtemp(path.join(os.tmpdir(), 'bench-refresh-media-'))
    const args = await buildIndexer(root)
    indexer = spawn(process.execPath, args, {
      cwd: root,
      env: {
        ...process.env,
        DATABASE_URL: url,
        RPC_URL: chain.anvil.rpcUrl,
        CONFIRMATIONS: '2',
        MEDIA_DIR: mediaDir,
        FETCH_ALLOW_HOSTS: [fast.key, slow.key].join(','),
        LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    indexer.stdout!.on('data', (chunk: Buffer) => {
      if (process.env.BENCH_LOG) appendFileSync(process.env.BENCH_LOG, chunk)
    })

    // Every refreshable token ok at version 1, the backlog indexed and still pending.
    const count = async (sql: string, params: unknown[]) =>
      (await pool.query(sql, params)).rows[0].n as number
    const started = Date.now()
    for (;;) {
      const ok = await count(
        `SELECT count(*)::int AS n FROM tokens WHERE collection_address = $1 AND metadata_status = 'ok'`,
        [collection],
      )
      const backlog = await count(`SELECT count(*)::int AS n FROM tokens WHERE collection_address = $1`, [
        range,
      ])
      if (ok === REFRESHES && backlog === BACKLOG) break
      if (Date.now() - started > 300_000)
        throw new Error(`not ready after 300 s: ${ok} ok, ${backlog} of the range`)
      await sleep(500)
    }
    await sleep(3_000)
    const pendingBefore = await count(
      `SELECT count(*)::int AS n FROM tokens WHERE collection_address = $1 AND metadata_status <> 'ok' AND metadata_next_attempt_at IS NOT NULL`,
      [range],
    )
    log(
      `ready: ${REFRESHES} tokens ok on the fast host, ${pendingBefore} of ${BACKLOG} tokens queued on the slow host`,
    )

    api = await startApiServer(url)
    const users: SessionUser[] = []
    for (let u = 0; u < 5; u++)
      users.push(await ensureUser(api.db, `0x${(0xbe00 + u).toString(16).padStart(40, '0')}`))
    let current: SessionUser = users[0]!
    const portal = createPortalHandler(api.services, async () => current)
    const refresh = async (tokenId: number, as: SessionUser) => {
      current = as
      const res = await portal(
        new Request('http://localhost/api/trpc/refresh.token', {
          method: 'POST',
          headers: { 'content-type': 'application/json', [CLIENT_IP_HEADER]: '198.51.100.9' },
          body: JSON.stringify({ address: collection, token_id: String(tokenId) }),
        }),
      )
      const text = await res.text()
      if (res.status !== 200) throw new Error(`refresh of ${tokenId}: ${res.status} ${text}`)
    }
    const visible = async (tokenId: number, name: string) => {
      for (;;) {
        const res = await api!.request(`/v1/nfts/${collection}/${tokenId}`)
        const body = (await res.json()) as { data?: { name?: string } }
        if (body.data?.name === name) return
        await sleep(50)
      }
    }

    const latencies: number[] = []
    const runs: Promise<void>[] = []
    for (let i = 1; i <= REFRESHES; i++) {
      fast.setVersion(i, 2)
      const t0 = performance.now()
      await refresh(i, users[i % users.length]!)
      runs.push(
        Promise.race([
          visible(i, `Token ${i} v2`).then(() => {
            latencies.push(performance.now() - t0)
          }),
          sleep(60_000).then(() => {
            latencies.push(60_000)
          }),
        ]),
      )
      await sleep(SPACING_MS)
    }
    await Promise.all(runs)
    latencies.sort((a, b) => a - b)
    const pendingAfter = await count(
      `SELECT count(*)::int AS n FROM tokens WHERE collection_address = $1 AND metadata_status <> 'ok' AND metadata_next_attempt_at IS NOT NULL`,
      [range],
    )
    log(`backlog on the slow host after the refreshes: ${pendingAfter} queued`)
    log('')
    log(
      `refresh -> visible through GET /v1 (${REFRESHES} refreshes, ${BACKLOG} pending on a slow host): p50 ${pct(latencies, 0.5).toFixed(0)} ms, p95 ${pct(latencies, 0.95).toFixed(0)} ms, max ${latencies[latencies.length - 1]!.toFixed(0)} ms (target p95 <= 5000 ms)`,
    )
    log(
      `load average at the end: ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(', ')}`,
    )
  } finally {
    await api?.close()
    if (indexer && indexer.exitCode === null) {
      const exited = new Promise((r) => indexer!.once('exit', r))
      indexer.kill('SIGTERM')
      await exited
    }
    await chain.stop()
    await sim.close()
    await fast.close()
    await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined)
    await pool.end()
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err)
    process.exit(1)
  },
)
