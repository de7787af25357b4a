/**
 * The portal's webhook procedures against a real database: the secret shown
 * once and stored sealed, listing, disabling, rotation, deletion, the
 * delivery log and redelivery, ownership (another user's endpoint is
 * NOT_FOUND), refusals (signed out, bad input, private destinations, the
 * per-key limit) and the audit trail.
 */
import http from 'node:http'
import { TRPCError } from '@trpc/server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { LISTED_ENDPOINTS, listEndpointsOfUser } from '@/db/queries/webhooks'
import { parseAllowHosts } from '@/net/guarded-lookup'
import { ensureUser } from '@/server/api/portal/keys/api-keys'
import { portalRouter } from '@/server/api/portal/router'
import type { PortalContext } from '@/server/api/trpc/portal'
import { CredentialVerifier } from '@/server/credentials/verifier'
import { deriveSealKey, openSecret, type WebhookSettings } from '@/server/credentials/webhook-secrets'
import type { SessionUser } from '@/server/portal-auth/session-user'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import { freePort } from '@/test/free-port'
import { asDatabase } from '@/test/serve-api'
import { MAX_ENDPOINTS_PER_KEY } from './webhooks'

let tdb: TestDatabase
let alice: SessionUser
let bob: SessionUser
let aliceKey: string
let port: number
let server: http.Server

const sealKey = deriveSealKey('a-test-secret-of-at-least-32-characters!')

function caller(user: SessionUser | null, allow = true) {
  const db = asDatabase(tdb)
  const webhooks: WebhookSettings = {
    sealKey,
    allowHosts: allow ? parseAllowHosts([`127.0.0.1:${port}`]) : new Set(),
  }
  const ctx: PortalContext = {
    db,
    credentials: new CredentialVerifier(db, { cacheMs: 1000, publicOrigin: 'http://localhost:3000' }),
    clientIp: '203.0.113.7',
    userAgent: 'vitest',
    user,
    webhooks,
  }
  return portalRouter.createCaller(ctx)
}

async function trpcError(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await promise
  } catch (err) {
    if (err instanceof TRPCError) return { code: err.code, message: err.message }
    throw err
  }
  throw new Error('expected a TRPCError')
}

const url = (path = '/hook') => `http://127.0.0.1:${port}${path}`

beforeAll(async () => {
  tdb = await createTestDatabase()
  const db = asDatabase(tdb)
  alice = await ensureUser(db, '0x00000000000000000000000000000000000A11CE')
  bob = await ensureUser(db, '0x0000000000000000000000000000000000000b0b')
  port = await freePort()
  server = http.createServer((_req, res) => res.writeHead(204).end())
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
  aliceKey = (await caller(alice).keys.create({ name: 'hooks' })).key.id
}, 60_000)

afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve))
  await tdb?.drop()
})

