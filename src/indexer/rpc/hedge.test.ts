/**
 * Hedged requests (rpc/hedge.ts): a request with no answer for twice the
 * usual time of its kind is sent once more and the first answer wins, against
 * real local HTTP servers that leave chosen requests unanswered.
 */
import type http from 'node:http'
import pino from 'pino'
import { afterEach, describe, expect, it } from 'vitest'
import { startJsonRpcServer, type TestServer } from '../test/http-server'
import { createRpc } from './client'
import { EndpointPool } from './endpoint-pool'
import { HEDGE_MIN_MS, HedgePolicy } from './hedge'

const logger = pino({ level: 'silent' })
const servers: TestServer[] = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()))
})

type Item = { id: number; method: string; params: unknown[] }

/** A node that answers every item with `result`, except the requests `hang` picks (never answered). */
async function node(result: (item: Item) => unknown, hang: (item: Item, n: number) => boolean = () => false) {
  const seen: Item[] = []
  const closed: Item[] = []
  const s = await startJsonRpcServer<Item | Item[]>((body, res: http.ServerResponse) => {
    const items = Array.isArray(body) ? body : [body]
    seen.push(...items)
    if (items.some((item) => hang(item, seen.length))) {
      res.once('close', () => closed.push(...items))
      return
    }
    const answers = items.map((item) => ({ jsonrpc: '2.0', id: item.id, result: result(item) }))
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify(Array.isArray(body) ? answers : answers[0]))
  })
  servers.push(s)
  return { url: s.origin, seen, closed }
}

const LOGS = [{ address: '0x01', topics: [], data: '0x', blockNumber: '0x5', logIndex: '0x0' }]
const isRange = (item: Item) => (item.params[0] as { fromBlock?: string })?.fromBlock !== undefined
const getLogs = (rpc: ReturnType<typeof createRpc>, from: bigint) =>
  rpc.request<unknown[]>('eth_getLogs', [{ fromBlock: `0x${from.toString(16)}`, toBlock: '0x5' }], {
    alone: true,
    retry: false,
  })

/** Answers of the usual time teach the policy that a range read takes tens of milliseconds. */
async function warmUp(rpc: ReturnType<typeof createRpc>) {
  for (let i = 0; i < 16; i++) await getLogs(rpc, 1n)
}

describe('hedge policy', () => {
  it('waits twice the 95th percentile of recent answers of the kind, within bounds', () => {
    const policy = new HedgePolicy(15_000)
    // Unknown kind: a third of the time-out.
    expect(policy.delayMs('eth_getLogs alone')).toBe(5_000)
    for (let i = 0; i < 15; i++) policy.answered('eth_getLogs alone', 1_000)
    expect(policy.delayMs('eth_getLogs alone')).toBe(5_000)
    policy.answered('eth_getLogs alone', 1_000)
    expect(policy.delayMs('eth_getLogs alone')).toBe(2_000)
    // A slow tail moves the delay; the kinds are apart.
    for (let i = 0; i < 8; i++) policy.answered('eth_getLogs alone', 3_000)
    expect(policy.delayMs('eth_getLogs alone')).toBe(6_000)
    for (let i = 0; i < 16; i++) policy.answered('eth_blockNumber', 40)
    expect(policy.delayMs('eth_blockNumber')).toBe(HEDGE_MIN_MS)
    // Never later than half the time-out.
    for (let i = 0; i < 64; i++) policy.answered('eth_call', 12_000)
    expect(policy.delayMs('eth_call')).toBe(7_500)
  })

  it('rations hedges to about one per ten answered requests', () => {
    const policy = new HedgePolicy(15_000)
    let taken = 0
    while (policy.take()) taken++
    expect(taken).toBe(10)
    for (let i = 0; i < 9; i++) policy.answered('eth_call', 10)
    expect(policy.take()).toBe(false)
    policy.answered('eth_call', 10)
    expect(policy.take()).toBe(true)
  })
})

