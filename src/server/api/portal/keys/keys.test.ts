/**
 * The portal's key management procedures (portalProcedure) against a real
 * database: defaults, secrets shown once and stored hashed, ownership,
 * rotation bounds, revocation, and the audit trail.
 */
import { TRPCError } from '@trpc/server'
import { fetchRequestHandler } from '@trpc/server/adapters/fetch'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { LISTED_REVOKED_KEYS, MAX_LIVE_SECRETS_PER_KEY } from '@/db/queries/api-keys'
import { sha256Hex } from '@/db/sha256'
import { SCOPES } from '@/lib/scopes'
import { ensureUser, MAX_ACTIVE_KEYS_PER_USER } from '@/server/api/portal/keys/api-keys'
import { portalRouter } from '@/server/api/portal/router'
import type { PortalContext } from '@/server/api/trpc/portal'
import { isWellFormedApiKey } from '@/server/credentials/secrets'
import { CredentialVerifier } from '@/server/credentials/verifier'
import type { SessionUser } from '@/server/portal-auth/session-user'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import { asDatabase } from '@/test/serve-api'

let tdb: TestDatabase
let alice: SessionUser
let bob: SessionUser

function caller(user: SessionUser | null, ip = '203.0.113.7', ua = 'vitest-portal/1.0') {
  const db = asDatabase(tdb)
  const ctx: PortalContext = {
    db,
    credentials: new CredentialVerifier(db, { cacheMs: 1000, publicOrigin: 'http://localhost:3000' }),
    clientIp: ip,
    userAgent: ua,
    user,
  }
  return portalRouter.createCaller(ctx).keys
}

async function trpcCode(promise: Promise<unknown>): Promise<string> {
  try {
    await promise
  } catch (err) {
    if (err instanceof TRPCError) return err.code
    throw err
  }
  throw new Error('expected a TRPCError')
}

beforeAll(async () => {
  // Room for twenty concurrent transactions (the key cap's test).
  tdb = await createTestDatabase({ poolSize: 24 })
  const db = asDatabase(tdb)
  alice = await ensureUser(db, '0x00000000000000000000000000000000000A11CE')
  bob = await ensureUser(db, '0x0000000000000000000000000000000000000b0b')
})

afterAll(async () => {
  await tdb?.drop()
})

