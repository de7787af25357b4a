/**
 * The audit trail's filters (key, action, dates) and exports (CSV with
 * escaping and formula neutralization, JSON, streamed by the export's HTTP
 * handler) against a real database, with the client IP and user agent on
 * every entry; only the owner's events; a trail capped per user.
 */
import { TRPCError } from '@trpc/server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseConfig } from '@/config/env'
import { createLogger } from '@/config/logger'
import { ensureUser } from '@/server/api/portal/keys/api-keys'
import { createAuditExportHandler } from '@/server/api/portal/keys/audit-export'
import { csvCell } from '@/server/api/portal/keys/audit-file'
import { portalRouter } from '@/server/api/portal/router'
import type { PortalContext } from '@/server/api/trpc/portal'
import { CLIENT_IP_HEADER } from '@/server/http/client-ip'
import type { SessionUser } from '@/server/portal-auth/session-user'
import { closeWebServices, createWebServices, type Services } from '@/server/services/web-services'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import { asDatabase } from '@/test/serve-api'

let tdb: TestDatabase
let carol: SessionUser
let dave: SessionUser
let services: Services

function caller(user: SessionUser, ip = '198.51.100.20', ua = 'audit-test/1.0') {
  const ctx: PortalContext = {
    db: asDatabase(tdb),
    credentials: { clear() {} },
    clientIp: ip,
    userAgent: ua,
    user,
  }
  return portalRouter.createCaller(ctx).keys
}

/** GET /api/portal/audit-export as `user`, through the export's handler on the web process's services. */
async function exportAs(
  user: SessionUser,
  query: Record<string, string>,
): Promise<{ status: number; contentType: string | null; filename: string | undefined; body: string }> {
  const handler = createAuditExportHandler(services, async () => user)
  const res = await handler(
    new Request(`http://localhost/api/portal/audit-export?${new URLSearchParams(query)}`, {
      headers: { [CLIENT_IP_HEADER]: '198.51.100.30' },
    }),
  )
  return {
    status: res.status,
    contentType: res.headers.get('content-type'),
    filename: /filename="([^"]+)"/.exec(res.headers.get('content-disposition') ?? '')?.[1],
    body: await res.text(),
  }
}

