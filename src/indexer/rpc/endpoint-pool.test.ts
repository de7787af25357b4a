/**
 * Provider behaviour handled on purpose, against real local HTTP servers:
 * Retry-After honoured, concurrency that backs off and grows again, failover
 * to another endpoint, HTML and non-JSON answers treated as transient.
 */
import { getEventListeners, setMaxListeners } from 'node:events'
import type http from 'node:http'
import pino from 'pino'
import { afterEach, describe, expect, it } from 'vitest'
import { startJsonRpcServer, type TestServer } from '../test/http-server'
import { createRpc, isTransientRpcError } from './client'
import { Endpoint } from './endpoint'
import { EndpointPool } from './endpoint-pool'
import { MAX_BODY_BYTES, parseRetryAfter, RpcRequestError } from './transport'

const logger = pino({ level: 'silent' })
const servers: TestServer[] = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()))
})

type Handler = (
  body: { id: number; method: string } | Array<{ id: number; method: string }>,
  res: http.ServerResponse,
) => void

async function server(handle: Handler) {
  const s = await startJsonRpcServer(handle)
  servers.push(s)
  return s.origin
}

const answer = (res: http.ServerResponse, body: unknown) =>
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body))
const ok = (req: { id: number }, result: unknown = '0x10') => ({ jsonrpc: '2.0', id: req.id, result })

