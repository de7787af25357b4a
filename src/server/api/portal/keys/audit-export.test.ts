/**
 * The audit export's bounded cost (docs/portal.md, "Audit filters and
 * export"): a trail keeps its newest MAX_AUDIT_EVENTS_PER_USER events, of which
 * refused sign-ins at most MAX_REFUSALS_PER_USER, trimmed among themselves; the
 * file is streamed page by page (the JSON is what one JSON.stringify of the
 * whole trail would write); the request's concurrency slot is held while the
 * file streams and comes back when the download is cancelled.
 */
import { Writable } from 'node:stream'
import { getAddress } from 'viem'
import { createSiweMessage } from 'viem/siwe'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseConfig } from '@/config/env'
import { createLogger } from '@/config/logger'
import { createPortalHandler } from '@/server/api/portal/handler'
import { ensureUser } from '@/server/api/portal/keys/api-keys'
import { portalRouter } from '@/server/api/portal/router'
import { CLIENT_IP_HEADER } from '@/server/http/client-ip'
import {
  EXPORT_PAGE_SIZE,
  MAX_AUDIT_EVENTS_PER_USER,
  MAX_REFUSALS_PER_USER,
} from '@/server/portal-auth/audit'
import type { SessionUser } from '@/server/portal-auth/session-user'
import { SignInRefusals } from '@/server/portal-auth/sign-in-refusals'
import { closeWebServices, createWebServices, type Services } from '@/server/services/web-services'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import { asDatabase, uniqueIp } from '@/test/serve-api'
import { createAuditExportHandler } from './audit-export'

let tdb: TestDatabase
let services: Services
let erin: SessionUser

beforeAll(async () => {
  tdb = await createTestDatabase()
  const db = asDatabase(tdb)
  erin = await ensureUser(db, '0x00000000000000000000000000000000000e2100')
  const config = parseConfig({
    NETWORK: 'devnet',
    LOG_LEVEL: 'silent',
    RATE_LIMIT_PORTAL: 'sec=1000,min=100000,concurrent=1',
  } as unknown as NodeJS.ProcessEnv)
  services = createWebServices(config, { db, credentialDb: db, logger: createLogger({ level: 'silent' }) })
})

afterAll(async () => {
  if (services) await closeWebServices(services, { closeDb: false })
  await tdb?.drop()
})

/** Events written straight into the table (the test's history), oldest first. */
async function fillTrail(user: SessionUser, count: number) {
  await tdb.prisma.auditEvent.createMany({
    data: Array.from({ length: count }, (_, i) => ({
      userId: user.id,
      walletAddress: user.address,
      action: 'key_updated',
      details: { n: i, origins: 'x'.repeat(100) },
    })),
  })
}

const exportRequest = (query: Record<string, string>, ip: string) =>
  new Request(`http://localhost/api/portal/audit-export?${new URLSearchParams(query)}`, {
    headers: { [CLIENT_IP_HEADER]: ip },
  })

