/**
 * Webhook delivery end to end on a real database and pg-boss, to a real HTTP
 * receiver on 127.0.0.1 (allow-listed): Standard Webhooks signatures, the
 * same webhook-id on every attempt and redelivery, retries, redirects not
 * followed, deadlines, reorg removals, confirmations, the SSRF guard at
 * delivery, and automatic disabling after a failure run. Transfers are
 * written through the indexer's store (commit and rollback), which the
 * journal's triggers record.
 */
import http from 'node:http'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { verifyWebhook } from '@/client'
import { createLogger } from '@/config/logger'
import { parseAllowHosts } from '@/net/guarded-lookup'
import { ensureUser } from '@/server/api/portal/keys/api-keys'
import { portalRouter } from '@/server/api/portal/router'
import type { PortalContext } from '@/server/api/trpc/portal'
import { CredentialVerifier } from '@/server/credentials/verifier'
import { deriveSealKey, type WebhookSettings } from '@/server/credentials/webhook-secrets'
import { WebMetrics } from '@/server/metrics/web-metrics'
import type { SessionUser } from '@/server/portal-auth/session-user'
import { pushEvent } from '@/server/push/activity-event'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import { freePort } from '@/test/free-port'
import { JournalWriter, OTHER_COLLECTION } from '@/test/journal-writes'
import { asDatabase } from '@/test/serve-api'
import { WebhookDelivery, type WebhookDeliveryOptions } from './webhook-delivery'

let db: TestDatabase
let user: SessionUser
let keyId: string

// ── The receiver ───────────────────────────────────────────────────────────

interface Received {
  path: string
  headers: http.IncomingHttpHeaders
  body: string
}
type Reply = (res: http.ServerResponse) => void
let received: Received[] = []
let replies: Reply[] = []
let fallback: Reply = (res) => res.writeHead(204).end()
let receiver: http.Server
let port: number
const hanging = new Set<http.ServerResponse>()

beforeAll(async () => {
  db = await createTestDatabase({ poolSize: 8 })
  user = await ensureUser(asDatabase(db), '0x00000000000000000000000000000000000A11CE')
  keyId = (await portal(allowAll()).keys.create({ name: 'hooks' })).key.id
  port = await freePort()
  receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      received.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString() })
      ;(replies.shift() ?? fallback)(res)
    })
  })
  await new Promise<void>((resolve) => receiver.listen(port, '127.0.0.1', resolve))
}, 60_000)

afterAll(async () => {
  for (const res of hanging) res.destroy()
  await new Promise((resolve) => receiver?.close(resolve))
  await db?.drop()
})

let delivery: WebhookDelivery | undefined
let journal: JournalWriter

beforeEach(async () => {
  await db.pool.query('TRUNCATE webhook_deliveries, webhook_endpoints CASCADE')
  journal ??= new JournalWriter(db.pool)
  await journal.reset()
  received = []
  replies = []
  fallback = (res) => res.writeHead(204).end()
})

afterEach(async () => {
  await delivery?.stop()
  delivery = undefined
})

// ── Helpers ────────────────────────────────────────────────────────────────

const AUTH_SECRET = 'a-test-secret-of-at-least-32-characters!'

/** One attempt per delivery: a failed attempt is final. */
const NO_RETRY = { attempts: 1, baseMs: 1_000, factor: 2, capMs: 1_000, jitter: 0 }
const allowAll = (): WebhookSettings => ({
  sealKey: deriveSealKey(AUTH_SECRET),
  allowHosts: parseAllowHosts([`127.0.0.1:${port}`]),
})

function portal(webhooks: WebhookSettings, who: SessionUser | null = user) {
  const d = asDatabase(db)
  const ctx: PortalContext = {
    db: d,
    credentials: new CredentialVerifier(d, { cacheMs: 1000, publicOrigin: 'http://localhost:3000' }),
    clientIp: '203.0.113.7',
    userAgent: 'vitest',
    user: who,
    webhooks,
  }
  return portalRouter.createCaller(ctx)
}

async function startDelivery(options: Partial<WebhookDeliveryOptions> = {}) {
  delivery = new WebhookDelivery({
    db: asDatabase(db),
    connectionString: db.url,
    network: 'devnet',
    settings: allowAll(),
    logger: createLogger({ level: 'silent' }),
    retry: { attempts: 3, baseMs: 300, factor: 2, capMs: 2_000, jitter: 0 },
    timeoutMs: 1_000,
    pollMs: 100,
    jobPollSeconds: 0.5,
    concurrency: 100,
    ...options,
  })
  await delivery.start()
  return delivery
}