describe('keys router', () => {
  it('refuses callers without a signed-in user', async () => {
    expect(await trpcCode(caller(null).list())).toBe('UNAUTHORIZED')
    expect(await trpcCode(caller(null).create({ name: 'x' }))).toBe('UNAUTHORIZED')
  })

  it('creates a key with all six read scopes by default and shows its secret once', async () => {
    const created = await caller(alice).create({ name: 'backend' })
    expect(isWellFormedApiKey(created.secret)).toBe(true)
    expect(created.secret).toMatch(/^nftk_[0-9A-Za-z]{49}$/)
    expect(created.key.scopes).toEqual([...SCOPES])
    expect(created.key.allowed_origins).toEqual([])
    expect(created.key.prefix).toBe(created.secret.slice(0, 13))
    expect(created.key.status).toBe('active')
    // Only the hash is stored.
    const rows = await tdb.pool.query('SELECT * FROM api_key_secrets')
    const stored = JSON.stringify(rows.rows)
    expect(stored).toContain(sha256Hex(created.secret))
    expect(stored).not.toContain(created.secret)
    // Listing never shows a secret.
    const listed = await caller(alice).list()
    expect(JSON.stringify(listed)).not.toContain(created.secret)
    expect(listed.find((k) => k.id === created.key.id)?.name).toBe('backend')
  })

  it('takes chosen scopes and normalized origins, and refuses bad ones', async () => {
    const created = await caller(alice).create({
      name: 'browser',
      scopes: ['read:nfts', 'read:collections'],
      allowed_origins: ['HTTPS://App.Example.com', 'http://localhost:5173/'],
    })
    expect(created.key.scopes).toEqual(['read:collections', 'read:nfts'])
    expect(created.key.allowed_origins).toEqual(['https://app.example.com', 'http://localhost:5173'])
    for (const origin of [
      'https://app.example.com/path',
      'ftp://x.example',
      'not a url',
      'https://u:p@x.example',
    ]) {
      expect(await trpcCode(caller(alice).create({ name: 'bad', allowed_origins: [origin] })), origin).toBe(
        'BAD_REQUEST',
      )
    }
    expect(await trpcCode(caller(alice).create({ name: '' }))).toBe('BAD_REQUEST')
    expect(
      await trpcCode(
        caller(alice).create({ name: 'x', scopes: ['write:all' as unknown as (typeof SCOPES)[number]] }),
      ),
    ).toBe('BAD_REQUEST')
  })

  it(`holds an account to ${MAX_ACTIVE_KEYS_PER_USER} active keys, also when they are created at once`, async () => {
    const carol = await ensureUser(asDatabase(tdb), '0x000000000000000000000000000000000000ca01')
    const keys = caller(carol)
    for (let i = 0; i < MAX_ACTIVE_KEYS_PER_USER - 5; i++) await keys.create({ name: `k${i}` })
    // Twenty at once (a tRPC batch runs its calls in parallel): five may pass, the rest are refused.
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) => keys.create({ name: `race${i}` })),
    )
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(5)
    for (const r of results)
      if (r.status === 'rejected')
        expect((r.reason as Error).message).toContain(`At most ${MAX_ACTIVE_KEYS_PER_USER} active keys`)
    expect((await keys.list()).filter((k) => k.status === 'active')).toHaveLength(MAX_ACTIVE_KEYS_PER_USER)
  })

  it('lets a user see and change only their own keys', async () => {
    const { key } = await caller(alice).create({ name: 'private' })
    expect((await caller(bob).list()).map((k) => k.id)).not.toContain(key.id)
    expect(await trpcCode(caller(bob).rotate({ id: key.id }))).toBe('NOT_FOUND')
    expect(await trpcCode(caller(bob).revoke({ id: key.id }))).toBe('NOT_FOUND')
    expect((await caller(alice).list()).find((k) => k.id === key.id)?.status).toBe('active')
    const bobsEvents = await caller(bob).auditEvents({ limit: 100 })
    expect(bobsEvents.items.filter((e) => e.key_id === key.id)).toEqual([])
  })

  it('refuses ids beyond a 64-bit integer as bad input, not as a server failure', async () => {
    const c = caller(alice)
    for (const id of ['9223372036854775808', '9999999999999999999', '18446744073709551616']) {
      expect(await trpcCode(c.revoke({ id })), `revoke ${id}`).toBe('BAD_REQUEST')
      expect(await trpcCode(c.rotate({ id })), `rotate ${id}`).toBe('BAD_REQUEST')
      expect(await trpcCode(c.auditEvents({ limit: 5, cursor: id })), `cursor ${id}`).toBe('BAD_REQUEST')
    }
    // The largest id is well-formed: no such key, and the page of events before it (the newest).
    expect(await trpcCode(c.revoke({ id: '9223372036854775807' }))).toBe('NOT_FOUND')
    const fromMax = await c.auditEvents({ limit: 5, cursor: '9223372036854775807' })
    expect(fromMax.items).toEqual((await c.auditEvents({ limit: 5 })).items)
  })

  it('refuses ids that are no number with the field named, never the runtime error', async () => {
    // Through tRPC's HTTP layer, with the portal's error formatter: what the browser reads.
    const db = asDatabase(tdb)
    const ask = (procedure: string, init: RequestInit & { input: unknown }) =>
      fetchRequestHandler({
        endpoint: '/api/trpc',
        router: portalRouter,
        req: new Request(
          init.method === 'GET'
            ? `http://localhost/api/trpc/${procedure}?input=${encodeURIComponent(JSON.stringify(init.input))}`
            : `http://localhost/api/trpc/${procedure}`,
          {
            method: init.method,
            headers: { 'content-type': 'application/json' },
            body: init.method === 'GET' ? undefined : JSON.stringify(init.input),
          },
        ),
        createContext: (): PortalContext => ({
          db,
          credentials: { clear() {} },
          clientIp: '203.0.113.7',
          userAgent: 'vitest-portal/1.0',
          user: alice,
        }),
      })
    for (const id of ['abc', '1e3', '-1', ' 7', '0x10']) {
      for (const [procedure, init] of [
        ['keys.revoke', { method: 'POST', input: { id } }],
        ['keys.usage', { method: 'GET', input: { id } }],
        ['keys.auditEvents', { method: 'GET', input: { limit: 5, cursor: id } }],
        ['keys.auditEvents', { method: 'GET', input: { limit: 5, key_id: id } }],
      ] as const) {
        const res = await ask(procedure, init)
        const body = (await res.json()) as { error: { message: string; data: { code: string } } }
        expect(res.status, `${procedure} ${JSON.stringify(init.input)}`).toBe(400)
        expect(body.error.data.code).toBe('BAD_REQUEST')
        expect(body.error.message).toMatch(/^(id|cursor|key_id): must be a key id$/)
      }
    }
  })

  it('rotates with a grace period of at most 7 days and revokes', async () => {
    const { key, secret } = await caller(alice).create({ name: 'rotating' })
    expect(await trpcCode(caller(alice).rotate({ id: key.id, grace_seconds: 7 * 86400 + 1 }))).toBe(
      'BAD_REQUEST',
    )
    const rotated = await caller(alice).rotate({ id: key.id, grace_seconds: 7 * 86400 })
    expect(rotated.secret).not.toBe(secret)
    expect(rotated.key.prefix).toBe(rotated.secret.slice(0, 13))
    expect(rotated.key.active_secrets.map((s) => s.prefix)).toEqual([
      rotated.secret.slice(0, 13),
      secret.slice(0, 13),
    ])
    const graceEnd = Date.parse(rotated.key.active_secrets[1]!.expires_at!)
    expect(Math.abs(graceEnd - (Date.now() + 7 * 86400_000))).toBeLessThan(60_000)
    expect(rotated.key.rotated_at).not.toBeNull()

    // Rotating again at once ends both earlier secrets now.
    const again = await caller(alice).rotate({ id: key.id })
    expect(again.key.active_secrets.map((s) => s.prefix)).toEqual([again.secret.slice(0, 13)])

    const revoked = await caller(alice).revoke({ id: key.id })
    expect(revoked.key.status).toBe('revoked')
    expect(revoked.key.active_secrets).toEqual([])
    expect(await trpcCode(caller(alice).rotate({ id: key.id }))).toBe('CONFLICT')
  })

  it(`keeps at most ${MAX_LIVE_SECRETS_PER_KEY} live secrets per key and lists the newest ${LISTED_REVOKED_KEYS} revoked keys`, async () => {
    const carol = await ensureUser(asDatabase(tdb), '0x00000000000000000000000000000000000ca401')
    const c = caller(carol)
    const { key, secret } = await c.create({ name: 'rotated often' })
    const secrets = [secret]
    for (let i = 0; i < MAX_LIVE_SECRETS_PER_KEY + 2; i++)
      secrets.push((await c.rotate({ id: key.id, grace_seconds: 86400 })).secret)
    const { rows } = await tdb.pool.query<{ live: number }>(
      'SELECT count(*)::int AS live FROM api_key_secrets WHERE key_id = $1 AND (expires_at IS NULL OR expires_at > now())',
      [key.id],
    )
    expect(rows[0]!.live).toBe(MAX_LIVE_SECRETS_PER_KEY)
    const listed = (await c.list()).find((k) => k.id === key.id)!
    // The newest live, newest first; the two oldest ended at the rotations that passed the bound.
    expect(listed.active_secrets.map((s) => s.prefix)).toEqual(
      secrets
        .slice(-MAX_LIVE_SECRETS_PER_KEY)
        .reverse()
        .map((s) => s.slice(0, 13)),
    )

    // Created and revoked past the listing's bound: every active key, the newest revoked ones.
    const revoked: string[] = []
    for (let i = 0; i < LISTED_REVOKED_KEYS + 3; i++) {
      const made = await c.create({ name: `short-lived ${i}` })
      await c.revoke({ id: made.key.id })
      revoked.push(made.key.id)
    }
    const keys = await c.list()
    expect(keys.filter((k) => k.status === 'active').map((k) => k.id)).toEqual([key.id])
    expect(keys.filter((k) => k.status === 'revoked').map((k) => k.id)).toEqual(
      revoked.slice(-LISTED_REVOKED_KEYS).reverse(),
    )
    expect(keys.at(-1)!.id).toBe(key.id)
  })

  it('audits the expiry each previous secret really got, not the one asked for', async () => {
    const c = caller(alice)
    const { key, secret: first } = await c.create({ name: 'rotated twice' })
    const once = await c.rotate({ id: key.id, grace_seconds: 60 })
    // The first secret is already in a grace period: a longer one does not extend it.
    const twice = await c.rotate({ id: key.id, grace_seconds: 7 * 86400 })
    const { rows } = await tdb.pool.query<{ prefix: string; expires_at: Date | null }>(
      'SELECT prefix, expires_at FROM api_key_secrets WHERE key_id = $1 ORDER BY id',
      [key.id],
    )
    const applied = new Map(rows.map((r) => [r.prefix, r.expires_at?.toISOString() ?? null]))
    const [firstPrefix, secondPrefix] = [first.slice(0, 13), once.secret.slice(0, 13)]
    expect(Date.parse(applied.get(firstPrefix)!) - Date.parse(once.key.rotated_at!)).toBe(60_000)
    expect(Date.parse(applied.get(secondPrefix)!) - Date.parse(twice.key.rotated_at!)).toBe(7 * 86400_000)

    const events = (await c.auditEvents({ limit: 100 })).items.filter(
      (e) => e.key_id === key.id && e.action === 'key_rotated',
    )
    expect(events.map((e) => e.key_prefix)).toEqual([twice.secret.slice(0, 13), secondPrefix])
    expect(events[0]!.details).toEqual({
      grace_seconds: 7 * 86400,
      previous_prefixes: [firstPrefix, secondPrefix],
      previous_secrets: [
        { prefix: firstPrefix, expires_at: applied.get(firstPrefix) },
        { prefix: secondPrefix, expires_at: applied.get(secondPrefix) },
      ],
    })
    expect(events[1]!.details).toEqual({
      grace_seconds: 60,
      previous_prefixes: [firstPrefix],
      previous_secrets: [{ prefix: firstPrefix, expires_at: applied.get(firstPrefix) }],
    })
  })

  it('writes an audit event for every change, newest first, paged', async () => {
    const c = caller(bob, '198.51.100.9', 'audit-agent/2')
    const { key, secret } = await c.create({ name: 'audited' })
    const rotated = await c.rotate({ id: key.id, grace_seconds: 60 })
    await c.revoke({ id: key.id })
    const page1 = await c.auditEvents({ limit: 2 })
    expect(page1.items.map((e) => e.action)).toEqual(['key_revoked', 'key_rotated'])
    expect(page1.next_cursor).not.toBeNull()
    const page2 = await c.auditEvents({ limit: 2, cursor: page1.next_cursor! })
    expect(page2.items.map((e) => e.action)).toEqual(['key_created'])
    expect(page2.next_cursor).toBeNull()
    for (const e of [...page1.items, ...page2.items]) {
      expect(e).toMatchObject({
        wallet_address: bob.address,
        key_id: key.id,
        client_ip: '198.51.100.9',
        user_agent: 'audit-agent/2',
      })
      expect(Date.parse(e.created_at)).toBeGreaterThan(Date.now() - 60_000)
    }
    expect(page2.items[0]!.key_prefix).toBe(secret.slice(0, 13))
    expect(page1.items[1]!.key_prefix).toBe(rotated.secret.slice(0, 13))
    expect(page1.items[1]!.details).toMatchObject({
      grace_seconds: 60,
      previous_prefixes: [secret.slice(0, 13)],
    })
    // No secret in the audit trail.
    const all = JSON.stringify([...page1.items, ...page2.items])
    expect(all).not.toContain(secret)
    expect(all).not.toContain(rotated.secret)
  })
})
