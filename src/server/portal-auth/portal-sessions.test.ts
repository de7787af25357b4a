/**
 * Portal sessions through next-auth's real handlers and callbacks, against a
 * real database: sign-out ends the session for every copy of its cookie,
 * "sign out everywhere" ends every session of the user on every process at
 * once, polling the session never extends it past its absolute end, and the
 * audit trail records sign-ins, sign-outs and (rate-limited) refusals.
 */

import type { NextAuthOptions } from 'next-auth'
import { decode } from 'next-auth/jwt'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { createSiweMessage } from 'viem/siwe'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { createLogger } from '@/config/logger'
import { exportNextAuthUrl } from '@/config/next-auth-url'
import { type Database, openDatabase } from '@/db/database'
import { portalRouter } from '@/server/api/portal/router'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import { localChainClient, NextAuthTestClient } from '@/test/next-auth-client'
import { asDatabase } from '@/test/serve-api'
import { type AuthDependencies, buildAuthOptions } from './auth-options'
import { sessionUserOf } from './session-user'
import { REFUSALS_PER_MINUTE } from './sign-in-refusals'
import { issueNonce } from './siwe'

const PUBLIC_URL = 'http://portal.test'
const SECRET = 'a-test-secret-of-at-least-thirty-two-characters'
const SESSION_COOKIE = 'next-auth.session-token'
const BROWSER = { 'x-nft-client-ip': '203.0.113.20', 'user-agent': 'SessionTest/1.0' }

let tdb: TestDatabase
let db: Database
/** A second web process's view: its own pool and its own next-auth options. */
let otherDb: Database

function options(database: Database, extra: Partial<AuthDependencies> = {}): NextAuthOptions {
  return buildAuthOptions({
    config: { AUTH_SECRET: SECRET, PUBLIC_URL, CHAIN_ID: 31337, RPC_URL: undefined },
    db: database,
    logger: createLogger({ level: 'silent' }),
    requestMeta: async () => ({ clientIp: '203.0.113.21', userAgent: 'SessionTest/sign-out' }),
    chainClient: localChainClient(),
    ...extra,
  })
}

let web: NextAuthOptions
let otherWeb: NextAuthOptions

beforeAll(async () => {
  exportNextAuthUrl({ PUBLIC_URL: PUBLIC_URL })
  tdb = await createTestDatabase()
  db = asDatabase(tdb)
  otherDb = openDatabase(tdb.url, { max: 2 })
  web = options(db)
  otherWeb = options(otherDb)
})

afterAll(async () => {
  await otherDb?.close()
  await tdb?.drop()
})

type Account = ReturnType<typeof privateKeyToAccount>

function message(
  account: Account,
  nonce: string,
  overrides: Partial<Parameters<typeof createSiweMessage>[0]> = {},
) {
  return createSiweMessage({
    domain: 'portal.test',
    address: account.address,
    uri: `${PUBLIC_URL}/portal`,
    version: '1',
    chainId: 31337,
    nonce,
    issuedAt: new Date(),
    ...overrides,
  })
}

/** Signs in through next-auth's credentials callback, as the portal page does. */
async function signIn(client: NextAuthTestClient, account: Account): Promise<void> {
  const msg = message(account, (await issueNonce(db)).nonce)
  expect(await client.signIn(msg, await account.signMessage({ message: msg }))).toBeNull()
}

/** The portal's tRPC procedures with the user /api/trpc would see for this browser on a process. */
async function portalAs(client: NextAuthTestClient, process: NextAuthOptions = web) {
  return portalRouter.createCaller({
    db,
    credentials: { clear() {} },
    clientIp: '203.0.113.22',
    userAgent: 'SessionTest/portal',
    user: sessionUserOf(await client.serverSession(process)),
  })
}

/** A second browser holding a copy of this one's cookies (a stolen or copied cookie). */
function copyOf(client: NextAuthTestClient): NextAuthTestClient {
  const copy = new NextAuthTestClient(web, BROWSER)
  for (const [name, value] of client.cookies) copy.cookies.set(name, value)
  return copy
}

async function auditActions(address: string): Promise<{ action: string; details: unknown }[]> {
  const rows = await tdb.prisma.auditEvent.findMany({
    where: { walletAddress: address.toLowerCase() },
    orderBy: { id: 'asc' },
  })
  return rows.map((r) => ({ action: r.action, details: r.details }))
}