async function createEndpoint(input: { min_confirmations?: number; path?: string } = {}) {
  return portal(allowAll()).webhooks.create({
    key_id: keyId,
    url: `http://127.0.0.1:${port}${input.path ?? '/hook'}`,
    min_confirmations: input.min_confirmations ?? 0,
  })
}

async function until<T>(
  what: string,
  check: () => T | Promise<T>,
  timeoutMs = 8_000,
): Promise<Exclude<T, null | undefined | false>> {
  const end = Date.now() + timeoutMs
  for (;;) {
    const value = await check()
    if (value) return value as Exclude<T, null | undefined | false>
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

/**
 * Locks the endpoint's row, runs `locked`, and kills the connection of the next write that
 * waits for the row (a dropped backend, a network fault): the attempt it records fails.
 */
async function killNextWriteOf(endpointId: string, locked: () => void) {
  const locker = await db.pool.connect()
  try {
    await locker.query('BEGIN')
    await locker.query('SELECT 1 FROM webhook_endpoints WHERE id = $1 FOR UPDATE', [endpointId])
    const { pid } = (await locker.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!
    locked()
    await until('a write waiting for the row', async () => {
      const { rowCount } = await db.pool.query(
        'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))',
        [pid],
      )
      return (rowCount ?? 0) > 0
    })
    await locker.query('COMMIT')
  } finally {
    locker.release()
  }
}

/**
 * Makes the receiver hang on every request to a path starting with `prefix` (the others get a
 * 204), and counts those requests: open now, the most open at once, those cut and their paths.
 */
function hangAtPathsFrom(prefix: string) {
  const receivers = { open: new Set<http.ServerResponse>(), mostOpen: 0, cut: 0, cutPaths: new Set<string>() }
  fallback = (res) => {
    if (!res.req.url?.startsWith(prefix)) return res.writeHead(204).end()
    hanging.add(res)
    receivers.open.add(res)
    receivers.mostOpen = Math.max(receivers.mostOpen, receivers.open.size)
    res.on('close', () => {
      receivers.open.delete(res)
      receivers.cut++
      receivers.cutPaths.add(res.req.url!)
    })
  }
  return receivers
}

/** The events received at `path`, in event id order (delivery order is not guaranteed: docs/push.md, "Order"). */
const events = (path = '/hook') =>
  received
    .filter((r) => r.path === path)
    .map((r) => JSON.parse(r.body) as { id: string; type: string; data: { token_id: string } })
    .sort((a, b) => Number(BigInt(a.id) - BigInt(b.id)))
const summary = () => events().map((e) => `${e.type}:${e.data.token_id}`)

async function deliveries(endpointId: string) {
  return portal(allowAll()).webhooks.deliveries({ id: endpointId })
}

// ── Tests ──────────────────────────────────────────────────────────────────

describe('webhook delivery', () => {
  it('POSTs the push event signed the Standard Webhooks way, and logs the delivery', async () => {
    const { endpoint, secret } = await createEndpoint()
    await startDelivery()
    await journal.commitBlock(1, 1)
    await until('a delivery', () => received.length === 1)
    const [request] = received
    const headers = {
      'webhook-id': String(request!.headers['webhook-id']),
      'webhook-timestamp': String(request!.headers['webhook-timestamp']),
      'webhook-signature': String(request!.headers['webhook-signature']),
    }
    // The receiver's check, with the secret shown at creation (the typed client's helper).
    const event = pushEvent.parse(verifyWebhook(request!.body, request!.headers, secret))
    expect(event.type).toBe('activity.added')
    expect(event.data.token_id).toBe('1')
    const { rows } = await db.pool.query<{ seq: string }>('SELECT seq::text AS seq FROM activity_journal')
    expect(event.id).toBe(rows[0]!.seq)
    expect(headers['webhook-id']).toBe(event.id)
    expect(request!.headers['content-type']).toBe('application/json')
    // Another secret does not verify it.
    expect(() =>
      verifyWebhook(request!.body, headers, `whsec_${Buffer.alloc(32, 7).toString('base64')}`),
    ).toThrow(/signature/i)
    const log = await until('the log', async () => {
      const d = await deliveries(endpoint.id)
      return d[0]?.status === 'delivered' ? d : null
    })
    expect(log[0]).toMatchObject({
      event_id: event.id,
      event_type: 'activity.added',
      attempts: 1,
      last_status_code: 204,
    })
    expect(log[0]!.last_duration_ms).toBeGreaterThanOrEqual(0)
  })

  it('retries a 500 and delivers on the 200, with the same webhook-id; a redelivery sends it again', async () => {
    const { endpoint } = await createEndpoint()
    replies = [(res) => res.writeHead(500).end('down')]
    const metrics = new WebMetrics(db.pool)
    await startDelivery({ metrics })
    await journal.commitBlock(1, 1)
    await until('the retry', () => received.length === 2)
    expect(received[0]!.headers['webhook-id']).toBe(received[1]!.headers['webhook-id'])
    expect(received[0]!.body).toBe(received[1]!.body)
    const log = await until('delivered', async () => {
      const d = await deliveries(endpoint.id)
      return d[0]?.status === 'delivered' ? d : null
    })
    expect(log[0]).toMatchObject({ attempts: 2, last_status_code: 204 })
    const text = await metrics.registry.metrics()
    expect(text).toContain('nft_webhook_attempts_total{outcome="delivered"} 1\n')
    expect(text).toContain('nft_webhook_attempts_total{outcome="failed"} 1\n')
    // One click: the same event again, same id and body.
    const again = await portal(allowAll()).webhooks.redeliver({ id: endpoint.id, delivery_id: log[0]!.id })
    expect(again.event_id).toBe(log[0]!.event_id)
    await until('the redelivery', () => received.length === 3)
    expect(received[2]!.headers['webhook-id']).toBe(received[0]!.headers['webhook-id'])
    expect(received[2]!.body).toBe(received[0]!.body)
  })

  it('does not follow a redirect, cuts a hanging receiver at the deadline, and counts a 4xx as a failure', async () => {
    const { endpoint } = await createEndpoint()
    replies = [
      (res) => res.writeHead(302, { location: `http://127.0.0.1:${port}/elsewhere` }).end(),
      (res) => hanging.add(res),
      (res) => res.writeHead(410).end(),
    ]
    await startDelivery()
    await journal.commitBlock(1, 1)
    const log = await until(
      'three failed attempts',
      async () => {
        const d = await deliveries(endpoint.id)
        return d[0]?.status === 'failed' ? d : null
      },
      12_000,
    )
    expect(received.map((r) => r.path)).toEqual(['/hook', '/hook', '/hook'])
    expect(log[0]).toMatchObject({ attempts: 3, last_status_code: 410, next_attempt_at: null })
    const errors = (
      await db.pool.query<{ last_error: string }>('SELECT last_error FROM webhook_deliveries')
    ).rows.map((r) => r.last_error)
    expect(errors[0]).toBe('HTTP 410')
  }, 20_000)

  it('a hanging receiver is a failed attempt with no status', async () => {
    const { endpoint } = await createEndpoint()
    replies = [(res) => hanging.add(res)]
    await startDelivery()
    await journal.commitBlock(1, 1)
    const log = await until('the timed-out attempt', async () => {
      const d = await deliveries(endpoint.id)
      return d[0]?.attempts === 1 && d[0].status === 'retrying' ? d : null
    })
    expect(log[0]!.last_status_code).toBeNull()
    expect(log[0]!.last_error).toMatch(/No complete answer within 1000 ms/)
    expect(log[0]!.last_duration_ms).toBeGreaterThanOrEqual(950)
  })

  it('an answer larger than the cap is a failed attempt, even with a 2xx', async () => {
    const { endpoint } = await createEndpoint()
    replies = [(res) => res.writeHead(200).end('x'.repeat(4096))]
    await startDelivery({ maxResponseBytes: 1024 })
    await journal.commitBlock(1, 1)
    const log = await until('the oversized attempt', async () => {
      const d = await deliveries(endpoint.id)
      return d[0]?.attempts === 1 && d[0].status === 'retrying' ? d : null
    })
    expect(log[0]).toMatchObject({ last_status_code: 200, last_error: 'Answer larger than 1024 bytes' })
    // The retry is answered normally and delivers.
    await until('delivered on retry', async () => (await deliveries(endpoint.id))[0]?.status === 'delivered')
  })

  it('sends the removal of a sent event after a reorg, and holds additions for their confirmations', async () => {
    await createEndpoint()
    const confirmed = await createEndpoint({ min_confirmations: 2, path: '/confirmed' })
    await startDelivery()
    await journal.commitBlock(1, 1)
    await journal.commitBlock(2, 2)
    await journal.reorgTo(1, 2)
    await journal.commitBlock(2, 2, 1)
    await until('four events at once', () => received.filter((r) => r.path === '/hook').length === 4)
    expect(summary()).toEqual([
      'activity.added:1',
      'activity.added:2',
      'activity.removed:2',
      'activity.added:1002',
    ])
    // The endpoint that waits for 2 confirmations got nothing yet (head 2: block 1 has 1).
    expect(received.some((r) => r.path === '/confirmed')).toBe(false)
    expect((await deliveries(confirmed.endpoint.id)).length).toBe(0)
    await journal.commitBlock(3, 3, 1)
    await until('the confirmed event', () => received.some((r) => r.path === '/confirmed'))
    const sent = received.filter((r) => r.path === '/confirmed').map((r) => JSON.parse(r.body).data.token_id)
    // Block 1 has its two confirmations; block 2's first event never had them, so neither half is sent.
    expect(sent).toEqual(['1'])
  })

  it('refuses a private address at delivery when it is not allow-listed (literal or resolved)', async () => {
    const { endpoint } = await createEndpoint()
    // A host name allowed when it was created, whose DNS answer is loopback.
    const byName = await portal({
      ...allowAll(),
      allowHosts: parseAllowHosts([`localhost:${port}`]),
    }).webhooks.create({ key_id: keyId, url: `http://localhost:${port}/by-name` })
    await startDelivery({ settings: { ...allowAll(), allowHosts: new Set() } })
    await journal.commitBlock(1, 1)
    const refused = async (id: string) =>
      until('the refused attempt', async () => {
        const d = await deliveries(id)
        return d[0] && d[0].attempts >= 1 ? d[0] : null
      })
    expect((await refused(endpoint.id)).last_error).toMatch(/Refused 127\.0\.0\.1 \(loopback\)/)
    expect((await refused(byName.endpoint.id)).last_error).toMatch(
      /^Refused localhost: it resolves to a blocked address \(loopback\)$/,
    )
    expect(received).toEqual([])
  })

  it('a secret sealed under another server secret is a failed attempt that says to rotate it', async () => {
    const { endpoint } = await createEndpoint()
    await startDelivery({
      settings: { ...allowAll(), sealKey: deriveSealKey('another-server-secret-of-32-characters!!') },
    })
    await journal.commitBlock(1, 1)
    const log = await until('the failed attempt', async () => {
      const d = await deliveries(endpoint.id)
      return d[0] && d[0].attempts >= 1 ? d : null
    })
    expect(log[0]!.last_error).toMatch(/signing secret cannot be read.*rotate/)
    expect(received).toEqual([])
  })

  it('two processes share the work: every event delivered once, none twice', async () => {
    await createEndpoint()
    const other = new WebhookDelivery({
      db: asDatabase(db),
      connectionString: db.url,
      network: 'devnet',
      settings: allowAll(),
      logger: createLogger({ level: 'silent' }),
      pollMs: 50,
      jobPollSeconds: 0.5,
    })
    await startDelivery({ pollMs: 50 })
    await other.start()
    try {
      for (let block = 1; block <= 6; block++) {
        await journal.commitBlock(block, block)
        other.wake()
        delivery!.wake()
      }
      await until('six deliveries', () => received.length >= 6)
      await new Promise((r) => setTimeout(r, 1_000))
      const ids = received.map((r) => String(r.headers['webhook-id']))
      expect(new Set(ids).size).toBe(6)
      expect(ids.length).toBe(6)
    } finally {
      await other.stop()
    }
  })

  it('applies the filters, and passes over what they exclude (the cursor reaches the journal end)', async () => {
    await portal(allowAll()).webhooks.create({
      key_id: keyId,
      url: `http://127.0.0.1:${port}/burns`,
      event_type: 'burn',
    })
    await portal(allowAll()).webhooks.create({
      key_id: keyId,
      url: `http://127.0.0.1:${port}/other`,
      collection: '0x00000000000000000000000000000000000000f2',
    })
    await createEndpoint()
    const d = await startDelivery()
    await journal.commitBlock(1, 1)
    await journal.commitBlock(2, 2)
    // ERC-1155 entries last in the journal: passed over by every endpoint, unfiltered ones included.
    await journal.insertErc1155(2, 5, 3n)
    await until('the mints', () => events().length === 2)
    await d.dispatch()
    expect(received.every((r) => r.path === '/hook')).toBe(true)
    expect(events().length).toBe(2)
    const { rows } = await db.pool.query<{ id: string; cursor: string; newest: string }>(
      'SELECT id::text AS id, cursor::text AS cursor, (SELECT max(seq) FROM activity_journal)::text AS newest FROM webhook_endpoints',
    )
    expect(rows.length).toBe(3)
    for (const row of rows) expect(row.cursor).toBe(row.newest)
  })

  it('an endpoint that names a standard receives those events with their amount, as the stream does', async () => {
    const create = (path: string, standard: 'ERC1155' | 'all') =>
      portal(allowAll()).webhooks.create({ key_id: keyId, url: `http://127.0.0.1:${port}${path}`, standard })
    const all = await create('/all', 'all')
    expect(all.endpoint.standard).toBe('all')
    await create('/editions', 'ERC1155')
    const plain = await createEndpoint()
    expect(plain.endpoint.standard).toBeNull()
    const d = await startDelivery()
    await journal.commitBlock(1, 1)
    await journal.insertErc1155(1, 5, 3n)
    await until('every delivery', () => received.length === 4)
    await d.dispatch()
    const at = (path: string) =>
      events(path).map((e) => {
        const data = e.data as { token_id: string; amount?: string; contract_type?: string }
        return `${data.token_id}:${data.amount ?? '-'}`
      })
    // Without a standard: ERC-721 only, and no amount (as before standards existed).
    expect(at('/hook')).toEqual(['1:-'])
    expect(at('/all')).toEqual(['1:1', '5:3'])
    expect(at('/editions')).toEqual(['5:3'])
    expect(received.length).toBe(4)
  })

  it('schedules a retry by the database clock: a process clock 10 minutes behind still waits its delay', async () => {
    await createEndpoint()
    replies = [(res) => res.writeHead(503).end()]
    const realNow = Date.now.bind(Date)
    const skewed = vi.spyOn(Date, 'now').mockImplementation(() => realNow() - 10 * 60_000)
    try {
      await startDelivery({ retry: { attempts: 3, baseMs: 30_000, factor: 1, capMs: 30_000, jitter: 0 } })
      await journal.commitBlock(1, 1)
      await until('the first attempt recorded', async () => {
        const { rows } = await db.pool.query<{ due_in_s: number }>(
          `SELECT extract(epoch FROM next_attempt_at - now())::float8 AS due_in_s
             FROM webhook_deliveries WHERE status = 'retrying'`,
        )
        return rows[0]
      })
      const { rows } = await db.pool.query<{ due_in_s: number }>(
        'SELECT extract(epoch FROM next_attempt_at - now())::float8 AS due_in_s FROM webhook_deliveries',
      )
      // Due 30 s after the failure by the database's clock, which the delivery log shows.
      expect(rows[0]!.due_in_s).toBeGreaterThan(25)
      expect(rows[0]!.due_in_s).toBeLessThanOrEqual(30)
      await new Promise((r) => setTimeout(r, 3_000))
      expect(received.length).toBe(1)
    } finally {
      skewed.mockRestore()
    }
  })

  it('an attempt that fails to record: no attempt runs twice at once, none is stranded', async () => {
    // Event A's first request is held 6 s, then answered 500; its next gets the fallback 204. Event B
    // is answered at once, but its write of the outcome waits for a lock and its connection is killed.
    const { endpoint } = await createEndpoint()
    await journal.commitBlock(1, 1)
    await journal.commitBlock(2, 2)
    const [eventA, eventB] = (
      await db.pool.query<{ seq: string }>('SELECT seq::text AS seq FROM activity_journal ORDER BY seq')
    ).rows.map((r) => r.seq)
    let openA = 0
    let maxOpenA = 0
    let killedB = false
    fallback = (res) => {
      const id = received.at(-1)?.headers['webhook-id']
      if (id === eventA && received.filter((r) => r.headers['webhook-id'] === eventA).length === 1) {
        openA++
        maxOpenA = Math.max(maxOpenA, openA)
        setTimeout(() => {
          openA--
          res.writeHead(500).end()
        }, 6_000)
        return
      }
      if (id === eventA) maxOpenA = Math.max(maxOpenA, openA + 1)
      if (id === eventB && !killedB) {
        killedB = true
        void killNextWriteOf(endpoint.id, () => res.writeHead(200).end())
        return
      }
      res.writeHead(204).end()
    }
    await startDelivery({
      concurrency: 25,
      timeoutMs: 15_000,
      retry: { attempts: 5, baseMs: 1_000, factor: 1, capMs: 1_000, jitter: 0 },
    })
    const stateOfA = async () =>
      (
        await db.pool.query<{ status: string; attempts: number }>(
          'SELECT status, attempts FROM webhook_deliveries WHERE event_id = $1',
          [eventA],
        )
      ).rows[0]
    await until('A delivered', async () => (await stateOfA())?.status === 'delivered', 25_000)
    expect(killedB).toBe(true)
    // A's 500, then its 200: two attempts, one at a time.
    expect({ maxOpenA, a: await stateOfA() }).toEqual({
      maxOpenA: 1,
      a: { status: 'delivered', attempts: 2 },
    })
  }, 40_000)

  it('a job whose every run fails to record its attempt is queued again, not left pending', async () => {
    // The first three requests are answered 200, and each time the write of the outcome is
    // killed: the job fails its run and pg-boss's two retries, which ends pg-boss's own retrying.
    const { endpoint } = await createEndpoint()
    await journal.commitBlock(1, 1)
    let killed = 0
    fallback = (res) => {
      if (killed < 3) {
        killed++
        void killNextWriteOf(endpoint.id, () => res.writeHead(200).end())
        return
      }
      res.writeHead(204).end()
    }
    await startDelivery({ concurrency: 25, strandedRetrySeconds: 1 })
    const state = async () =>
      (
        await db.pool.query<{ status: string; attempts: number }>(
          'SELECT status, attempts FROM webhook_deliveries',
        )
      ).rows[0]
    await until('the delivery recorded', async () => (await state())?.status === 'delivered', 30_000)
    expect({ killed, requests: received.length, delivery: await state() }).toEqual({
      killed: 3,
      requests: 4,
      delivery: { status: 'delivered', attempts: 1 },
    })
  }, 45_000)

  it("a receiver that hangs holds up its own deliveries only: another endpoint's event is not queued behind them", async () => {
    // One endpoint takes every event and its receiver never answers (cut at the 1 s deadline);
    // the other takes one collection's events only.
    await portal(allowAll()).webhooks.create({ key_id: keyId, url: `http://127.0.0.1:${port}/hangs` })
    await portal(allowAll()).webhooks.create({
      key_id: keyId,
      url: `http://127.0.0.1:${port}/hook`,
      collection: OTHER_COLLECTION,
    })
    fallback = (res) => {
      if (res.req.url === '/hangs') hanging.add(res)
      else res.writeHead(204).end()
    }
    // Every slot of the process may go to one endpoint here: this is the priority's test.
    await startDelivery({
      timeoutMs: 1_000,
      concurrency: 10,
      endpointSlots: { perEndpoint: 10, perUnprovenEndpoint: 10, unprovenShare: 10 },
      retry: NO_RETRY,
    })
    // A backlog of 100 events for the hanging receiver alone: ten at a time, a second each.
    await journal.commit(journal.blockBatch(1, 1, { mints: 100 }))
    await until('the hanging receiver to hold every attempt', () => received.length >= 10)
    await journal.commitBlock(2, 2, 0, OTHER_COLLECTION)
    const sent = Date.now()
    await until('the other endpoint to receive its event', () => events().length === 1, 30_000)
    const waitedMs = Date.now() - sent
    // Queued behind the backlog it waited for the hanging receiver's hundred attempts: 10 s.
    expect(waitedMs).toBeLessThan(4_000)
    console.log(`webhook fairness: delivered after ${waitedMs} ms next to a backlog of a hanging receiver`)
  }, 60_000)

  it("a receiver that hangs holds its endpoint's slots only: another endpoint's event goes out while every hanging attempt is still open", async () => {
    const { endpoint: hung } = await portal(allowAll()).webhooks.create({
      key_id: keyId,
      url: `http://127.0.0.1:${port}/hangs`,
    })
    await portal(allowAll()).webhooks.create({
      key_id: keyId,
      url: `http://127.0.0.1:${port}/hook`,
      collection: OTHER_COLLECTION,
    })
    const receivers = hangAtPathsFrom('/hangs')
    // It has not answered yet: its slots are those of an endpoint not proven, three here.
    await startDelivery({
      timeoutMs: 20_000,
      concurrency: 10,
      endpointSlots: { perUnprovenEndpoint: 3, holdPerEndpoint: 10 },
      retry: NO_RETRY,
    })
    await journal.commit(journal.blockBatch(1, 1, { mints: 100 }))
    await until("the hanging receiver to hold its endpoint's three slots", () => receivers.open.size >= 3)
    // Meanwhile its other 97 jobs are fetched: 10 held for its slots, the rest parked in the queue.
    await new Promise((r) => setTimeout(r, 1_000))
    await journal.commitBlock(2, 2, 0, OTHER_COLLECTION)
    // Without the endpoint's limit the hanging receiver held all ten slots, and this event
    // waited for the first of them to be cut at the 20 s deadline.
    await until('the other endpoint to receive its event', () => events().length === 1, 10_000)
    expect(receivers.mostOpen).toBe(3)
    expect(receivers.open.size).toBe(3)
    // A job held or parked is not an attempt: nothing is recorded until an attempt ends.
    const { rows } = await db.pool.query(
      `SELECT status, attempts, count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = $1 GROUP BY 1, 2`,
      [hung.id],
    )
    // (It takes every event: the 100 and the other collection's.)
    expect(rows).toEqual([{ status: 'pending', attempts: 0, n: 101 }])
  }, 60_000)

  it("receivers that hang hold half the process's slots from their first attempts, a quarter once they fail: an endpoint that answered, or a new one, has the rest", async () => {
    await portal(allowAll()).webhooks.create({
      key_id: keyId,
      url: `http://127.0.0.1:${port}/hook`,
      collection: OTHER_COLLECTION,
    })
    const receivers = hangAtPathsFrom('/hangs')
    // Defaults but the process's size: 10 slots, 2 per endpoint not proven, 5 shared by them,
    // 2 of those by the ones that fail.
    const metrics = new WebMetrics(db.pool)
    const inFlight = async (endpoints: string) => {
      const line = `nft_webhook_attempts_in_flight{endpoints="${endpoints}"} `
      const text = await metrics.registry.metrics()
      return Number(
        text
          .split('\n')
          .find((l) => l.startsWith(line))
          ?.slice(line.length),
      )
    }
    await startDelivery({ timeoutMs: 8_000, concurrency: 10, retry: NO_RETRY, metrics })
    // The other endpoint answers once: proven, it has its own slots from now on.
    await journal.commitBlock(1, 1, 0, OTHER_COLLECTION)
    await until('the other endpoint to receive its first event', () => events().length === 1)
    // Four new endpoints that never answer, with a backlog each.
    for (const path of ['/hangs-1', '/hangs-2', '/hangs-3', '/hangs-4']) await createEndpoint({ path })
    await journal.commit(journal.blockBatch(2, 2, { mints: 30 }))
    // Not proven: together they have five attempts at once, though each may have two.
    await until('the new endpoints to fill their share', () => receivers.open.size === 5)
    await new Promise((r) => setTimeout(r, 500))
    expect(receivers.cut).toBe(0)
    await journal.commitBlock(3, 3, 0, OTHER_COLLECTION)
    await until('the other endpoint to receive its second event', () => events().length === 2)
    // It took one of the five slots the hanging endpoints leave: no hanging attempt had to end
    // first. (When only endpoints that had failed shared, all four held two each until the first
    // cut, and with every slot open to them they held all ten.)
    expect(receivers.cut).toBe(0)
    expect(receivers.open.size).toBe(5)
    expect(receivers.mostOpen).toBe(5)
    expect(await inFlight('untried')).toBe(5)

    // Cut at the deadline, they fail: once each has failed, their next attempts have two slots
    // between them. (An endpoint whose cut comes a few milliseconds after another's is not known
    // to fail yet when that one's slot frees: an attempt it starts then runs to its own deadline.)
    await until('an attempt of each cut', () => receivers.cutPaths.size === 4, 30_000)
    let twoSince = Date.now()
    await until(
      'the failing endpoints to hold two slots for a second',
      () => {
        if (receivers.open.size !== 2) twoSince = Date.now()
        return Date.now() - twoSince >= 1_000
      },
      25_000,
    )
    expect(await inFlight('failing')).toBe(2)
    expect(await inFlight('untried')).toBe(0)
    const cutBefore = receivers.cut
    // An endpoint created now is not tried yet: it takes a share slot the failing ones leave.
    await portal(allowAll()).webhooks.create({
      key_id: keyId,
      url: `http://127.0.0.1:${port}/fresh`,
      collection: OTHER_COLLECTION,
    })
    await journal.commitBlock(4, 4, 0, OTHER_COLLECTION)
    await until('the new endpoint to receive its event', () => events('/fresh').length === 1)
    // (With the whole share open to the failing endpoints, it waited for their next cut.)
    expect(receivers.cut).toBe(cutBefore)
    expect(receivers.open.size).toBe(2)
  }, 60_000)

  it('an endpoint sent more events than it holds receives every one, each in one attempt: its parked jobs are pulled forward', async () => {
    const { endpoint } = await createEndpoint()
    let open = 0
    let mostOpen = 0
    fallback = (res) => {
      mostOpen = Math.max(mostOpen, ++open)
      setTimeout(() => {
        open--
        res.writeHead(204).end()
      }, 100)
    }
    // 2 slots and 3 held: 25 of the 30 jobs are parked, due in 60 s unless pulled forward.
    await startDelivery({ concurrency: 10, endpointSlots: { perEndpoint: 2, holdPerEndpoint: 3 } })
    await journal.commit(journal.blockBatch(1, 1, { mints: 30 }))
    const recorded = async () =>
      (
        await db.pool.query(
          `SELECT status, attempts, count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = $1 GROUP BY 1, 2`,
          [endpoint.id],
        )
      ).rows
    await until(
      'all 30 deliveries recorded',
      async () => {
        const rows = await recorded()
        return rows.length > 0 && rows.every((r) => r.status === 'delivered')
      },
      30_000,
    )
    expect(await recorded()).toEqual([{ status: 'delivered', attempts: 1, n: 30 }])
    expect(mostOpen).toBe(2)
    // Each event once: a job parked and pulled forward is still its delivery's one attempt.
    expect(events()).toHaveLength(30)
    expect(new Set(events().map((e) => e.id)).size).toBe(30)
  }, 60_000)

  it("a revoked key's endpoints receive nothing", async () => {
    const key = (await portal(allowAll()).keys.create({ name: 'short-lived' })).key.id
    await portal(allowAll()).webhooks.create({ key_id: key, url: `http://127.0.0.1:${port}/revoked` })
    await createEndpoint()
    await startDelivery()
    await journal.commitBlock(1, 1)
    await until('the first event at both', () => events('/revoked').length === 1 && events().length === 1)
    await portal(allowAll()).keys.revoke({ id: key })
    await journal.commitBlock(2, 2)
    await until('the second event at the live key', () => events().length === 2)
    await new Promise((r) => setTimeout(r, 500))
    expect(events('/revoked').length).toBe(1)
  })

  it('prunes deliveries older than the log keeps', async () => {
    const { endpoint } = await createEndpoint()
    await db.pool.query(
      `INSERT INTO webhook_deliveries (endpoint_id, event_id, event_type, payload, enqueued, status, created_at)
       VALUES ($1, 1, 'activity.added', '{}', true, 'delivered', now() - interval '8 days'),
              ($1, 2, 'activity.added', '{}', true, 'delivered', now() - interval '6 days')`,
      [endpoint.id],
    )
    const d = await startDelivery()
    await d.dispatch()
    expect((await deliveries(endpoint.id)).map((x) => x.event_id)).toEqual(['2'])
  })

  it('disables an endpoint whose deliveries fail for the whole run; it gets nothing until enabled again', async () => {
    const { endpoint } = await createEndpoint()
    fallback = (res) => res.writeHead(503).end()
    await startDelivery({
      disableAfterMs: 400,
      retry: { attempts: 10, baseMs: 250, factor: 1, capMs: 250, jitter: 0 },
    })
    await journal.commitBlock(1, 1)
    const disabled = await until('the endpoint disabled', async () => {
      const list = await portal(allowAll()).webhooks.list({})
      const e = list.find((x) => x.id === endpoint.id)
      return e && !e.enabled ? e : null
    })
    expect(disabled.disabled_reason).toMatch(/^Every delivery failed for 400 ms/)
    expect(disabled.disabled_reason).toContain('HTTP 503')
    // Disabled: new events are not delivered, pending retries are dropped.
    const before = received.length
    fallback = (res) => res.writeHead(200).end()
    await journal.commitBlock(2, 2)
    await new Promise((r) => setTimeout(r, 1_200))
    expect(received.length).toBe(before)
    // Enabled again: delivery resumes from where it stopped.
    await portal(allowAll()).webhooks.setEnabled({ id: endpoint.id, enabled: true })
    await until('the resumed delivery', () => events().some((e) => e.data.token_id === '2'))
  })
})