describe('endpoint pool', () => {
  it('honours Retry-After: no request reaches a rate-limited endpoint before it has passed', async () => {
    const arrivals: number[] = []
    const url = await server((body, res) => {
      arrivals.push(Date.now())
      if (arrivals.length === 1) return res.writeHead(429, { 'retry-after': '2' }).end('slow down')
      answer(res, ok(body as { id: number }))
    })
    const rpc = createRpc({ url, logger })
    expect(await rpc.blockNumber()).toBe(16n)
    expect(arrivals).toHaveLength(2)
    expect(arrivals[1]! - arrivals[0]!).toBeGreaterThanOrEqual(1_950)
  })

  it('halves its concurrency on 429s and grows it again on clean answers', async () => {
    let inFlight = 0
    let refusals = 0
    const url = await server((body, res) => {
      inFlight++
      setTimeout(() => {
        inFlight--
        // The provider allows 4 requests at once.
        if (inFlight >= 4) {
          refusals++
          return res.writeHead(429).end()
        }
        answer(res, Array.isArray(body) ? body.map((b) => ok(b)) : ok(body))
      }, 20)
    })
    const pool = new EndpointPool({ urls: [url], maxConcurrency: 32, batchSize: 1 })
    const endpoint = pool.endpoints[0]!
    // Grow past the provider's allowance first.
    for (let i = 0; i < 200; i++) endpoint.succeeded(10)
    expect(endpoint.limit).toBeGreaterThan(8)
    const start = endpoint.limit
    let low = start
    const sample = setInterval(() => {
      low = Math.min(low, endpoint.limit)
    }, 1)
    const rpc = createRpc({ pool, logger, retries: 20 })
    // Decreases come at most once per round trip, and a loaded machine lengthens round
    // trips: keep the pressure on (bursts of 60) until the limit has come down, at most 10 bursts.
    for (let burst = 0; burst < 10 && low > 5; burst++)
      await Promise.all(Array.from({ length: 60 }, () => rpc.request('eth_blockNumber', [])))
    clearInterval(sample)
    expect(refusals).toBeGreaterThan(0)
    // Backed off to the provider's allowance (4 at once) or below...
    expect(low).toBeLessThanOrEqual(5)
    // ...and grows again while answers are clean.
    const before = endpoint.limit
    for (let wave = 0; wave < 10; wave++)
      await Promise.all(Array.from({ length: 3 }, () => rpc.request('eth_blockNumber', [])))
    expect(endpoint.limit).toBeGreaterThan(before)
    expect(start).toBeGreaterThan(8)
  })

  it('doubles its concurrency per window of clean answers until the first overload, then grows by one per window', () => {
    const endpoint = new EndpointPool({ urls: ['http://127.0.0.1:1'], maxConcurrency: 32 }).endpoints[0]!
    expect(endpoint.limit).toBe(4)
    // Slow start: a window of 4 clean answers makes 8, a window of 8 makes 16.
    for (let i = 0; i < 4; i++) endpoint.succeeded(10)
    expect(endpoint.limit).toBe(8)
    for (let i = 0; i < 8; i++) endpoint.succeeded(10)
    expect(endpoint.limit).toBe(16)
    // The first 429 halves it and ends the slow start there...
    endpoint.failed(new RpcRequestError('rate_limited', 'HTTP 429', { status: 429 }))
    expect(endpoint.limit).toBe(8)
    // ...so a window of 8 clean answers adds about one, not eight.
    for (let i = 0; i < 8; i++) endpoint.succeeded(10)
    expect(endpoint.limit).toBeGreaterThan(8.9)
    expect(endpoint.limit).toBeLessThan(9.1)
    // It never passes maxConcurrency.
    for (let i = 0; i < 2_000; i++) endpoint.succeeded(10)
    expect(endpoint.limit).toBe(32)
  })

  it('fails over to another endpoint at once, without losing the request', async () => {
    let downCalls = 0
    const down = await server((_body, res) => {
      downCalls++
      res.writeHead(502, { 'content-type': 'text/html' }).end('<html><title>502 Bad Gateway</title></html>')
    })
    const up = await server((body, res) => answer(res, ok(body as { id: number }, '0x20')))
    const rpc = createRpc({ url: `${down},${up}`, logger })
    const started = Date.now()
    for (let i = 0; i < 5; i++) expect(await rpc.blockNumber()).toBe(32n)
    // No back-off was needed: another endpoint could answer.
    expect(Date.now() - started).toBeLessThan(1_000)
    // After its failures the bad endpoint is rested; traffic goes to the healthy one.
    expect(downCalls).toBeLessThanOrEqual(3)
    expect(rpc.pool.summary().map((e) => e.state)).toEqual(['failing', 'ok'])
  })

  it('counts a batch that failed whole as one fault, and logs it once', async () => {
    let downBatches = 0
    const down = await server((_body, res) => {
      downBatches++
      res.writeHead(502, { 'content-type': 'text/html' }).end('<html><title>502 Bad Gateway</title></html>')
    })
    const up = await server((body, res) =>
      answer(res, Array.isArray(body) ? body.map((b) => ok(b)) : ok(body)),
    )
    const lines: Array<{ level: number; msg: string }> = []
    const collecting = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) })
    const pool = new EndpointPool({ urls: [down, up], batchSize: 50 })
    // Both endpoints equally good: the first takes the batch.
    const rpc = createRpc({ pool, logger: collecting, background: true })
    const results = await Promise.all(Array.from({ length: 20 }, () => rpc.request('eth_call', [])))
    expect(results).toEqual(Array(20).fill('0x10'))
    expect(downBatches).toBe(1)
    const [failing] = pool.endpoints
    // One fault: the endpoint is not rested as if twenty requests had failed in a row.
    expect(failing!.faults).toEqual({ http: 1 })
    expect(failing!.coolUntil).toBe(0)
    expect(failing!.errorRate).toBeCloseTo(0.1)
    expect(lines.filter((l) => l.level === 40).map((l) => l.msg)).toEqual([
      expect.stringMatching(/^eth_call failed, retrying on another endpoint: .*HTTP 502/),
    ])
  })

  it('asks again within a fraction of a second when the node does not have the block yet', async () => {
    let calls = 0
    const url = await server((body, res) => {
      const { id } = body as { id: number }
      calls++
      // A load-balanced node a block behind: the block hash is not known there yet.
      if (calls <= 3)
        return answer(res, { jsonrpc: '2.0', id, error: { code: -32000, message: 'unknown block' } })
      answer(res, ok({ id }, []))
    })
    const lines: Array<{ level: number; retryInMs?: number }> = []
    const collecting = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) })
    const rpc = createRpc({ url, logger: collecting })
    expect(await rpc.getLogs({ blockHash: `0x${'ab'.repeat(32)}` }, [])).toEqual([])
    // Not the exponential back-off of other faults (125–250 ms, then 250–500, 500–1,000 …).
    expect(lines.filter((l) => l.level === 40).map((l) => l.retryInMs)).toEqual([100, 200, 300])
  })

  it('treats HTML pages and bodies that are not JSON as transient faults', async () => {
    let calls = 0
    const url = await server((body, res) => {
      calls++
      if (calls === 1) return res.writeHead(200, { 'content-type': 'text/html' }).end('<html>oops</html>')
      if (calls === 2)
        return res.writeHead(200).end('upstream connect error or disconnect/reset before headers')
      answer(res, ok(body as { id: number }))
    })
    const rpc = createRpc({ url, logger })
    expect(await rpc.blockNumber()).toBe(16n)
    expect(calls).toBe(3)
    expect(rpc.pool.endpoints[0]!.faults).toEqual({ bad_body: 2 })
  })

  it('refuses a header of another block, or an incomplete one, as a transient bad answer', async () => {
    const header = (n: bigint) => ({
      number: `0x${n.toString(16)}`,
      hash: `0x${'11'.repeat(32)}`,
      parentHash: `0x${'22'.repeat(32)}`,
      timestamp: '0x5',
    })
    const url = await server((body, res) => {
      const { id, params } = body as unknown as { id: number; params: [string] }
      const asked = BigInt(params[0])
      // A broken cache: block 16 answered with block 17, block 17 without its hash.
      if (asked === 16n) return answer(res, ok({ id }, header(17n)))
      if (asked === 17n) return answer(res, ok({ id }, { ...header(17n), hash: undefined }))
      answer(res, ok({ id }, header(asked)))
    })
    const rpc = createRpc({ url, logger })
    for (const n of [16n, 17n]) {
      const err = await rpc.getBlock(n).catch((e: unknown) => e)
      expect(String(err)).toMatch(`eth_getBlockByNumber(${n}) answered another block or an incomplete one`)
      expect(isTransientRpcError(err)).toBe(true)
    }
    expect((await rpc.getBlock(18n))?.number).toBe(18n)
  })

  it('answers each item of a batch on its own, so one item error is retried alone', async () => {
    const batches: number[] = []
    let failed = false
    const url = await server((body, res) => {
      const items = Array.isArray(body) ? body : [body]
      batches.push(items.length)
      answer(
        res,
        items.map((item, i) => {
          if (i === 1 && !failed) {
            failed = true
            return { jsonrpc: '2.0', id: item.id, error: { code: -32603, message: 'internal error' } }
          }
          return ok(item, `0x${item.id.toString(16)}`)
        }),
      )
    })
    const rpc = createRpc({ url, logger })
    const results = await Promise.all(Array.from({ length: 5 }, () => rpc.request<string>('eth_chainId', [])))
    expect(results).toHaveLength(5)
    // One batch of five, then the failed item alone.
    expect(batches).toEqual([5, 1])
  })

  it('asks a call that halted once: a revert or an EVM halt under -32603 is the call’s own answer', async () => {
    // How nodes word a call that ran and failed: revm-based ones (anvil, reth) under the
    // internal-error code -32603, which otherwise means a fault worth retrying.
    const failures = [
      { code: -32603, message: 'EVM error InvalidFEOpcode' },
      { code: -32603, message: 'EVM error OutOfGas(Basic)' },
      { code: -32000, message: 'invalid opcode: INVALID' },
      { code: 3, message: 'execution reverted', data: '0x08c379a0' },
    ]
    const asked: string[] = []
    const url = await server((body, res) => {
      const item = body as unknown as { id: number; params: [{ data: string }] }
      asked.push(item.params[0].data)
      answer(res, { jsonrpc: '2.0', id: item.id, error: failures[Number(item.params[0].data)] })
    })
    const rpc = createRpc({ url, logger })
    for (const [i, failure] of failures.entries()) {
      const err: Error = await rpc
        .request<string>('eth_call', [{ to: '0x1', data: String(i) }, 'latest'])
        .then(() => new Error('answered'))
        .catch((e: Error) => e)
      expect(String(err.cause ?? err)).toContain(failure.message)
      expect(isTransientRpcError(err)).toBe(false)
    }
    expect(asked).toEqual(['0', '1', '2', '3'])
  })

  it('sends eth_getLogs by range in requests of their own, never batched with the same tick', async () => {
    const requests: string[][] = []
    const url = await server((body, res) => {
      const items = Array.isArray(body) ? body : [body]
      requests.push(items.map((item) => item.method))
      const results = items.map((item) => ok(item, item.method === 'eth_getLogs' ? [] : null))
      answer(res, Array.isArray(body) ? results : results[0])
    })
    const rpc = createRpc({ url, logger })
    await Promise.all([
      rpc.getLogs({ fromBlock: 1n, toBlock: 10n }, []),
      rpc.getLogs({ fromBlock: 1n, toBlock: 10n }, []),
      rpc.getBlock(1n),
      rpc.getBlock(10n),
    ])
    expect(requests.sort()).toEqual([
      ['eth_getBlockByNumber', 'eth_getBlockByNumber'],
      ['eth_getLogs'],
      ['eth_getLogs'],
    ])
  })

  it('serves the sync loop before background work, which gets at most half of the slots', async () => {
    const order: string[] = []
    let inFlight = 0
    let peak = 0
    const url = await server((body, res) => {
      const item = Array.isArray(body) ? body[0]! : body
      inFlight++
      peak = Math.max(peak, inFlight)
      setTimeout(() => {
        inFlight--
        order.push(item.method)
        answer(res, Array.isArray(body) ? body.map((b) => ok(b)) : ok(body))
      }, 30)
    })
    const pool = new EndpointPool({ urls: [url], maxConcurrency: 2, batchSize: 1 })
    pool.endpoints[0]!.limit = 2
    const background = createRpc({ pool, logger, background: true })
    const sync = createRpc({ pool, logger })
    const queued = Array.from({ length: 4 }, () => background.request('eth_call', []))
    await new Promise((r) => setImmediate(r))
    const head = sync.request('eth_blockNumber', [])
    await Promise.all([...queued, head])
    // One background request was already running; the sync request took the free slot at once.
    expect(order.indexOf('eth_blockNumber')).toBeLessThanOrEqual(1)
    expect(peak).toBe(2)
  })

  it('rests only the background lane after a Retry-After its request received; a sync one rests both', async () => {
    const arrivals: Array<{ method: string; at: number }> = []
    const limited = new Set(['eth_call', 'eth_chainId'])
    const url = await server((body, res) => {
      const { method } = Array.isArray(body) ? body[0]! : body
      arrivals.push({ method, at: Date.now() })
      // The first request of each of these methods is rate-limited for a second.
      if (limited.delete(method)) return res.writeHead(429, { 'retry-after': '1' }).end('slow down')
      answer(res, Array.isArray(body) ? body.map((b) => ok(b)) : ok(body))
    })
    const pool = new EndpointPool({ urls: [url], batchSize: 1 })
    const endpoint = pool.endpoints[0]!
    const background = createRpc({ pool, logger, background: true })
    const sync = createRpc({ pool, logger })
    const at = (method: string, nth = 0) => arrivals.filter((a) => a.method === method)[nth]!.at

    // The metadata queue's tokenURI read runs into the limit: the head is still read at once.
    const tokenUri = background.request('eth_call', [])
    const rateLimited = async (n: number) => {
      while ((endpoint.faults.rate_limited ?? 0) < n) await new Promise((r) => setTimeout(r, 5))
    }
    await rateLimited(1)
    expect(await sync.blockNumber()).toBe(16n)
    await tokenUri
    expect(at('eth_call', 1) - at('eth_call')).toBeGreaterThanOrEqual(950)
    expect(at('eth_blockNumber') - at('eth_call')).toBeLessThan(500)

    // The sync loop's own request runs into it: background work waits as well.
    const chainId = sync.chainId()
    await rateLimited(2)
    await Promise.all([chainId, background.request('eth_getCode', [])])
    expect(at('eth_chainId', 1) - at('eth_chainId')).toBeGreaterThanOrEqual(950)
    expect(at('eth_getCode') - at('eth_chainId')).toBeGreaterThanOrEqual(950)
  })

  it('gives a freed slot to the waiting request that reads the lowest block', async () => {
    const served: number[] = []
    const url = await server((body, res) => {
      const item = (Array.isArray(body) ? body[0]! : body) as unknown as { params: [{ fromBlock: string }] }
      setTimeout(() => {
        served.push(Number(item.params[0].fromBlock))
        answer(res, Array.isArray(body) ? body.map((b) => ok(b, [])) : ok(body, []))
      }, 20)
    })
    const pool = new EndpointPool({ urls: [url], maxConcurrency: 1 })
    pool.endpoints[0]!.limit = 1
    const rpc = createRpc({ pool, logger })
    const read = (from: bigint) => rpc.getLogs({ fromBlock: from, toBlock: from + 9n }, [])
    const first = read(100n)
    await new Promise((r) => setImmediate(r))
    // Queued while the first holds the only slot: the later ranges first, then a retry of an older one.
    await Promise.all([first, read(300n), read(200n), read(10n)])
    expect(served).toEqual([100, 10, 200, 300])
  })

  it('requests waiting out a Retry-After listen on the stop signal only while they wait', async () => {
    let first = true
    const url = await server((body, res) => {
      if (first) {
        first = false
        return res.writeHead(429, { 'retry-after': '1' }).end('slow down')
      }
      answer(res, Array.isArray(body) ? body.map((b) => ok(b)) : ok(body))
    })
    const stop = new AbortController()
    // As the indexer's stop signal (run-indexer.ts): what counts is that none is left behind.
    setMaxListeners(0, stop.signal)
    const listeners = () => getEventListeners(stop.signal, 'abort').length
    const rpc = createRpc({ url, logger, signal: stop.signal })
    const endpoint = rpc.pool.endpoints[0]!
    const reads = [rpc.request('eth_call', [])]
    while (!endpoint.faults.rate_limited) await new Promise((r) => setTimeout(r, 5))
    // A tokenURI batch of a hundred reads arrives while the endpoint rests: each waits, listening.
    for (let i = 0; i < 100; i++) reads.push(rpc.request('eth_call', []))
    await new Promise((r) => setTimeout(r, 50))
    expect(listeners()).toBeGreaterThan(100)
    await Promise.all(reads)
    expect(listeners()).toBe(0)
  })

  it('reads Retry-After as seconds or as an HTTP date', () => {
    expect(parseRetryAfter('3')).toBe(3_000)
    const date = new Date(Date.now() + 5_000).toUTCString()
    expect(parseRetryAfter(date)).toBeGreaterThan(3_000)
    expect(parseRetryAfter('soon')).toBeUndefined()
    const e = new Endpoint('http://x', 0, {
      batchSize: 1,
      timeoutMs: 1_000,
      maxConcurrency: 4,
      lagThreshold: 5n,
      restOnFailure: true,
      maxBodyBytes: MAX_BODY_BYTES,
    })
    e.failed(new RpcRequestError('rate_limited', 'HTTP 429', { status: 429, retryAfterMs: 4_000 }))
    expect(e.coolUntil - Date.now()).toBeGreaterThan(3_500)
    expect(e.state(-1n)).toBe('rate_limited')
  })
})