/** Parses the CSV this module writes (quoted cells, CRLF lines). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = []
  let row: string[] = []
  let cell = ''
  let quoted = false
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        cell += '"'
        i++
      } else if (ch === '"') quoted = false
      else cell += ch
    } else if (ch === '"') quoted = true
    else if (ch === ',') {
      row.push(cell)
      cell = ''
    } else if (ch === '\r' && text[i + 1] === '\n') {
      row.push(cell)
      rows.push(row)
      row = []
      cell = ''
      i++
    } else cell += ch
  }
  return rows
}

beforeAll(async () => {
  tdb = await createTestDatabase()
  const db = asDatabase(tdb)
  carol = await ensureUser(db, '0x00000000000000000000000000000000000ca201')
  dave = await ensureUser(db, '0x00000000000000000000000000000000000da7e1')
  const config = parseConfig({
    NETWORK: 'devnet',
    LOG_LEVEL: 'silent',
    RATE_LIMIT_PORTAL: 'sec=1000,min=100000,concurrent=100',
  } as unknown as NodeJS.ProcessEnv)
  services = createWebServices(config, { db, credentialDb: db, logger: createLogger({ level: 'silent' }) })
})

afterAll(async () => {
  if (services) await closeWebServices(services, { closeDb: false })
  await tdb?.drop()
})

describe('audit trail filters and exports', () => {
  it('filters by key, action and date range, for the owner only', async () => {
    const c = caller(carol)
    const first = await c.create({ name: 'first' })
    const second = await c.create({ name: 'second' })
    await c.rotate({ id: first.key.id })
    await c.revoke({ id: second.key.id })
    await caller(dave).create({ name: 'daves' })

    const byKey = await c.auditEvents({ limit: 100, key_id: first.key.id })
    expect(byKey.items.map((e) => e.action)).toEqual(['key_rotated', 'key_created'])
    const byAction = await c.auditEvents({ limit: 100, action: 'key_created' })
    expect(byAction.items.map((e) => e.key_id)).toEqual([second.key.id, first.key.id])
    const both = await c.auditEvents({ limit: 100, key_id: second.key.id, action: 'key_revoked' })
    expect(both.items).toHaveLength(1)

    // Dates: [from, to). Move the first creation a day back to have something to cut.
    await tdb.pool.query(
      `UPDATE audit_events SET created_at = now() - interval '1 day' WHERE key_id = $1 AND action = 'key_created'`,
      [first.key.id],
    )
    const since = new Date(Date.now() - 3600_000).toISOString()
    const recent = await c.auditEvents({ limit: 100, from: since })
    expect(recent.items.map((e) => e.action)).toEqual(['key_revoked', 'key_rotated', 'key_created'])
    const older = await c.auditEvents({ limit: 100, to: since })
    expect(older.items.map((e) => [e.action, e.key_id])).toEqual([['key_created', first.key.id]])

    // Another user's key id selects nothing of theirs.
    const daves = await caller(dave).auditEvents({ limit: 100 })
    expect(await c.auditEvents({ limit: 100, key_id: daves.items[0]!.key_id! })).toEqual({
      items: [],
      next_cursor: null,
    })
    // Every entry carries where it came from.
    for (const e of (await c.auditEvents({ limit: 100 })).items) {
      expect(e.client_ip).toBe('198.51.100.20')
      expect(e.user_agent).toBe('audit-test/1.0')
    }
  })

  it('refuses bad filters as bad input', async () => {
    const c = caller(carol)
    for (const input of [
      { limit: 5, action: 'key_deleted' },
      { limit: 5, from: 'yesterday' },
      { limit: 5, from: '2026-01-02T00:00:00Z', to: '2026-01-01T00:00:00Z' },
      { limit: 5, key_id: '0' },
      // PostgreSQL has no year 0: such a date must be refused as input, not fail in the query.
      { limit: 5, from: '0000-01-01T00:00:00Z' },
      { limit: 5, to: '0000-06-01T00:00:00+01:00' },
    ]) {
      await expect(c.auditEvents(input as never), JSON.stringify(input)).rejects.toSatisfy(
        (e) => e instanceof TRPCError && e.code === 'BAD_REQUEST',
      )
    }
    const badQueries: Record<string, string>[] = [
      { format: 'csv', from: '0000-01-01T00:00:00Z' },
      { format: 'xml' },
    ]
    for (const query of badQueries) {
      const res = await exportAs(carol, query)
      expect(res.status, JSON.stringify(query)).toBe(400)
      expect(JSON.parse(res.body).error.code).toBe('INVALID_ARGUMENT')
    }
    expect((await exportAs(carol, { format: 'csv', from: '0000-01-01T00:00:00Z' })).body).toMatch(
      /before 1970/,
    )
  })

  it('exports the filtered events as JSON and as escaped, formula-safe CSV', async () => {
    const hostileUa = '=HYPERLINK("http://evil.example","click"), and more\r\nsecond line'
    const c = caller(carol, '2001:db8::7', hostileUa)
    const { key } = await c.create({ name: '@SUM(A1:A9)' })
    await c.update({ id: key.id, scopes: ['read:nfts'] })

    const json = await exportAs(carol, { format: 'json', key_id: key.id })
    expect(json.contentType).toBe('application/json; charset=utf-8')
    expect(json.filename).toMatch(/^audit-.*\.json$/)
    const events = JSON.parse(json.body)
    expect(events.map((e: { action: string }) => e.action)).toEqual(['key_updated', 'key_created'])
    expect(events[0]).toMatchObject({ client_ip: '2001:db8::7', user_agent: hostileUa, key_id: key.id })

    const csv = await exportAs(carol, { format: 'csv', key_id: key.id, action: 'key_created' })
    expect(csv.contentType).toBe('text/csv; charset=utf-8')
    expect(csv.body.endsWith('\r\n')).toBe(true)
    const [header, row, ...rest] = parseCsv(csv.body)
    expect(rest).toEqual([])
    expect(header).toEqual([
      'id',
      'created_at',
      'action',
      'wallet_address',
      'key_id',
      'key_prefix',
      'client_ip',
      'user_agent',
      'details',
    ])
    const cells = Object.fromEntries(header!.map((h, i) => [h, row![i]]))
    expect(cells.action).toBe('key_created')
    expect(cells.client_ip).toBe('2001:db8::7')
    // The formula is shown as text: a leading apostrophe, the rest intact (quotes, comma, line break).
    expect(cells.user_agent).toBe(`'${hostileUa}`)
    expect(JSON.parse(cells.details!)).toMatchObject({ name: '@SUM(A1:A9)' })

    // The export holds only the owner's events.
    const davesCsv = await exportAs(dave, { format: 'csv', key_id: key.id })
    expect(parseCsv(davesCsv.body)).toHaveLength(1)
  })

  it('neutralizes every formula lead character and quotes only when needed', () => {
    expect(csvCell('plain')).toBe('plain')
    expect(csvCell('=1+1')).toBe("'=1+1")
    expect(csvCell('+1')).toBe("'+1")
    expect(csvCell('-1')).toBe("'-1")
    expect(csvCell('@x')).toBe("'@x")
    expect(csvCell('\tx')).toBe("'\tx")
    expect(csvCell('a,b')).toBe('"a,b"')
    expect(csvCell('say "hi"')).toBe('"say ""hi"""')
    expect(csvCell('=a,"b"')).toBe(`"'=a,""b"""`)
  })
})