describe('webhooks router', () => {
  it('refuses callers without a signed-in user (401)', async () => {
    expect((await trpcError(caller(null).webhooks.list({}))).code).toBe('UNAUTHORIZED')
    expect((await trpcError(caller(null).webhooks.create({ key_id: aliceKey, url: url() }))).code).toBe(
      'UNAUTHORIZED',
    )
  })

  it('creates an endpoint and shows its secret once; it is stored sealed, never in the clear', async () => {
    const created = await caller(alice).webhooks.create({
      key_id: aliceKey,
      url: url(),
      collection: '0x00000000000000000000000000000000000000F1',
      event_type: 'mint',
      min_confirmations: 3,
      standard: 'all',
    })
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    expect(created.endpoint).toMatchObject({
      key_id: aliceKey,
      url: url(),
      collection: '0x00000000000000000000000000000000000000f1',
      event_type: 'mint',
      min_confirmations: 3,
      standard: 'all',
      enabled: true,
      secret_prefix: created.secret.slice(0, 12),
    })
    const { rows } = await tdb.pool.query('SELECT * FROM webhook_endpoints WHERE id = $1', [
      created.endpoint.id,
    ])
    expect(JSON.stringify(rows)).not.toContain(created.secret.slice(6))
    expect(openSecret(sealKey, BigInt(created.endpoint.id), rows[0].secret_ciphertext)).toBe(created.secret)
    // Bound to its row: another endpoint id does not open it.
    expect(() => openSecret(sealKey, BigInt(created.endpoint.id) + 1n, rows[0].secret_ciphertext)).toThrow()
    const listed = await caller(alice).webhooks.list({ key_id: aliceKey })
    expect(listed.map((e) => e.id)).toContain(created.endpoint.id)
    expect(JSON.stringify(listed)).not.toContain(created.secret)
    const audit = await caller(alice).keys.auditEvents({ action: 'webhook_created' })
    expect(audit.items[0]?.details).toMatchObject({
      endpoint_id: created.endpoint.id,
      url: url(),
      standard: 'all',
    })
  })

  it('lists every active key’s endpoints first when the listing is bounded, in id order', async () => {
    const dave = await ensureUser(asDatabase(tdb), '0x00000000000000000000000000000000000da4e0')
    const keys = caller(dave).keys
    const [gone, kept] = [
      (await keys.create({ name: 'gone' })).key.id,
      (await keys.create({ name: 'kept' })).key.id,
    ]
    const made: Record<string, string[]> = { gone: [], kept: [] }
    for (const [name, key] of [
      ['kept', kept],
      ['gone', gone],
    ] as const)
      for (let i = 0; i < 3; i++)
        made[name]!.push(
          (await caller(dave).webhooks.create({ key_id: key, url: url(`/${name}/${i}`) })).endpoint.id,
        )
    await keys.revoke({ id: gone })
    const ids = async (limit: number) =>
      (await listEndpointsOfUser(asDatabase(tdb), BigInt(dave.id), undefined, limit)).map((e) => e.id)
    expect(await ids(LISTED_ENDPOINTS)).toEqual([...made.kept!, ...made.gone!])
    // Bounded: the active key's endpoints, then the revoked key's newest.
    expect(await ids(4)).toEqual([...made.kept!, made.gone!.at(-1)])
    expect((await caller(dave).webhooks.list({})).map((e) => e.id)).toEqual([...made.kept!, ...made.gone!])
  })

  it('refuses bad input with 400: not https, a private address, bad filters', async () => {
    const bad = async (input: Record<string, unknown>, allow = true) =>
      trpcError(caller(alice, allow).webhooks.create({ key_id: aliceKey, url: url(), ...input } as never))
    // Without the allow-list: loopback and private addresses, and plain http.
    const loopback = await bad({}, false)
    expect(loopback.code).toBe('BAD_REQUEST')
    expect(loopback.message).toMatch(/https URL/)
    const privateHttps = await bad({ url: 'https://10.1.2.3/hook' }, false)
    expect(privateHttps).toMatchObject({ code: 'BAD_REQUEST' })
    expect(privateHttps.message).toMatch(/Refused 10\.1\.2\.3 \(private\)/)
    expect((await bad({ url: 'https://[::1]:8443/' }, false)).message).toMatch(/loopback/)
    expect((await bad({ url: 'https://169.254.169.254/' }, false)).message).toMatch(/metadata/)
    // A name's refusal says why, not what it resolves to (the service's resolver may know internal names).
    const byName = (await bad({ url: 'https://localhost/hook' }, false)).message
    expect(byName).toMatch(/Refused localhost: it resolves to a blocked address \(loopback\)/)
    expect(byName).not.toMatch(/127\.0\.0\.1|::1/)
    expect((await bad({ url: 'https://user:pw@example.com/' })).message).toMatch(/user name or password/)
    expect((await bad({ url: 'ftp://example.com/' })).code).toBe('BAD_REQUEST')
    expect((await bad({ url: 'not a url' })).code).toBe('BAD_REQUEST')
    expect((await bad({ min_confirmations: 65 })).code).toBe('BAD_REQUEST')
    expect((await bad({ event_type: 'sale' })).code).toBe('BAD_REQUEST')
    expect((await bad({ standard: 'ERC20' })).code).toBe('BAD_REQUEST')
    expect((await bad({ collection: '0x123' })).code).toBe('BAD_REQUEST')
    expect((await bad({ key_id: 'abc' })).code).toBe('BAD_REQUEST')
    expect((await bad({ key_id: '99999999999999999999' })).code).toBe('BAD_REQUEST')
  })

  it("another user's endpoint or key is NOT_FOUND", async () => {
    const { endpoint } = await caller(alice).webhooks.create({ key_id: aliceKey, url: url('/mine') })
    expect((await trpcError(caller(bob).webhooks.create({ key_id: aliceKey, url: url() }))).code).toBe(
      'NOT_FOUND',
    )
    expect((await trpcError(caller(bob).webhooks.deliveries({ id: endpoint.id }))).code).toBe('NOT_FOUND')
    expect((await trpcError(caller(bob).webhooks.setEnabled({ id: endpoint.id, enabled: false }))).code).toBe(
      'NOT_FOUND',
    )
    expect((await trpcError(caller(bob).webhooks.delete({ id: endpoint.id }))).code).toBe('NOT_FOUND')
    expect((await trpcError(caller(bob).webhooks.rotateSecret({ id: endpoint.id }))).code).toBe('NOT_FOUND')
    expect(
      (await trpcError(caller(bob).webhooks.redeliver({ id: endpoint.id, delivery_id: '1' }))).code,
    ).toBe('NOT_FOUND')
    expect(await caller(bob).webhooks.list({})).toEqual([])
  })

  it('disables, enables, rotates the secret, lists deliveries, redelivers and deletes', async () => {
    const { endpoint, secret } = await caller(alice).webhooks.create({ key_id: aliceKey, url: url('/life') })
    const off = await caller(alice).webhooks.setEnabled({ id: endpoint.id, enabled: false })
    expect(off).toMatchObject({ enabled: false, disabled_reason: 'Disabled in the portal.' })
    const on = await caller(alice).webhooks.setEnabled({ id: endpoint.id, enabled: true })
    expect(on).toMatchObject({ enabled: true, disabled_reason: null })
    const rotated = await caller(alice).webhooks.rotateSecret({ id: endpoint.id })
    expect(rotated.secret).not.toBe(secret)
    expect(rotated.endpoint.secret_prefix).toBe(rotated.secret.slice(0, 12))
    // A delivery in the log (as the dispatcher writes it), then a redelivery of it.
    const { rows } = await tdb.pool.query<{ id: string }>(
      `INSERT INTO webhook_deliveries (endpoint_id, event_id, event_type, payload, enqueued, status, attempts, last_status_code)
       VALUES ($1, 42, 'activity.added', '{"id":"42"}', true, 'delivered', 1, 200) RETURNING id::text AS id`,
      [endpoint.id],
    )
    const log = await caller(alice).webhooks.deliveries({ id: endpoint.id })
    expect(log).toEqual([
      expect.objectContaining({
        id: rows[0]!.id,
        event_id: '42',
        status: 'delivered',
        attempts: 1,
        last_status_code: 200,
      }),
    ])
    const again = await caller(alice).webhooks.redeliver({ id: endpoint.id, delivery_id: rows[0]!.id })
    expect(again).toMatchObject({ event_id: '42', status: 'pending', attempts: 0 })
    const queued = await tdb.pool.query('SELECT payload, enqueued FROM webhook_deliveries WHERE id = $1', [
      again.id,
    ])
    expect(queued.rows[0]).toEqual({ payload: '{"id":"42"}', enqueued: false })
    expect((await caller(alice).webhooks.deliveries({ id: endpoint.id })).map((d) => d.id)).toEqual([
      again.id,
      rows[0]!.id,
    ])
    expect(await caller(alice).webhooks.delete({ id: endpoint.id })).toEqual({
      id: endpoint.id,
      deleted: true,
    })
    expect((await trpcError(caller(alice).webhooks.deliveries({ id: endpoint.id }))).code).toBe('NOT_FOUND')
    const actions = (await caller(alice).keys.auditEvents({ limit: 100 })).items.map((e) => e.action)
    for (const action of [
      'webhook_disabled',
      'webhook_enabled',
      'webhook_secret_rotated',
      'webhook_redelivered',
      'webhook_deleted',
    ])
      expect(actions).toContain(action)
  })

  it(`allows at most ${MAX_ENDPOINTS_PER_KEY} endpoints per key (CONFLICT)`, async () => {
    const key = (await caller(alice).keys.create({ name: 'many' })).key.id
    for (let i = 0; i < MAX_ENDPOINTS_PER_KEY; i++)
      await caller(alice).webhooks.create({ key_id: key, url: url(`/n${i}`) })
    const refused = await trpcError(caller(alice).webhooks.create({ key_id: key, url: url('/one-more') }))
    expect(refused.code).toBe('CONFLICT')
    expect((await caller(alice).webhooks.list({ key_id: key })).length).toBe(MAX_ENDPOINTS_PER_KEY)
  })
})
