/**
 * RPC_URL with a user name and password (HTTP basic auth, the usual way to protect a
 * self-hosted node or a provider's proxy; src/config/env.ts accepts it, percent-encoded).
 *
 * fetch refuses a URL that includes credentials ("Request cannot be constructed from a URL
 * that includes credentials"): the indexer used to retry eth_chainId for ever, and log the
 * whole URL, password included, on every retry. The wire (rpc/transport.ts, rpc/credentials.ts)
 * now sends the userinfo as `Authorization: Basic base64(user:password)` (percent-decoded) to
 * the URL without it, and any URL quoted by an error of the wire has its userinfo redacted.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import { spawnIndexer } from '../test/child'
import { redactCredentials, splitCredentials, withoutCredentials } from './credentials'
import { HttpJsonRpc, RpcRequestError } from './transport'

const PASSWORD = 'pw-rpc-s3cret-4417'
let db: TestDatabase
let node: Server
const authorizations: (string | undefined)[] = []

beforeAll(async () => {
  db = await createTestDatabase()
  node = createServer((req, res) => {
    authorizations.push(req.headers.authorization)
    let body = ''
    req.on('data', (c: Buffer) => {
      body += c.toString()
    })
    req.on('end', () => {
      const answer = (r: { id: unknown; method: string }) =>
        r.method === 'eth_chainId'
          ? { jsonrpc: '2.0', id: r.id, result: '0x7a69' }
          : { jsonrpc: '2.0', id: r.id, error: { code: -32601, message: 'method not found' } }
      const parsed = JSON.parse(body)
      res.writeHead(200, { 'Content-Type': 'application/json' })
      res.end(JSON.stringify(Array.isArray(parsed) ? parsed.map(answer) : answer(parsed)))
    })
  })
  await new Promise<void>((resolve) => node.listen(0, '127.0.0.1', resolve))
})

afterAll(async () => {
  await new Promise<void>((resolve) => node?.close(() => resolve()))
  await db?.drop()
})

describe('RPC_URL with user:password', () => {
  it('reaches the node with the credentials and never logs the password', async () => {
    const port = (node.address() as AddressInfo).port
    const child = spawnIndexer({
      DATABASE_URL: db.url,
      RPC_URL: `http://indexer:${PASSWORD}@127.0.0.1:${port}/`,
      CHAIN_ID: '31337',
      NETWORK: 'devnet',
    })
    await new Promise((r) => setTimeout(r, 6_000))
    await child.kill9()
    const output = `${child.lines.join('\n')}\n${child.stderr.join('')}`
    const leaks = output.split('\n').filter((line) => line.includes(PASSWORD))
    expect(leaks.length, `log lines with the password, e.g.\n${leaks[0]}`).toBe(0)
    expect(authorizations.length, 'requests that reached the node').toBeGreaterThan(0)
    expect(authorizations[0]).toBe(`Basic ${Buffer.from(`indexer:${PASSWORD}`).toString('base64')}`)
  }, 60_000)
})

const basic = (pair: string) => `Basic ${Buffer.from(pair, 'utf8').toString('base64')}`

describe('splitCredentials', () => {
  it('leaves a URL without userinfo as it is, with no Authorization', () => {
    expect(splitCredentials('https://eth.example/v3/key?x=1')).toEqual({
      url: 'https://eth.example/v3/key?x=1',
      authorization: undefined,
    })
  })

  it('takes the userinfo out of the URL and percent-decodes it into basic auth', () => {
    expect(splitCredentials('https://us%40er:p%2Fa%3Fs%23s%3A%C3%A9@node.example:8545/rpc?k=1')).toEqual({
      url: 'https://node.example:8545/rpc?k=1',
      authorization: basic('us@er:p/a?s#s:é'),
    })
    expect(splitCredentials('http://token@node.example/')).toEqual({
      url: 'http://node.example/',
      authorization: basic('token:'),
    })
    // A % not followed by two hex digits is taken as it is.
    expect(splitCredentials('http://u:100%@node.example/').authorization).toBe(basic('u:100%'))
  })
})

describe('redaction', () => {
  it('hides the userinfo of any URL in a text', () => {
    expect(
      redactCredentials('cannot reach http://indexer:s3cret@10.0.0.1:8545/ (a, https://k@b.example)'),
    ).toBe('cannot reach http://[redacted]@10.0.0.1:8545/ (a, https://[redacted]@b.example)')
    expect(redactCredentials('at file:///app/node_modules/@scope/x.js, see https://h.example/@u')).toBe(
      'at file:///app/node_modules/@scope/x.js, see https://h.example/@u',
    )
  })

  it('copies an error chain that quotes a password, keeps any other error as it is', () => {
    const inner = Object.assign(new Error('refused http://u:s3cret@h/'), { code: 'ECONNREFUSED' })
    const outer = new TypeError('fetch failed', { cause: inner })
    const clean = withoutCredentials(outer) as Error
    expect(clean).not.toBe(outer)
    expect(clean.name).toBe('TypeError')
    expect((clean.cause as Error).message).toBe('refused http://[redacted]@h/')
    expect((clean.cause as { code?: string }).code).toBe('ECONNREFUSED')
    expect(JSON.stringify([clean.stack, (clean.cause as Error).stack])).not.toContain('s3cret')
    const plain = new Error('connect ECONNREFUSED 127.0.0.1:1')
    expect(withoutCredentials(plain)).toBe(plain)
  })
})

describe('HttpJsonRpc with credentials in its URL', () => {
  const wire = (url: string, timeoutMs = 5_000) =>
    new HttpJsonRpc({ url, batchSize: 100, timeoutMs, maxBodyBytes: 1 << 20 }, (exchange) => exchange())

  it('sends them as basic auth to the URL without them', async () => {
    const port = (node.address() as AddressInfo).port
    const before = authorizations.length
    const chainId = await wire(`http://in%40dexer:${PASSWORD}%40x@127.0.0.1:${port}/`).call('eth_chainId', [])
    expect(chainId).toBe('0x7a69')
    expect(authorizations.slice(before)).toEqual([basic(`in@dexer:${PASSWORD}@x`)])
  })

  it('never quotes the password in a connection failure', async () => {
    // A port nothing listens on: connection refused.
    const closed = createServer()
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
    const port = (closed.address() as AddressInfo).port
    await new Promise<void>((resolve) => closed.close(() => resolve()))
    const err = await wire(`http://indexer:${PASSWORD}@127.0.0.1:${port}/`)
      .call('eth_chainId', [])
      .catch((e: unknown) => e)
    expect(err).toBeInstanceOf(RpcRequestError)
    expect((err as RpcRequestError).kind).toBe('network')
    const text: string[] = []
    for (let e: unknown = err; e instanceof Error; e = e.cause) text.push(e.message, e.stack ?? '')
    expect(text.join('\n')).not.toContain(PASSWORD)
  })
})
