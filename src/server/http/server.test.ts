/**
 * The web server's request targets, written byte for byte: only a path (or
 * the absolute-form a server must also accept) names a resource; `GET *`
 * is the client's error, in the API envelope.
 */
import net from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import { serveApi, type TestWeb } from '@/test/serve-api'

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

async function raw(requestLine: string): Promise<{ status: number; body: string }> {
  const { port } = new URL(s.base)
  const response = await new Promise<string>((resolve, reject) => {
    let data = ''
    const socket = net.connect(Number(port), '127.0.0.1', () =>
      socket.write(`${requestLine}\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`),
    )
    socket.setEncoding('utf8')
    socket.on('data', (d) => (data += d))
    socket.once('end', () => resolve(data))
    socket.once('error', reject)
  })
  return {
    status: Number(/^HTTP\/1\.1 (\d{3})/.exec(response)?.[1] ?? 0),
    body: response.slice(response.indexOf('\r\n\r\n') + 4),
  }
}

describe('request targets', () => {
  // (Node's parser itself refuses a target that is no URL at all, and CONNECT never reaches a handler.)
  it.each(['GET *', 'OPTIONS *', 'POST *'])('%s is a 400 in the error envelope', async (line) => {
    const res = await raw(`${line} HTTP/1.1`)
    expect(res.status).toBe(400)
    expect(JSON.parse(res.body)).toEqual({
      error: { code: 'INVALID_ARGUMENT', message: 'The request target must be a path starting with /.' },
    })
  })

  it('serves the absolute-form as its path', async () => {
    const health = await raw('GET http://api.example/healthz HTTP/1.1')
    expect(health.status).toBe(200)
    expect(JSON.parse(health.body)).toEqual({ status: 'ok' })
    // /v1 routing sees the path too: an unauthenticated request, refused as such.
    const v1 = await raw('GET http://api.example/v1/collections?limit=1 HTTP/1.1')
    expect(v1.status).toBe(401)
  })
})
