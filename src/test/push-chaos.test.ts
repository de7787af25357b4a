/**
 * Push delivery under faults, with real processes (docs/push.md): two web
 * processes (`src/server/main.ts`) and the indexer on one PostgreSQL and one
 * Redis, an anvil chain mining new transfers with two reorganisations, a
 * webhook receiver that is down, answers 500s and is slow in turn, kill -9 of
 * a web process and of the indexer while deliveries are under way. At the
 * end: every canonical transfer was delivered to every endpoint and to every
 * (resumed) stream, every delivered event that a reorg took away was followed
 * by its removal, and every webhook's signature verifies.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, describe, expect, it } from 'vitest'
import { verifyWebhook } from '@/client'
import { reorgChain } from '@/dev/devnet/reorg'
import { startTestChain, type TestChain } from '@/indexer/test/chain'
import { type ChildIndexer, spawnIndexer } from '@/indexer/test/child'
import { chainTransfers, waitFor, waitForIndexed } from '@/indexer/test/oracle'
import { createApiKey, ensureUser } from '@/server/api/portal/keys/api-keys'
import { portalRouter } from '@/server/api/portal/router'
import { CredentialVerifier } from '@/server/credentials/verifier'
import { webhookSettings } from '@/server/credentials/webhook-secrets'
import { createTestDatabase, isEmbeddedTestDatabase, type TestDatabase } from '@/test/db'
import { startTestRedis, type TestRedis } from '@/test/redis-server'
import { asDatabase } from '@/test/serve-api'
import { openSse, type SseConnection } from '@/test/sse-client'
import { startWebProcess, type WebProcess } from '@/test/web-process'

const AUTH_SECRET = 'push-chaos-test-auth-secret-0123456789'
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

type Mode = 'ok' | 'down' | 'error' | 'slow'

/** The receiver: answers by its current mode and keeps every request it answered 2xx. */
async function startReceiver() {
  let mode: Mode = 'ok'
  const delivered: Array<{ path: string; headers: http.IncomingHttpHeaders; body: string }> = []
  const server = http.createServer((req, res) => {
    if (mode === 'down') {
      req.socket.destroy()
      return
    }
    let body = ''
    req.setEncoding('utf8')
    req.on('data', (c: string) => {
      body += c
    })
    req.on('end', () => {
      if (mode === 'error') {
        res.writeHead(500).end('down for maintenance')
        return
      }
      const answer = () => {
        delivered.push({ path: req.url ?? '', headers: req.headers, body })
        res.writeHead(200).end()
      }
      if (mode === 'slow') setTimeout(answer, 1_500)
      else answer()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    host: `127.0.0.1:${port}`,
    url: (path: string) => `http://127.0.0.1:${port}${path}`,
    delivered,
    setMode: (m: Mode) => {
      mode = m
    },
    close: () => new Promise((r) => server.close(r)),
  }
}

interface PushEvent {
  id: string
  type: 'activity.added' | 'activity.removed'
  data: { transaction_hash: string; log_index: number; batch_index: number; block_hash: string | null }
}

const eventKey = (e: PushEvent) =>
  `${e.data.transaction_hash}:${e.data.log_index}:${e.data.batch_index}@${e.data.block_hash}`

/**
 * A stream client that resumes: when its connection ends (its process was
 * killed), it connects to the next live process with the last event id.
 */
function resumingStream(processes: () => WebProcess[], credential: string) {
  const events: PushEvent[] = []
  let lastId: string | undefined
  let conn: SseConnection | undefined
  let stopped = false
  let connections = 0
  const loop = (async () => {
    while (!stopped) {
      const live = processes()
      const target = live[connections++ % live.length]!
      try {
        conn = await openSse(`${target.base}/v1/activity/stream`, { credential, lastEventId: lastId })
      } catch {
        await sleep(200)
        continue
      }
      if (conn.status !== 200) {
        await sleep(200)
        continue
      }
      let seen = 0
      const drain = () => {
        for (; seen < conn!.events.length; seen++) {
          const e = conn!.events[seen]!
          events.push(JSON.parse(e.data) as PushEvent)
          lastId = e.id
        }
      }
      while (!conn.isEnded() && !stopped) {
        drain()
        await sleep(50)
      }
      drain()
    }
  })()
  return {
    events,
    get connections() {
      return connections
    },
    async stop() {
      stopped = true
      conn?.close()
      await loop
    },
  }
}

let tdb: TestDatabase | undefined
let redis: TestRedis | undefined
let chain: TestChain | undefined
const webs: WebProcess[] = []
const indexers: ChildIndexer[] = []

afterAll(async () => {
  for (const w of webs) w.child.kill('SIGKILL')
  await Promise.all(indexers.map((i) => i.kill9()))
  await redis?.stop()
  await chain?.stop()
  await tdb?.drop()
})

// Several processes on one database need a server PostgreSQL (the embedded one is single-session).
describe.skipIf(isEmbeddedTestDatabase())('push delivery under faults', () => {
  it('every canonical event reaches every endpoint and resumed stream; reorged ones are removed; signatures verify', async () => {
    chain = await startTestChain()
    tdb = await createTestDatabase({ poolSize: 4 })
    redis = await startTestRedis()
    const receiver = await startReceiver()
    const db = asDatabase(tdb)
    const [alice, bob, carol] = chain.accounts
    const nft = (await chain.deploy('TestNFT', ['Chaos', 'CHS', ''])).address

    const env = {
      DATABASE_URL: tdb.url,
      REDIS_URL: redis.url,
      LOG_LEVEL: 'info',
      AUTH_SECRET,
      WEBHOOK_ALLOW_HOSTS: receiver.host,
      WEBHOOK_RETRY_BASE_MS: '500',
    }
    const indexerEnv = {
      DATABASE_URL: tdb.url,
      RPC_URL: chain.anvil.rpcUrl,
      CONFIRMATIONS: '2',
      MEDIA_DIR: '/tmp/push-chaos-media',
    }
    indexers.push(spawnIndexer(indexerEnv))
    await waitForIndexed(tdb.pool, chain.clients, 60_000)
    webs.push(...(await Promise.all([startWebProcess('A', env), startWebProcess('B', env)])))

    // A key, and two endpoints: one at once, one that waits for two confirmations.
    const user = await ensureUser(db, '0x00000000000000000000000000000000000c4a05')
    const { key, secret } = await createApiKey(
      db,
      { userId: user.id, address: user.address },
      { name: 'chaos' },
    )
    const portal = portalRouter.createCaller({
      db,
      credentials: new CredentialVerifier(db, { cacheMs: 1000, publicOrigin: 'http://localhost:3000' }),
      clientIp: '203.0.113.9',
      userAgent: 'vitest',
      user,
      webhooks: webhookSettings({ AUTH_SECRET, WEBHOOK_ALLOW_HOSTS: [receiver.host] }),
    })
    const secrets = new Map<string, string>()
    for (const [path, minConfirmations] of [
      ['/now', 0],
      ['/confirmed', 2],
    ] as const) {
      const created = await portal.webhooks.create({
        key_id: key.id.toString(),
        url: receiver.url(path),
        min_confirmations: minConfirmations,
      })
      secrets.set(path, created.secret)
    }

    const live = () => webs.filter((w) => w.child.exitCode === null && w.child.signalCode === null)
    const streams = [resumingStream(live, secret), resumingStream(live, secret)]
    await sleep(1_000)

    // Activity, with the faults in turn.
    let nextId = 1n
    const activity = async (steps: number) => {
      for (let i = 0; i < steps; i++) {
        const id = nextId
        nextId += 2n
        await chain!.call(nft, 'TestNFT', 'mintBatch', [alice, id, 2n])
        await chain!.call(nft, 'TestNFT', 'move', [alice, carol, id], alice)
        await sleep(150)
      }
    }
    await activity(3)
    receiver.setMode('down')
    await activity(3)
    // kill -9 of web process A while deliveries fail and are retried; a new one takes its place
    // (started meanwhile: the faults' windows stay short, so retries fall within the test's wait).
    webs[0]!.child.kill('SIGKILL')
    const replacement = startWebProcess('A2', env).then((w) => {
      webs.push(w)
      return w
    })
    receiver.setMode('error')
    await activity(2)
    // Indexed (and journaled) before the reorg takes them away.
    await waitForIndexed(tdb.pool, chain.clients, 60_000)
    await reorgChain(chain.clients, {
      depth: 2,
      accounts: chain.accounts,
      sendReplacementTransactions: async (i) => {
        await chain!.send(nft, 'TestNFT', 'mint', [bob, 1_000_000n + BigInt(i)])
      },
    })
    receiver.setMode('slow')
    await activity(2)
    // kill -9 of the indexer, then a second reorg before it comes back.
    await activity(1)
    await waitForIndexed(tdb.pool, chain.clients, 60_000)
    await indexers[0]!.kill9()
    await activity(1)
    await reorgChain(chain.clients, {
      depth: 2,
      accounts: chain.accounts,
      sendReplacementTransactions: async (i) => {
        await chain!.send(nft, 'TestNFT', 'mint', [bob, 1_000_100n + BigInt(i)])
      },
    })
    indexers.push(spawnIndexer(indexerEnv))
    receiver.setMode('ok')
    await replacement
    await activity(3)
    // Blocks on top, so the endpoint that waits for confirmations gets the last events too.
    for (let i = 0; i < 3; i++) await chain.call(nft, 'TestNFT', 'mint', [carol, 2_000_000n + BigInt(i)])
    await waitForIndexed(tdb.pool, chain.clients, 60_000)

    // The truth: the chain's transfers (all of this test's, so all journaled).
    const truth = await chainTransfers(chain.clients, { standard: [nft], legacy: [] })
    const canonical = new Set(truth.map((t) => `${t.id}@${t.blockHash}`))
    const head = await chain.head()
    const confirmedTwice = new Set(
      truth.filter((t) => head - BigInt(t.blockNumber) >= 2n).map((t) => `${t.id}@${t.blockHash}`),
    )

    const webhookEvents = async (path: string) => {
      const events: PushEvent[] = []
      for (const d of receiver.delivered.filter((r) => r.path === path)) {
        events.push(
          (await verifyWebhook(d.body, d.headers as Record<string, string>, secrets.get(path)!)) as PushEvent,
        )
      }
      return events
    }
    const added = (events: PushEvent[]) =>
      new Set(events.filter((e) => e.type === 'activity.added').map(eventKey))
    const missing = (events: PushEvent[], expected: Set<string>) =>
      [...expected].filter((k) => !added(events).has(k))

    await waitFor(
      async () => {
        const now = await webhookEvents('/now')
        const confirmed = await webhookEvents('/confirmed')
        return (
          missing(now, canonical).length === 0 &&
          missing(confirmed, confirmedTwice).length === 0 &&
          streams.every((s) => missing(s.events, canonical).length === 0)
        )
      },
      200_000,
      'every canonical event delivered to both endpoints and both streams',
    ).catch(async (err) => {
      const now = await webhookEvents('/now')
      throw new Error(
        `${(err as Error).message}: /now misses ${missing(now, canonical).length} of ${canonical.size}, streams miss ${streams.map((s) => missing(s.events, canonical).length)}`,
      )
    })
    // Every delivery settled: the retried ones (reorged events' additions and their removals) too.
    await waitFor(
      async () => {
        const { rows } = await tdb!.pool.query(
          `SELECT count(*)::int AS n FROM webhook_deliveries WHERE status IN ('pending', 'retrying')`,
        )
        return rows[0].n === 0
      },
      200_000,
      'no webhook delivery pending',
    )
    await sleep(1_000)
    for (const s of streams) await s.stop()

    const consumers: Array<[string, PushEvent[]]> = [
      ['/now', await webhookEvents('/now')],
      ['/confirmed', await webhookEvents('/confirmed')],
      ['stream 1', streams[0]!.events],
      ['stream 2', streams[1]!.events],
    ]
    for (const [name, events] of consumers) {
      // Every delivered event that is not canonical was taken away by a reorg: its removal came too.
      const removed = new Set(events.filter((e) => e.type === 'activity.removed').map(eventKey))
      const orphaned = [...added(events)].filter((k) => !canonical.has(k))
      expect({ name, orphanedWithoutRemoval: orphaned.filter((k) => !removed.has(k)) }).toEqual({
        name,
        orphanedWithoutRemoval: [],
      })
    }
    // The faults happened: the reorgs orphaned delivered events, and the streams resumed elsewhere.
    for (const [name, events] of [consumers[0]!, consumers[2]!, consumers[3]!]) {
      expect({ name, orphaned: [...added(events)].some((k) => !canonical.has(k)) }).toEqual({
        name,
        orphaned: true,
      })
    }
    expect(streams.every((s) => s.connections >= 2)).toBe(true)
    // A stream resumed by Last-Event-ID sends nothing twice.
    for (const s of streams) {
      const ids = s.events.map((e) => e.id)
      expect(new Set(ids).size).toBe(ids.length)
    }
    await receiver.close()
  }, 500_000)
})
