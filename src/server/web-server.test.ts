/**
 * The web server's request targets, written byte for byte: only a path (or
 * the absolute-form a server must also accept) names a resource; `GET *`
 * is the client's error, in the API envelope.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { maxHeaderSize } from 'node:http'
import net from 'node:net'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import { serveApi, type TestWeb } from '@/test/serve-api'
import { API_ROUTE_METHODS } from './web-server'

let tdb: TestDatabase
let s: TestWeb

beforeAll(async () => {
  tdb = await createTestDatabase()
  s = await serveApi(tdb.url)
})

afterAll(async () => {
  try {
    await s?.close()
  } finally {
    await tdb?.drop()
  }
})

/** A request line with the usual headers. */
const raw = (requestLine: string) =>
  rawBytes(`${requestLine}\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`)

/** Bytes written as they are; the answer as the server sent it (status line, headers, body). */
async function rawBytes(request: string): Promise<{ status: number; headers: string; body: string }> {
  const { port } = new URL(s.base)
  const response = await new Promise<string>((resolve, reject) => {
    let data = ''
    const socket = net.connect(Number(port), '127.0.0.1', () => socket.write(request))
    socket.setEncoding('utf8')
    socket.on('data', (d) => (data += d))
    socket.once('end', () => resolve(data))
    socket.once('error', reject)
  })
  const split = response.indexOf('\r\n\r\n')
  return {
    status: Number(/^HTTP\/1\.1 (\d{3})/.exec(response)?.[1] ?? 0),
    headers: response.slice(0, split).toLowerCase(),
    body: response.slice(split + 4),
  }
}

describe('requests the HTTP parser refuses', () => {
  it('a request line and headers over maxHeaderSize: 400 in the envelope, not an empty 431', async () => {
    const res = await rawBytes(
      `GET /v1/collections?search=${'a'.repeat(maxHeaderSize + 1)} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`,
    )
    expect(res.status).toBe(400)
    expect(res.headers).toContain('content-type: application/json')
    expect(res.headers).toContain('cache-control: no-store')
    expect(JSON.parse(res.body)).toEqual({
      error: {
        code: 'INVALID_ARGUMENT',
        message: `The request line and headers are larger than ${maxHeaderSize / 1024} KiB.`,
      },
    })
  })

  it('broken HTTP syntax: 400 in the envelope', async () => {
    const res = await rawBytes('GET /v1/collections HTTP/1.1\r\nHost 127.0.0.1\r\n\r\n')
    expect(res.status).toBe(400)
    expect(JSON.parse(res.body)).toEqual({
      error: { code: 'INVALID_ARGUMENT', message: 'The request is not valid HTTP/1.1.' },
    })
  })
})

describe('request targets', () => {
  // (Node's parser itself refuses a target that is no URL at all, and CONNECT never reaches a handler.)
  it.each(['GET *', 'OPTIONS *', 'POST *'])('%s is a 400 in the error envelope', async (line) => {
    const res = await raw(`${line} HTTP/1.1`)
    expect(res.status).toBe(400)
    expect(JSON.parse(res.body)).toEqual({
      error: { code: 'INVALID_ARGUMENT', message: 'The request target must be a path starting with /.' },
    })
  })

  // Next.js answers these with a 500 (a running portal: e2e/hostile-requests.spec.ts).
  it.each(['/docs/assets/%ZZ', '/docs/assets/%ED%A0%80', '/docs/assets/%C0%AE', '/api/auth/%FF'])(
    'a path whose escapes are no UTF-8 (%s) is a 400 in the error envelope',
    async (path) => {
      const res = await raw(`GET ${path} HTTP/1.1`)
      expect(res.status).toBe(400)
      expect(JSON.parse(res.body)).toEqual({
        error: { code: 'INVALID_ARGUMENT', message: 'The request path is not valid percent-encoded UTF-8.' },
      })
    },
  )

  it('serves the absolute-form as its path', async () => {
    const health = await raw('GET http://api.example/healthz HTTP/1.1')
    expect(health.status).toBe(200)
    expect(JSON.parse(health.body)).toEqual({ status: 'ok' })
    // /v1 routing sees the path too: an unauthenticated request, refused as such.
    const v1 = await raw('GET http://api.example/v1/collections?limit=1 HTTP/1.1')
    expect(v1.status).toBe(401)
  })
})

describe('the route handlers under /api/', () => {
  it('answer the methods the web server lets through to them, and no route is left out', () => {
    const appApi = path.resolve(import.meta.dirname, '../app/api')
    const routes = readdirSync(appApi, { recursive: true })
      .map(String)
      .filter((file) => file.endsWith('route.ts'))
    const exported = routes.map((file) => {
      const source = readFileSync(path.join(appApi, file), 'utf8')
      const methods = [
        ...source.matchAll(
          /export (?:async )?(?:function |const )(GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS)\b|as (GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS)\b/g,
        ),
      ]
        .map((m) => m[1] ?? m[2])
        .sort()
      // A catch-all folder ([...x] or [x]) serves every path below its parent.
      const dir = path.dirname(file).split(path.sep)
      const dynamic = dir.findIndex((part) => part.startsWith('['))
      const route = dynamic < 0 ? `/api/${dir.join('/')}` : `/api/${dir.slice(0, dynamic).join('/')}/`
      return [route, methods] as const
    })
    const table = API_ROUTE_METHODS.map(
      ([route, methods]) => [route, methods.filter((m) => m !== 'HEAD').sort()] as const,
    )
    expect(new Map(table)).toEqual(new Map(exported))
  })
})
