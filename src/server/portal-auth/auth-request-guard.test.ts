/**
 * Requests to /api/auth that anyone can send and next-auth would answer with a
 * 500 or an error-level log line: answered in the envelope before next-auth,
 * and a session cookie that is no token of ours logged as routine.
 * (Through the running service: e2e/hostile-requests.spec.ts.)
 */

import { Writable } from 'node:stream'
import { NextRequest } from 'next/server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createLogger } from '@/config/logger'
import { exportNextAuthUrl } from '@/config/next-auth-url'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import { ENDLESS_CHUNK_BYTES, endlessBody } from '@/test/endless-body'
import { localChainClient, NextAuthTestClient } from '@/test/next-auth-client'
import { asDatabase } from '@/test/serve-api'
import { buildAuthOptions } from './auth-options'
import { AUTH_MAX_BODY_BYTES, guardAuthBody, guardAuthRequest } from './auth-request-guard'

const BASE = 'http://portal.test'

function request(path: string, init: { method?: string; cookie?: string } = {}) {
  return new NextRequest(`${BASE}/api/auth/${path}`, {
    method: init.method ?? 'GET',
    headers: init.cookie ? { cookie: init.cookie } : {},
  })
}

const action = (path: string) => path.split(/[/?]/)[0]

async function envelope(res: Response) {
  expect(res.headers.get('content-type')).toBe('application/json')
  return ((await res.json()) as { error: { code: string; message: string } }).error
}

describe('guardAuthRequest', () => {
  it('accepts and drops a browser log report, at any level', () => {
    const res = guardAuthRequest(request('_log', { method: 'POST' }), '_log')
    expect(res?.status).toBe(204)
  })

  it('answers a sign-in callback by GET with 405', async () => {
    const res = guardAuthRequest(request('callback/siwe'), 'callback')!
    expect(res.status).toBe(405)
    expect(res.headers.get('allow')).toBe('POST')
    expect((await envelope(res)).code).toBe('METHOD_NOT_ALLOWED')
  })

  it.each([
    'signout?callbackUrl=javascript:alert(1)',
    'signin?callbackUrl=portal',
    'session?callbackUrl=%20',
    'csrf?callbackUrl=/portal&callbackUrl=data:text/html,x',
  ])('refuses a callbackUrl next-auth cannot read: %s', async (path) => {
    const res = guardAuthRequest(request(path), action(path))!
    expect(res.status).toBe(400)
    expect(await envelope(res)).toEqual({
      code: 'INVALID_ARGUMENT',
      message: 'callbackUrl: must be a path or an http(s) URL of this site.',
    })
  })

  it.each(['next-auth.callback-url', '__Secure-next-auth.callback-url'])(
    'refuses and clears a %s cookie that is no URL',
    async (name) => {
      const res = guardAuthRequest(
        request('session', { cookie: `${name}=javascript%3Aalert(1)` }),
        'session',
      )!
      expect(res.status).toBe(400)
      expect((await envelope(res)).code).toBe('INVALID_ARGUMENT')
      expect(res.headers.get('set-cookie')).toMatch(new RegExp(`^${name}=; Path=/; Max-Age=0`))
    },
  )

  it.each([
    ['session', undefined],
    ['csrf', undefined],
    ['signin?callbackUrl=/portal/audit', undefined],
    ['signout?callbackUrl=https://elsewhere.example/', undefined],
    ['session', 'next-auth.callback-url=http%3A%2F%2Fportal.test%2Fportal'],
  ])('hands everything else to next-auth: %s', (path, cookie) => {
    expect(guardAuthRequest(request(path, { cookie }), action(path))).toBeUndefined()
    expect(guardAuthRequest(request('callback/siwe', { method: 'POST' }), 'callback')).toBeUndefined()
  })
})

describe('guardAuthBody', () => {
  const post = (body: BodyInit, headers: Record<string, string>) =>
    // duplex: a stream body (Node's fetch needs it; Next.js's RequestInit type omits it).
    new NextRequest(`${BASE}/api/auth/callback/siwe`, {
      method: 'POST',
      headers,
      body,
      duplex: 'half',
    } as ConstructorParameters<typeof NextRequest>[1])

  it(`refuses a body over ${AUTH_MAX_BODY_BYTES} bytes with 413, reading no more than that`, async () => {
    const declared = await guardAuthBody(
      post('x'.repeat(AUTH_MAX_BODY_BYTES + 1), { 'content-type': 'application/x-www-form-urlencoded' }),
    )
    expect(declared).toBeInstanceOf(Response)
    expect((declared as Response).status).toBe(413)
    expect((await envelope(declared as Response)).code).toBe('PAYLOAD_TOO_LARGE')

    // Chunked, with no Content-Length: the read stops past the cap.
    const { stream, pulled } = endlessBody(0x61)
    const chunked = await guardAuthBody(post(stream, { 'content-type': 'application/json' }))
    expect((chunked as Response).status).toBe(413)
    expect(pulled()).toBeLessThan(AUTH_MAX_BODY_BYTES + 4 * ENDLESS_CHUNK_BYTES)
  })

  it('hands a sign-in within the cap to next-auth with its body and headers unchanged', async () => {
    const form = 'message=hello&signature=0x00&csrfToken=t&json=true'
    const passed = await guardAuthBody(post(form, { 'content-type': 'application/x-www-form-urlencoded' }))
    expect(passed).toBeInstanceOf(NextRequest)
    const req = passed as NextRequest
    expect(req.method).toBe('POST')
    expect(req.nextUrl.pathname).toBe('/api/auth/callback/siwe')
    expect(req.headers.get('content-type')).toBe('application/x-www-form-urlencoded')
    expect(await req.text()).toBe(form)
    const get = request('session')
    expect(await guardAuthBody(get)).toBe(get)
  })
})

describe('a session cookie that is no token of ours', () => {
  let tdb: TestDatabase

  beforeAll(async () => {
    exportNextAuthUrl({ PUBLIC_URL: BASE })
    tdb = await createTestDatabase()
  })

  afterAll(async () => {
    await tdb?.drop()
  })

  it('reads as signed out and logs at debug level, not as an error', async () => {
    const lines: { level: number; msg: string; reason?: string }[] = []
    const output = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line))
        done()
      },
    })
    const options = buildAuthOptions({
      config: {
        AUTH_SECRET: 'a-test-secret-of-at-least-thirty-two-characters',
        PUBLIC_URL: BASE,
        CHAIN_ID: 31337,
        RPC_URL: undefined,
      },
      db: asDatabase(tdb),
      logger: createLogger({ level: 'debug', output }),
      requestMeta: async () => ({ clientIp: '203.0.113.30', userAgent: 'guard-test' }),
      chainClient: localChainClient(),
    })
    for (const token of ['garbage', 'a.b.c.d.e', 'eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2R0NNIn0..x.y.z']) {
      const browser = new NextAuthTestClient(options)
      browser.cookies.set('next-auth.session-token', token)
      expect(await browser.session()).toEqual({})
    }
    expect(lines.filter((l) => l.level >= 50)).toEqual([])
    expect(lines.filter((l) => l.msg === 'portal session over').map((l) => l.reason)).toHaveLength(3)
  })
})