describe('hedged requests', () => {
  it('a range read left unanswered is sent again and answered long before the time-out; the stalled one is cut', async () => {
    let hung = 0
    const n = await node(
      () => LOGS,
      (item) =>
        isRange(item) && (item.params[0] as { fromBlock: string }).fromBlock === '0x2' && hung++ === 0,
    )
    const rpc = createRpc({ url: n.url, logger, timeoutMs: 60_000 })
    await warmUp(rpc)
    const started = performance.now()
    expect(await getLogs(rpc, 2n)).toEqual(LOGS)
    // Answered by the hedge: the 60 s time-out never came into it.
    expect(performance.now() - started).toBeLessThan(30_000)
    expect(n.seen.filter((i) => (i.params[0] as { fromBlock?: string })?.fromBlock === '0x2')).toHaveLength(2)
    await expect.poll(() => n.closed.length).toBe(1)
    expect(rpc.pool.endpoints[0]!.faults).toEqual({})
  })

  it('goes to another endpoint when there is one, and a batched request is hedged too', async () => {
    const slow = await node(
      () => '0x10',
      (item) => item.method === 'eth_blockNumber',
    )
    const fast = await node(() => '0x10')
    const pool = new EndpointPool({ urls: [slow.url, fast.url], timeoutMs: 60_000 })
    // The first endpoint looks the better one until it stalls.
    pool.endpoints[1]!.latencyMs = 10_000
    for (let i = 0; i < 16; i++) pool.hedging.answered('eth_blockNumber', 20)
    const rpc = createRpc({ pool, logger })
    expect(await rpc.blockNumber()).toBe(16n)
    expect(slow.seen.map((i) => i.method)).toEqual(['eth_blockNumber'])
    expect(fast.seen.map((i) => i.method)).toEqual(['eth_blockNumber'])
    // The batched attempt is not cut (its batch may hold other requests): the server still holds it.
    expect(slow.closed).toHaveLength(0)
  })

  it('times the wait from when the request goes out: a request queued behind a slow one is not hedged', async () => {
    const arrivals: string[] = []
    const s = await startJsonRpcServer<Item>((body, res) => {
      arrivals.push(String(body.params[0]))
      setTimeout(
        () => res.writeHead(200).end(JSON.stringify({ jsonrpc: '2.0', id: body.id, result: '0x1' })),
        1_200,
      )
    })
    servers.push(s)
    // Two requests at a time; answers of this kind usually take a second, so a hedge waits two.
    const pool = new EndpointPool({ urls: [s.origin], maxConcurrency: 2, timeoutMs: 60_000 })
    for (let i = 0; i < 16; i++) pool.hedging.answered('eth_call alone', 1_000)
    const rpc = createRpc({ pool, logger })
    const call = (tag: string) => rpc.request('eth_call', [tag], { alone: true })
    // The third waits 1.2 s for a slot, then 1.2 s for its answer: 2.4 s in all, 1.2 s out. A hedge
    // timed from the call would go out at 2 s, on the slot the first two freed.
    await Promise.all([call('a'), call('b'), call('c')])
    expect(arrivals).toEqual(['a', 'b', 'c'])
  })

  it('a hedge that fails ends the wait: the request is retried while the first attempt still hangs', async () => {
    let calls = 0
    const s = await startJsonRpcServer<Item>((body, res) => {
      calls++
      if (calls === 1) return // the first attempt hangs
      if (calls === 2) return res.writeHead(502, { 'content-type': 'text/html' }).end('<h1>Bad gateway</h1>')
      res.writeHead(200).end(JSON.stringify({ jsonrpc: '2.0', id: body.id, result: '0x10' }))
    })
    servers.push(s)
    const pool = new EndpointPool({ urls: [s.origin], timeoutMs: 60_000 })
    for (let i = 0; i < 16; i++) pool.hedging.answered('eth_blockNumber', 20)
    const rpc = createRpc({ pool, logger })
    const started = performance.now()
    expect(await rpc.blockNumber()).toBe(16n)
    expect(calls).toBe(3)
    expect(performance.now() - started).toBeLessThan(30_000)
  })

  it('does not hedge the background lane (the metadata queue): nothing waits on it', async () => {
    const n = await node(
      () => '0x1',
      (_item, count) => count === 1,
    )
    const pool = new EndpointPool({ urls: [n.url], timeoutMs: 1_500 })
    for (let i = 0; i < 16; i++) pool.hedging.answered('eth_call', 20)
    const background = createRpc({ pool, logger, background: true })
    const err = await background.request('eth_call', [], { retry: false }).catch((e: Error) => e)
    expect(String((err as Error).cause)).toMatch(/no answer within 1500 ms/)
    expect(n.seen).toHaveLength(1)
  })

  it('sends no hedge once the ration is used up: the request waits for its time-out', async () => {
    const n = await node(
      () => LOGS,
      (item) => isRange(item) && (item.params[0] as { fromBlock: string }).fromBlock === '0x3',
    )
    const rpc = createRpc({ url: n.url, logger, timeoutMs: 1_500 })
    await warmUp(rpc)
    while (rpc.pool.hedging.take()) {}
    const err = await getLogs(rpc, 3n).catch((e: Error) => e)
    expect(String((err as Error).cause)).toMatch(/no answer within 1500 ms/)
    expect(n.seen.filter((i) => (i.params[0] as { fromBlock?: string })?.fromBlock === '0x3')).toHaveLength(1)
    expect(rpc.pool.endpoints[0]!.faults.timeout).toBe(1)
  })

  it('a failure before the hedge delay is retried as before, without a hedge', async () => {
    let calls = 0
    const s = await startJsonRpcServer<Item>((body, res) => {
      calls++
      if (calls === 1) return res.writeHead(502, { 'content-type': 'text/html' }).end('<h1>Bad gateway</h1>')
      res.writeHead(200).end(JSON.stringify({ jsonrpc: '2.0', id: body.id, result: '0x10' }))
    })
    servers.push(s)
    const rpc = createRpc({ url: s.origin, logger, timeoutMs: 60_000 })
    expect(await rpc.blockNumber()).toBe(16n)
    expect(calls).toBe(2)
    expect(rpc.pool.endpoints[0]!.faults.http).toBe(1)
  })
})
