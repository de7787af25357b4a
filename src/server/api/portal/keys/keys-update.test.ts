/**
 * keys.update over a real database and REST server: scopes and origins
 * change after creation (validated as at creation, owner only), the change
 * is audited with before and after, and a request that needs a removed scope
 * gets 403 within the credential cache's bound — from another process too.
 */
import { TRPCError } from '@trpc/server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ensureUser } from '@/server/api/portal/keys/api-keys'
import { portalRouter } from '@/server/api/portal/router'
import type { PortalContext } from '@/server/api/trpc/portal'
import type { SessionUser } from '@/server/portal-auth/session-user'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import { asDatabase, get, serveApi, type TestWeb, uniqueIp } from '@/test/serve-api'

const CACHE_MS = 500
let tdb: TestDatabase
let s: TestWeb
let erin: SessionUser
let frank: SessionUser

/** A portal process of its own: its cache clearing does not reach the REST server's. */
function otherProcess(user: SessionUser) {
  const ctx: PortalContext = {
    db: asDatabase(tdb),
    credentials: { clear() {} },
    clientIp: '192.0.2.44',
    userAgent: 'update-test/1',
    user,
  }
  return portalRouter.createCaller(ctx).keys
}

const code = (e: unknown) => (e instanceof TRPCError ? e.code : String(e))

beforeAll(async () => {
  tdb = await createTestDatabase()
  erin = await ensureUser(asDatabase(tdb), '0x00000000000000000000000000000000000e7117')
  frank = await ensureUser(asDatabase(tdb), '0x00000000000000000000000000000000000f7a4c')
  s = await serveApi(tdb.url, { TRUST_PROXY: '1', CREDENTIAL_CACHE_MS: String(CACHE_MS) })
})

afterAll(async () => {
  await s?.close()
  await tdb?.drop()
})

describe('keys.update', () => {
  it('removes a scope: requests needing it get 403 within the cache bound, and the change is audited', async () => {
    const keys = otherProcess(erin)
    const { key, secret } = await keys.create({ name: 'editable' })
    const status = () => get(s.base, '/v1/indexer/status', { credential: secret, ip: uniqueIp() })
    expect((await status()).status).toBe(200)

    const updated = await keys.update({
      id: key.id,
      scopes: ['read:nfts', 'read:collections'],
      allowed_origins: ['HTTPS://App.Example.com'],
    })
    expect(updated.key.scopes).toEqual(['read:collections', 'read:nfts'])
    expect(updated.key.allowed_origins).toEqual(['https://app.example.com'])

    await new Promise((r) => setTimeout(r, CACHE_MS + 50))
    const refused = await status()
    expect(refused.status).toBe(403)
    expect((await refused.json()).error.message).toContain("'read:status'")
    const stillOk = await get(s.base, '/v1/collections', { credential: secret, ip: uniqueIp() })
    expect(stillOk.status).toBe(200)

    const [event] = (await keys.auditEvents({ limit: 1, key_id: key.id })).items
    expect(event).toMatchObject({
      action: 'key_updated',
      key_prefix: key.prefix,
      client_ip: '192.0.2.44',
      user_agent: 'update-test/1',
      details: {
        before: { scopes: key.scopes, allowed_origins: [] },
        after: { scopes: ['read:collections', 'read:nfts'], allowed_origins: ['https://app.example.com'] },
      },
    })
  })

  it('takes effect at once in the process that made it (its cache is cleared)', async () => {
    const ctx: PortalContext = {
      db: s.services.db,
      credentials: s.services.access.verifier,
      clientIp: '192.0.2.45',
      userAgent: 'same-process',
      user: erin,
    }
    const keys = portalRouter.createCaller(ctx).keys
    const { key, secret } = await keys.create({ name: 'same process' })
    const status = () => get(s.base, '/v1/indexer/status', { credential: secret, ip: uniqueIp() })
    expect((await status()).status).toBe(200)
    await keys.update({ id: key.id, scopes: ['read:owners'] })
    expect((await status()).status).toBe(403)
  })

  it('validates like creation, refuses revoked and foreign keys', async () => {
    const keys = otherProcess(erin)
    const { key } = await keys.create({ name: 'checked' })
    for (const input of [
      { id: key.id },
      { id: key.id, scopes: [] },
      { id: key.id, scopes: ['write:all'] },
      { id: key.id, allowed_origins: ['https://x.example/path'] },
      { id: key.id, allowed_origins: ['not a url'] },
    ]) {
      expect(await keys.update(input as never).catch(code), JSON.stringify(input)).toBe('BAD_REQUEST')
    }
    expect(
      await otherProcess(frank)
        .update({ id: key.id, scopes: ['read:nfts'] })
        .catch(code),
    ).toBe('NOT_FOUND')
    expect((await keys.list()).find((k) => k.id === key.id)?.scopes).toHaveLength(6)
    await keys.revoke({ id: key.id })
    expect(await keys.update({ id: key.id, scopes: ['read:nfts'] }).catch(code)).toBe('CONFLICT')
  })
})
