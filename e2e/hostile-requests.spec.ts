/**
 * Requests anyone can send to the running service outside /v1: none writes to
 * disk, none is a 500, none writes an error-level log line.
 */
import { readdirSync } from 'node:fs'
import http from 'node:http'
import path from 'node:path'
import { expect, test } from '@playwright/test'
import { webErrors } from './helpers/service-log'

const ROOT = path.resolve(import.meta.dirname, '..')
/** Next.js's build folder, its route cache included (.next/server/route-cache). */
const NEXT_DIR = path.join(ROOT, '.next')

/** A POST with a server action's header, its path sent byte for byte as written. */
function rawPost(target: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: 'localhost',
        port: Number(process.env.E2E_PORT),
        path: target,
        method: 'POST',
        headers: { 'Next-Action': 'abc', 'Content-Type': 'text/plain' },
      },
      (res) => {
        let body = ''
        res.setEncoding('utf8')
        res.on('data', (chunk) => (body += chunk))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
      },
    )
    req.once('error', reject)
    req.end('[]')
  })
}

const filesUnder = (dir: string) => readdirSync(dir, { recursive: true }).map(String)

test('unknown docs asset names answer 404 and leave nothing on disk', async ({ request }) => {
  expect((await request.get('/docs/assets/swagger-ui.css')).status()).toBe(200)
  // The first 404 page renders once; from then on the folder must hold still.
  expect((await request.get('/docs/assets/warm-up.js')).status()).toBe(404)
  const before = filesUnder(NEXT_DIR)
  for (let i = 0; i < 100; i++) {
    expect((await request.get(`/docs/assets/fill-${i}.js`)).status()).toBe(404)
  }
  const after = filesUnder(NEXT_DIR)
  expect(after.filter((f) => f.includes('fill-'))).toEqual([])
  expect(after.length).toBe(before.length)
})

test('paths whose escapes are no UTF-8 are a 400 in the envelope', async ({ request }) => {
  for (const target of ['/docs/assets/%ZZ', '/docs/assets/%ED%A0%80', '/docs/assets/%C0%AE', '/portal/%FF']) {
    const res = await request.get(target)
    expect(res.status(), target).toBe(400)
    expect((await res.json()).error.code).toBe('INVALID_ARGUMENT')
  }
})

test('a navigation request with a malformed router state is a 400 on every kind of page, and logs no error', async ({
  request,
}) => {
  const errorsBefore = webErrors().length
  const address = `0x${'ab'.repeat(20)}`
  const pages = ['/', '/explore', `/explore/collections/${address}`, `/explore/nfts/${address}/1`, '/portal']
  // Not URL-encoded JSON; not JSON; JSON that is no router state; too large.
  const states = ['garbage', '%7B', encodeURIComponent('["x",{},null,null,true]'), 'a'.repeat(40_001)]
  for (const page of pages)
    for (const state of states) {
      const res = await request.get(page, { headers: { RSC: '1', 'Next-Router-State-Tree': state } })
      expect(res.status(), `${page} with the state ${state.slice(0, 30)}`).toBe(400)
      expect((await res.json()).error.code).toBe('INVALID_ARGUMENT')
    }
  // A real state passes: the navigation payload of the page.
  const valid = encodeURIComponent(
    JSON.stringify(['', { children: ['explore', { children: ['__PAGE__', {}] }] }]),
  )
  const ok = await request.get('/explore', { headers: { RSC: '1', 'Next-Router-State-Tree': valid } })
  expect(ok.status()).toBe(200)
  await new Promise((r) => setTimeout(r, 500))
  expect(webErrors().slice(errorsBefore)).toEqual([])
})

test('sign-in endpoints refuse what next-auth cannot serve, and log no error for it', async ({ request }) => {
  const errorsBefore = webErrors().length

  const callback = await request.get('/api/auth/callback/siwe')
  expect(callback.status()).toBe(405)
  expect((await callback.json()).error.code).toBe('METHOD_NOT_ALLOWED')

  const signout = await request.get('/api/auth/signout?callbackUrl=javascript:alert(document.domain)', {
    maxRedirects: 0,
  })
  expect(signout.status()).toBe(400)
  expect((await signout.json()).error.code).toBe('INVALID_ARGUMENT')

  const session = await request.get('/api/auth/session?callbackUrl=not-a-url')
  expect(session.status()).toBe(400)

  const report = await request.post('/api/auth/_log', {
    form: { level: 'error', code: 'WRITTEN_BY_ANYONE', message: 'hello' },
  })
  expect(report.status()).toBe(204)

  const garbage = await request.get('/api/auth/session', {
    headers: { cookie: 'next-auth.session-token=garbage' },
  })
  expect(garbage.status()).toBe(200)
  expect(await garbage.json()).toEqual({})

  // next-auth reads any body whole: the guard reads 16 KiB at most.
  const huge = await request.post('/api/auth/callback/siwe', {
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    data: `message=${'x'.repeat(1024 * 1024)}`,
  })
  expect(huge.status()).toBe(413)
  expect((await huge.json()).error.code).toBe('PAYLOAD_TOO_LARGE')

  // Lines are written asynchronously: give them a moment to land before reading.
  await new Promise((resolve) => setTimeout(resolve, 500))
  expect(webErrors().slice(errorsBefore)).toEqual([])
})

