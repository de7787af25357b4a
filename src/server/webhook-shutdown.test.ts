/**
 * SIGTERM to a web process while a webhook attempt is in flight to a receiver that never
 * answers (a customer's endpoint, outside the operator's control): the attempt is cut, not
 * recorded (it is made again: deliveries are at least once), and the process exits 0 — where
 * it waited for the attempt's 10 s send timeout and met src/server/main.ts's own 10 s force
 * timer (exit 1), and, under `npm start`, the orchestrator's SIGKILL (docs/operations.md,
 * "Stopping"; docs/push.md, "Webhooks").
 */
import http from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ensureUser } from '@/server/api/portal/keys/api-keys'
import { portalRouter } from '@/server/api/portal/router'
import type { PortalContext } from '@/server/api/trpc/portal'
import { CredentialVerifier } from '@/server/credentials/verifier'
import { webhookSettings } from '@/server/credentials/webhook-secrets'
import type { SessionUser } from '@/server/portal-auth/session-user'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import { freePort } from '@/test/free-port'
import { JournalWriter } from '@/test/journal-writes'
import { asDatabase } from '@/test/serve-api'
import { startWebProcess, type WebProcess } from '@/test/web-process'

const AUTH_SECRET = 'webhook-shutdown-test-secret-0123456789abcdef'

let db: TestDatabase
let receiver: http.Server
let port: number
const hanging = new Set<http.ServerResponse>()
let arrived: () => void
const firstRequest = new Promise<void>((resolve) => {
  arrived = resolve
})
let web: WebProcess | undefined

beforeAll(async () => {
  db = await createTestDatabase({ poolSize: 4 })
  port = await freePort()
  // A receiver that takes the request and never answers.
  receiver = http.createServer((req, res) => {
    hanging.add(res)
    req.resume()
    arrived()
  })
  await new Promise<void>((resolve) => receiver.listen(port, '127.0.0.1', resolve))
}, 60_000)

afterAll(async () => {
  if (web && web.child.exitCode === null && web.child.signalCode === null) web.child.kill('SIGKILL')
  for (const res of hanging) res.destroy()
  await new Promise((resolve) => receiver?.close(resolve))
  await db?.drop()
})

describe('SIGTERM during a webhook delivery', () => {
  it('cuts the attempt in flight, records nothing of it and exits 0', async () => {
    const allowHosts = `127.0.0.1:${port}`
    const settings = webhookSettings({ AUTH_SECRET, WEBHOOK_ALLOW_HOSTS: [allowHosts] })
    const d = asDatabase(db)
    const user: SessionUser = await ensureUser(d, '0x00000000000000000000000000000000000A11CE')
    const ctx: PortalContext = {
      db: d,
      credentials: new CredentialVerifier(d, { cacheMs: 1000, publicOrigin: 'http://localhost:3000' }),
      clientIp: '203.0.113.7',
      userAgent: 'vitest',
      user,
      webhooks: settings,
    }
    const portal = portalRouter.createCaller(ctx)
    const keyId = (await portal.keys.create({ name: 'hooks' })).key.id
    await portal.webhooks.create({ key_id: keyId, url: `http://${allowHosts}/hook`, min_confirmations: 0 })
    const journal = new JournalWriter(db.pool)
    await journal.reset()

    web = await startWebProcess('web', {
      DATABASE_URL: db.url,
      AUTH_SECRET,
      WEBHOOK_ALLOW_HOSTS: allowHosts,
      LOG_LEVEL: 'info',
    })
    await journal.commitBlock(1, 1)
    await Promise.race([
      firstRequest,
      new Promise((_, reject) =>
        setTimeout(() => reject(new Error(`no delivery: ${web!.logs.join('')}`)), 30_000),
      ),
    ])

    const exit = new Promise<number | null>((resolve) => web!.child.once('exit', (code) => resolve(code)))
    web.child.kill('SIGTERM')
    // 0: stopped by itself, before main.ts's force timer (exit 1) would end it.
    expect(await exit, web.logs.join('')).toBe(0)
    // The cut attempt is not one the receiver answered: nothing recorded, made again later.
    const { rows } = await db.pool.query('SELECT attempts FROM webhook_deliveries')
    expect(rows).toEqual([{ attempts: 0 }])
  }, 90_000)
})