describe('sign-out', () => {
  it('ends the session: the old cookie no longer authorises a portal call', async () => {
    const account = privateKeyToAccount(generatePrivateKey())
    const browser = new NextAuthTestClient(web, BROWSER)
    await signIn(browser, account)
    const copied = copyOf(browser)
    expect(copied.cookies.get(SESSION_COOKIE)).toBeTruthy()
    // Before sign-out, the copied cookie works like the original.
    expect(await (await portalAs(copied)).keys.list()).toEqual([])
    await (await portalAs(copied)).keys.create({ name: 'before sign-out' })

    await browser.signOut()
    expect(browser.cookies.has(SESSION_COOKIE)).toBe(false)

    // The copied cookie is the very JWT the browser held, still within its 8 hours.
    expect(await copied.serverSession()).toBeNull()
    await expect((await portalAs(copied)).keys.list()).rejects.toMatchObject({ code: 'UNAUTHORIZED' })
    await expect((await portalAs(copied)).keys.create({ name: 'after sign-out' })).rejects.toMatchObject({
      code: 'UNAUTHORIZED',
    })
    // The session endpoint answers signed out and clears the cookie.
    expect(await copied.session()).toEqual({})
    expect(copied.cookies.has(SESSION_COOKIE)).toBe(false)

    const row = await tdb.prisma.portalSession.findFirstOrThrow({
      where: { user: { address: account.address.toLowerCase() } },
    })
    expect(row.revokedAt).not.toBeNull()
    expect([row.clientIp, row.userAgent]).toEqual(['203.0.113.20', 'SessionTest/1.0'])
    const events = await tdb.prisma.auditEvent.findMany({
      where: { walletAddress: account.address.toLowerCase(), action: { in: ['sign_in', 'sign_out'] } },
      orderBy: { id: 'asc' },
    })
    expect(events.map((e) => [e.action, e.clientIp, e.userAgent])).toEqual([
      ['sign_in', '203.0.113.20', 'SessionTest/1.0'],
      ['sign_out', '203.0.113.21', 'SessionTest/sign-out'],
    ])
  })

  it('a second sign-out of the same session writes nothing more', async () => {
    const account = privateKeyToAccount(generatePrivateKey())
    const browser = new NextAuthTestClient(web, BROWSER)
    await signIn(browser, account)
    const copied = copyOf(browser)
    await browser.signOut()
    await copied.signOut()
    expect((await auditActions(account.address)).map((e) => e.action)).toEqual(['sign_in', 'sign_out'])
  })
})

describe('sign out everywhere', () => {
  it('ends every session of the user, seen by another process at once', async () => {
    const account = privateKeyToAccount(generatePrivateKey())
    const laptop = new NextAuthTestClient(web, BROWSER)
    const phone = new NextAuthTestClient(web, BROWSER)
    await signIn(laptop, account)
    await signIn(phone, account)
    // Another user's session is not touched.
    const someoneElse = new NextAuthTestClient(web, BROWSER)
    await signIn(someoneElse, privateKeyToAccount(generatePrivateKey()))

    // Both processes see both sessions as live.
    for (const process of [web, otherWeb]) {
      for (const browser of [laptop, phone]) {
        expect(sessionUserOf(await browser.serverSession(process))?.address).toBe(
          account.address.toLowerCase(),
        )
      }
    }

    const result = await (await portalAs(laptop)).sessions.signOutEverywhere()
    expect(result).toEqual({ sessions_ended: 2 })
    const ended = Date.now()

    // The other process (its own pool, its own options) refuses both at its next request.
    expect(await phone.serverSession(otherWeb)).toBeNull()
    expect(await laptop.serverSession(otherWeb)).toBeNull()
    const latencyMs = Date.now() - ended
    expect(latencyMs).toBeLessThan(1000)
    await expect((await portalAs(phone, otherWeb)).keys.list()).rejects.toMatchObject({
      code: 'UNAUTHORIZED',
    })
    expect(await phone.session()).toEqual({})
    expect(await laptop.serverSession(web)).toBeNull()
    expect(sessionUserOf(await someoneElse.serverSession(otherWeb))).not.toBeNull()

    // A new sign-in afterwards starts a new, live session.
    const again = new NextAuthTestClient(web, BROWSER)
    await signIn(again, account)
    expect(sessionUserOf(await again.serverSession(otherWeb))?.address).toBe(account.address.toLowerCase())

    const events = await auditActions(account.address)
    expect(events.map((e) => e.action)).toEqual(['sign_in', 'sign_in', 'sign_out_everywhere', 'sign_in'])
    expect(events[2]!.details).toEqual({ sessions: 2 })
  })

  it('needs a signed-in user', async () => {
    const stranger = new NextAuthTestClient(web, BROWSER)
    await expect((await portalAs(stranger)).sessions.signOutEverywhere()).rejects.toMatchObject({
      code: 'UNAUTHORIZED',
    })
  })
})