describe('the audit export', () => {
  it('keeps the newest events of a user, and streams them all as the JSON of the whole trail', async () => {
    await fillTrail(erin, MAX_AUDIT_EVENTS_PER_USER)
    // One more event, written the ordinary way: the oldest goes.
    const ctx = {
      db: asDatabase(tdb),
      credentials: { clear() {} },
      clientIp: '192.0.2.7',
      userAgent: null,
      user: erin,
    }
    await portalRouter.createCaller(ctx).keys.create({ name: 'the last straw' })
    const kept = await tdb.prisma.auditEvent.findMany({ where: { userId: erin.id }, orderBy: { id: 'asc' } })
    expect(kept).toHaveLength(MAX_AUDIT_EVENTS_PER_USER)
    expect(kept[0]!.details).toMatchObject({ n: 1 })
    expect(kept.at(-1)!.action).toBe('key_created')

    const handler = createAuditExportHandler(services, async () => erin)
    const res = await handler(exportRequest({ format: 'json' }, uniqueIp()))
    expect(res.status).toBe(200)
    const text = await res.text()
    const events = JSON.parse(text) as { id: string }[]
    expect(events).toHaveLength(MAX_AUDIT_EVENTS_PER_USER)
    expect(events.map((e) => e.id)).toEqual(kept.map((e) => e.id.toString()).reverse())
    expect(text).toBe(`${JSON.stringify(events, null, 2)}\n`)
  })

  it('refused sign-ins, which anyone can cause, replace older refusals, never the user’s own events', async () => {
    const frank = await ensureUser(asDatabase(tdb), '0x00000000000000000000000000000000000f4a2c')
    const ctx = { db: asDatabase(tdb), credentials: { clear() {} }, clientIp: '192.0.2.8', userAgent: null }
    await fillTrail(frank, MAX_AUDIT_EVENTS_PER_USER - 1)
    await portalRouter.createCaller({ ...ctx, user: frank }).keys.create({ name: 'prod' })
    await tdb.prisma.auditEvent.createMany({
      data: Array.from({ length: MAX_REFUSALS_PER_USER }, (_, i) => ({
        userId: frank.id,
        walletAddress: frank.address,
        action: 'sign_in_refused',
        details: { reason: 'BAD_SIGNATURE', n: i },
      })),
    })
    // One more, as anyone can post it: a well-formed message naming frank, a junk signature.
    const message = createSiweMessage({
      domain: 'portal.test',
      address: getAddress(frank.address),
      uri: 'http://portal.test/portal',
      version: '1',
      chainId: 1,
      nonce: 'deadbeefdeadbeef',
      issuedAt: new Date(),
    })
    const meta = { clientIp: '198.51.100.66', userAgent: 'anyone' }
    expect(await new SignInRefusals(asDatabase(tdb)).record(message, 'BAD_SIGNATURE', meta)).toBe('recorded')
    const trail = async () => {
      const rows = await tdb.prisma.auditEvent.findMany({
        where: { userId: frank.id },
        orderBy: { id: 'asc' },
      })
      const own = rows.filter((e) => e.action !== 'sign_in_refused')
      const refusals = rows.filter((e) => e.action === 'sign_in_refused')
      return { own, refusals }
    }
    let { own, refusals } = await trail()
    // The refusal replaced the oldest refusal: the user's own 10,000 are whole, key_created with them.
    expect([own.length, refusals.length]).toEqual([MAX_AUDIT_EVENTS_PER_USER, MAX_REFUSALS_PER_USER])
    expect(own.at(-1)!.action).toBe('key_created')
    expect(refusals[0]!.details).toMatchObject({ n: 1 })
    // The user's next own event trims the oldest own event, no refusal.
    await portalRouter.createCaller({ ...ctx, user: frank }).keys.create({ name: 'staging' })
    ;({ own, refusals } = await trail())
    expect([own.length, refusals.length]).toEqual([MAX_AUDIT_EVENTS_PER_USER, MAX_REFUSALS_PER_USER])
    expect(own[0]!.details).toMatchObject({ n: 1 })
  })

  it('reads one page at a time and holds its slot until the download ends or is cancelled', async () => {
    const handler = createAuditExportHandler(services, async () => erin)
    const portal = createPortalHandler(services, async () => erin)
    const ip = uniqueIp()
    const res = await handler(exportRequest({ format: 'csv' }, ip))
    expect(res.status).toBe(200)
    const reader = res.body!.getReader()
    const first = await reader.read()
    // One page (and the header line) so far, not the trail.
    expect(new TextDecoder().decode(first.value).split('\r\n').length - 2).toBe(EXPORT_PAGE_SIZE)
    // The user's one concurrent request is the download: another is refused meanwhile.
    expect(
      (
        await portal(
          new Request('http://localhost/api/trpc/keys.list', { headers: { [CLIENT_IP_HEADER]: ip } }),
        )
      ).status,
    ).toBe(429)
    await reader.cancel()
    expect(
      (
        await portal(
          new Request('http://localhost/api/trpc/keys.list', { headers: { [CLIENT_IP_HEADER]: ip } }),
        )
      ).status,
    ).toBe(200)
  })
})

describe('an export whose later page fails', () => {
  it('ends the download in error and logs why, as a request that fails before answering does', async () => {
    const lines: { level: number; msg: string; err?: { message?: string } }[] = []
    const output = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line))
        done()
      },
    })
    const config = parseConfig({ NETWORK: 'devnet', LOG_LEVEL: 'info' } as unknown as NodeJS.ProcessEnv)
    const db = asDatabase(tdb)
    const logged = createWebServices(config, {
      db,
      credentialDb: db,
      logger: createLogger({ level: 'info', output }),
    })
    const frank = await ensureUser(db, '0x00000000000000000000000000000000000f2100')
    await fillTrail(frank, EXPORT_PAGE_SIZE + 1)
    try {
      const res = await createAuditExportHandler(
        logged,
        async () => frank,
      )(exportRequest({ format: 'csv' }, uniqueIp()))
      expect(res.status).toBe(200)
      const reader = res.body!.getReader()
      await reader.read()
      // The second page's read fails in the database.
      await tdb.pool.query('ALTER TABLE audit_events RENAME TO audit_events_away')
      try {
        await expect(reader.read()).rejects.toThrow()
      } finally {
        await tdb.pool.query('ALTER TABLE audit_events_away RENAME TO audit_events')
      }
      expect(lines.filter((l) => l.level >= 50).map((l) => l.msg)).toEqual(['audit export failed'])
    } finally {
      await closeWebServices(logged, { closeDb: false })
    }
  })
})
