import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parseAllowHosts } from '@/net/guarded-lookup'
import { startServer, type TestServer } from '../test/http-server'
import { FetchFailure } from './outcome'
import { retryAfterMs, safeFetch } from './safe-fetch'

let publicLike: TestServer
let internal: TestServer
let allow: Set<string>

beforeAll(async () => {
  internal = await startServer({ '/secret': (_q, r) => r.end('secret') })
  publicLike = await startServer({
    '/ok': (_q, r) => r.end('hello'),
    '/to-internal': (_q, r) => r.writeHead(302, { location: `${internal.origin}/secret` }).end(),
    '/to-metadata-service': (_q, r) => r.writeHead(301, { location: 'http://169.254.169.254/latest/' }).end(),
    '/to-localhost-name': (_q, r) =>
      r.writeHead(302, { location: `http://localhost:${internal.port}/secret` }).end(),
    '/to-mapped-v6': (_q, r) =>
      r.writeHead(302, { location: `http://[::ffff:127.0.0.1]:${internal.port}/secret` }).end(),
    '/relative': (_q, r) => r.writeHead(307, { location: '/ok' }).end(),
    '/loop': (_q, r) => r.writeHead(302, { location: '/loop' }).end(),
    '/to-file': (_q, r) => r.writeHead(302, { location: 'file:///etc/passwd' }).end(),
    '/declared-big': (_q, r) => r.writeHead(200, { 'content-length': '5000' }).end('x'.repeat(5000)),
    '/streamed-big': (_q, r) => {
      r.writeHead(200)
      r.write('x'.repeat(3000))
      r.end('x'.repeat(3000))
    },
    '/hang': () => undefined,
    '/teapot': (_q, r) => r.writeHead(418).end(),
    '/busy': (_q, r) => r.writeHead(503).end(),
    '/limited': (_q, r) => r.writeHead(429, { 'retry-after': '7' }).end(),
  })
  allow = parseAllowHosts([`127.0.0.1:${publicLike.port}`])
}, 30_000)

afterAll(async () => {
  await publicLike.close()
  await internal.close()
})

const options = () => ({ maxBytes: 4096, timeoutMs: 1_000, allowHosts: allow })

async function failure(url: string): Promise<FetchFailure> {
  const err = await safeFetch(url, options()).then(
    () => null,
    (e: unknown) => e,
  )
  expect(err).toBeInstanceOf(FetchFailure)
  return err as FetchFailure
}

describe('safeFetch', () => {
  it('fetches an allow-listed host and follows relative redirects', async () => {
    expect((await safeFetch(`${publicLike.origin}/ok`, options())).bytes.toString()).toBe('hello')
    const redirected = await safeFetch(`${publicLike.origin}/relative`, options())
    expect(redirected.finalUrl).toBe(`${publicLike.origin}/ok`)
  })

  it('refuses a private address reached by redirect, re-checking every hop', async () => {
    expect((await failure(`${publicLike.origin}/to-internal`)).outcome).toBe('blocked_address')
    expect((await failure(`${publicLike.origin}/to-metadata-service`)).outcome).toBe('blocked_address')
    expect((await failure(`${publicLike.origin}/to-mapped-v6`)).outcome).toBe('blocked_address')
    expect(internal.hits).toEqual([])
  })

  it('checks the address a host name resolves to (DNS), not the name', async () => {
    const err = await failure(`${publicLike.origin}/to-localhost-name`)
    expect(err.outcome).toBe('blocked_address')
    expect(err.message).toMatch(/localhost: it resolves to a blocked address \(loopback\)/)
    expect(internal.hits).toEqual([])
  })

  it('refuses private literals without the allow-list, whatever the port', async () => {
    expect((await failure(`${internal.origin}/secret`)).outcome).toBe('blocked_address')
    expect((await failure(`http://[::1]:${publicLike.port}/ok`)).outcome).toBe('blocked_address')
    expect((await failure('http://0x7f000001/')).outcome).toBe('blocked_address')
    expect((await failure('http://2130706433/')).outcome).toBe('blocked_address')
  })

  it('stops after 5 redirects and never follows non-http schemes', async () => {
    expect((await failure(`${publicLike.origin}/loop`)).message).toMatch(/Too many redirects/)
    expect((await failure(`${publicLike.origin}/to-file`)).outcome).toBe('invalid_uri')
    expect((await failure('ftp://example.com/x')).outcome).toBe('invalid_uri')
    expect((await failure(`http://user:pw@127.0.0.1:${publicLike.port}/ok`)).outcome).toBe('invalid_uri')
  })

  it('caps the body by declared length and while streaming', async () => {
    expect((await failure(`${publicLike.origin}/declared-big`)).outcome).toBe('too_large')
    expect((await failure(`${publicLike.origin}/streamed-big`)).outcome).toBe('too_large')
  })

  it('names timeouts and HTTP errors, marking the transient ones', async () => {
    const timeout = await failure(`${publicLike.origin}/hang`)
    expect([timeout.outcome, timeout.transient]).toEqual(['timeout', true])
    const teapot = await failure(`${publicLike.origin}/teapot`)
    expect([teapot.outcome, teapot.transient]).toEqual(['http_error', false])
    const busy = await failure(`${publicLike.origin}/busy`)
    expect([busy.outcome, busy.transient]).toEqual(['http_error', true])
  })

  it('tells host faults (time-out, 429, 502-504, refused) from bad documents, with Retry-After', async () => {
    expect((await failure(`${publicLike.origin}/hang`)).hostFault).toBe(true)
    expect((await failure(`${publicLike.origin}/busy`)).hostFault).toBe(true)
    expect((await failure(`${publicLike.origin}/teapot`)).hostFault).toBe(false)
    const limited = await failure(`${publicLike.origin}/limited`)
    expect([limited.outcome, limited.transient, limited.hostFault, limited.retryAfterMs]).toEqual([
      'http_error',
      true,
      true,
      7_000,
    ])
    // Nothing listens on a closed port: refused, a host fault.
    const closed = await startServer({})
    const origin = closed.origin
    allow.add(`127.0.0.1:${closed.port}`)
    await closed.close()
    const refused = await failure(`${origin}/x`)
    expect([refused.outcome, refused.transient, refused.hostFault]).toEqual(['http_error', true, true])
  })

  it('reads Retry-After as seconds or an HTTP date', () => {
    const now = Date.parse('2026-01-01T00:00:00Z')
    expect(retryAfterMs('120', now)).toBe(120_000)
    expect(retryAfterMs('Thu, 01 Jan 2026 00:00:30 GMT', now)).toBe(30_000)
    expect(retryAfterMs('soon', now)).toBeUndefined()
    expect(retryAfterMs(undefined, now)).toBeUndefined()
  })
})