describe('absolute lifetime', () => {
  it('polling the session does not extend it past its end', async () => {
    const lifetimeMs = 3000
    const shortLived = options(db, { sessionLifetimeMs: lifetimeMs })
    const account = privateKeyToAccount(generatePrivateKey())
    const browser = new NextAuthTestClient(shortLived, BROWSER)
    const msg = message(account, (await issueNonce(db)).nonce)
    const signedInAt = Date.now()
    expect(await browser.signIn(msg, await account.signMessage({ message: msg }))).toBeNull()

    const expiries = new Set<string>()
    const tokenEnds = new Set<number>()
    // Poll as a busy tab would, for most of the lifetime.
    while (Date.now() - signedInAt < lifetimeMs - 800) {
      const session = await browser.session()
      expect(session.user?.address).toBe(account.address.toLowerCase())
      expiries.add(session.expires ?? '')
      const token = await decode({ token: browser.cookies.get(SESSION_COOKIE), secret: SECRET })
      tokenEnds.add(token?.exp as number)
      await new Promise((r) => setTimeout(r, 250))
    }
    // Every answer and every re-issued token names the same end: the one fixed at sign-in.
    expect(expiries.size).toBe(1)
    expect(tokenEnds.size).toBe(1)
    const end = Date.parse([...expiries][0]!)
    expect(end).toBeGreaterThanOrEqual(signedInAt + lifetimeMs - 1000)
    expect(end).toBeLessThanOrEqual(Date.now() + 1000)
    expect([...tokenEnds][0]).toBe(Math.floor(end / 1000))

    await new Promise((r) => setTimeout(r, Math.max(0, end - Date.now()) + 100))
    expect(await browser.serverSession(shortLived)).toBeNull()
    expect(await browser.session()).toEqual({})
  })

  it('re-issues a token that ends with the session even when a second ends mid-encoding', async () => {
    const end = Math.floor(Date.now() / 1000) + 600
    const base = (end - 300) * 1000
    // The first clock read is the last millisecond of a second; every later read is in the next.
    let reads = 0
    const clock = vi.spyOn(Date, 'now').mockImplementation(() => (reads++ === 0 ? base - 1 : base + reads))
    let token: string
    try {
      token = await web.jwt!.encode!({ token: { sessionEnd: end }, secret: SECRET, maxAge: 1 })
    } finally {
      clock.mockRestore()
    }
    expect((await decode({ token, secret: SECRET }))?.exp).toBe(end)
  })
})

describe('refused sign-ins in the audit trail', () => {
  it('are recorded with their reason for a known address, at most 5 per minute', async () => {
    // Fresh options: a fresh per-process counter.
    const process = options(db)
    const account = privateKeyToAccount(generatePrivateKey())
    const browser = new NextAuthTestClient(process, BROWSER)
    await signIn(browser, account)
    const attacker = new NextAuthTestClient(process, {
      'x-nft-client-ip': '198.51.100.7',
      'user-agent': 'Evil/1',
    })

    const forged = message(account, (await issueNonce(db)).nonce)
    const otherKey = privateKeyToAccount(generatePrivateKey())
    expect(await attacker.signIn(forged, await otherKey.signMessage({ message: forged }))).toBe(
      'BAD_SIGNATURE',
    )
    const elsewhere = message(account, 'abcdef0123456789', { domain: 'evil.example' })
    expect(await attacker.signIn(elsewhere, await account.signMessage({ message: elsewhere }))).toBe(
      'WRONG_DOMAIN',
    )
    const wrongChain = message(account, 'abcdef0123456789', { chainId: 1 })
    expect(await attacker.signIn(wrongChain, await account.signMessage({ message: wrongChain }))).toBe(
      'WRONG_CHAIN',
    )
    const stale = message(account, 'abcdef0123456789', { expirationTime: new Date(Date.now() - 1000) })
    expect(await attacker.signIn(stale, await account.signMessage({ message: stale }))).toBe('EXPIRED')
    // Five so far with this one; the next ones in the minute are only logged.
    const unknownNonce = message(account, 'ffffffff00000000')
    for (let i = 0; i < 4; i++) {
      expect(await attacker.signIn(unknownNonce, await account.signMessage({ message: unknownNonce }))).toBe(
        'NONCE_INVALID',
      )
    }

    const refused = await tdb.prisma.auditEvent.findMany({
      where: { walletAddress: account.address.toLowerCase(), action: 'sign_in_refused' },
      orderBy: { id: 'asc' },
    })
    expect(refused).toHaveLength(REFUSALS_PER_MINUTE)
    expect(refused.map((e) => (e.details as { reason: string }).reason)).toEqual([
      'BAD_SIGNATURE',
      'WRONG_DOMAIN',
      'WRONG_CHAIN',
      'EXPIRED',
      'NONCE_INVALID',
    ])
    expect(refused.every((e) => e.clientIp === '198.51.100.7' && e.userAgent === 'Evil/1')).toBe(true)
    // The refusals ended nothing: the user's own session still works.
    expect(sessionUserOf(await browser.serverSession(process))?.address).toBe(account.address.toLowerCase())
  })

  it('are not recorded for an address without a user, nor for a message that names none', async () => {
    const process = options(db)
    const account = privateKeyToAccount(generatePrivateKey())
    const attacker = new NextAuthTestClient(process, BROWSER)
    const msg = message(account, 'abcdef0123456789', { chainId: 1 })
    expect(await attacker.signIn(msg, await account.signMessage({ message: msg }))).toBe('WRONG_CHAIN')
    expect(await attacker.signIn('Sign in please', '0x1234')).toBe('MALFORMED_MESSAGE')
    expect(await tdb.prisma.user.count({ where: { address: account.address.toLowerCase() } })).toBe(0)
    expect(
      await tdb.prisma.auditEvent.count({
        where: { action: 'sign_in_refused', walletAddress: account.address.toLowerCase() },
      }),
    ).toBe(0)
  })
})