test("next-auth's endpoints are limited per client address like the portal's procedures", async ({
  request,
}) => {
  // RATE_LIMIT_PORTAL's default allows 4 at once and 10 a second from one address.
  const flood = await Promise.all(Array.from({ length: 16 }, () => request.get('/api/auth/session')))
  const refused = flood.filter((res) => res.status() === 429)
  expect(refused.length).toBeGreaterThan(0)
  expect(flood.every((res) => [200, 429].includes(res.status()))).toBe(true)
  expect((await refused[0]!.json()).error.code).toBe('RATE_LIMITED')
  expect(Number(refused[0]!.headers()['retry-after'])).toBeGreaterThan(0)
  // A refusal consumes nothing: the address is served again within its window.
  await expect
    .poll(async () => (await request.get('/api/auth/session')).status(), { timeout: 5_000 })
    .toBe(200)
  await new Promise((resolve) => setTimeout(resolve, 1_100))
})

test('pages, docs and their assets answer GET and HEAD only: any other method is a 405 in the envelope', async ({
  request,
}) => {
  const errorsBefore = webErrors().length
  const address = `0x${'ab'.repeat(20)}`
  const pages = [
    '/',
    '/explore',
    `/explore/nfts/${address}/1`,
    '/portal',
    '/portal/audit',
    '/try',
    '/docs',
    '/docs/assets/swagger-ui.css',
    '/no-such-page',
  ]
  for (const page of pages) {
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      // A server action's header too: the portal has none, so none may run.
      const res = await request.fetch(page, { method, headers: { 'Next-Action': 'abc' }, data: '[]' })
      expect(res.status(), `${method} ${page}`).toBe(405)
      expect(res.headers().allow).toBe('GET, HEAD, OPTIONS')
      expect((await res.json()).error.code).toBe('METHOD_NOT_ALLOWED')
    }
    const options = await request.fetch(page, { method: 'OPTIONS' })
    expect(options.status(), `OPTIONS ${page}`).toBe(204)
    expect(options.headers().allow).toBe('GET, HEAD, OPTIONS')
  }
  // The path as Next.js reads it: dot segments (encoded or not) and backslashes resolved, so
  // none of these reaches a page with POST (sent as written: Playwright's client would resolve
  // the dot segments itself). Next.js's development tools are not served by `npm start`.
  for (const target of [
    '/api/../explore',
    '/api/auth/%2e%2e/%2e%2e/portal',
    '/api/x/../../docs/assets/swagger-ui.css',
    '/api\\..\\docs',
    '/__nextjs/../docs',
    '/__nextjs_restart_dev',
    '/_next/mcp',
    '/api/no-such-route',
  ]) {
    const res = await rawPost(target)
    expect(res.status, `POST ${target}`).toBe(405)
    expect(JSON.parse(res.body).error.code, `POST ${target}`).toBe('METHOD_NOT_ALLOWED')
  }
  // The endpoints that are written to keep their methods.
  expect((await request.get('/api/auth/csrf')).status()).toBe(200)
  expect((await request.post('/api/auth/_log', { form: { level: 'info' } })).status()).toBe(204)
  await new Promise((resolve) => setTimeout(resolve, 500))
  expect(webErrors().slice(errorsBefore)).toEqual([])
})

test('route handlers under /api/ answer a method they do not serve with a 405 in the envelope', async ({
  request,
}) => {
  const errorsBefore = webErrors().length
  const cases: Array<[string, string, string]> = [
    ['/api/siwe/nonce', 'GET', 'POST, OPTIONS'],
    ['/api/siwe/nonce', 'PUT', 'POST, OPTIONS'],
    ['/api/portal/audit-export', 'POST', 'GET, HEAD, OPTIONS'],
    ['/api/portal/audit-export', 'DELETE', 'GET, HEAD, OPTIONS'],
    ['/api/trpc/keys.list', 'PUT', 'GET, HEAD, POST, OPTIONS'],
    ['/api/auth/session', 'PATCH', 'GET, HEAD, POST, OPTIONS'],
  ]
  for (const [path, method, allow] of cases) {
    const res = await request.fetch(path, { method })
    expect(res.status(), `${method} ${path}`).toBe(405)
    expect(res.headers().allow, `${method} ${path}`).toBe(allow)
    expect((await res.json()).error.code, `${method} ${path}`).toBe('METHOD_NOT_ALLOWED')
  }
  await new Promise((resolve) => setTimeout(resolve, 500))
  expect(webErrors().slice(errorsBefore)).toEqual([])
})
