import type { Address, Hex } from 'viem'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { startTestChain, type TestChain } from '@/indexer/test/chain'
import {
  NO_FAULTS,
  PROVIDER_STYLES,
  type ProviderFaults,
  type ProviderProxy,
  type ProviderStyle,
  startProviderProxy,
} from '.'

const LOGS_PER_BLOCK = 10
const MINT_BLOCKS = 6

let chain: TestChain
let nft: Address
/** Blocks holding LOGS_PER_BLOCK Transfer logs each, oldest first; the last is the head. */
const mintBlocks: bigint[] = []
let head: bigint
let proxy: ProviderProxy
const started: ProviderProxy[] = []

interface Answer {
  id?: unknown
  result?: unknown
  error?: { code: number; message: string; data?: unknown }
}
interface Log {
  transactionHash: Hex
  logIndex: Hex
  blockNumber: Hex
  blockHash: Hex
  blockTimestamp?: Hex
}

const hex = (n: bigint | number) => `0x${n.toString(16)}`
const logId = (l: Log) => `${l.transactionHash.toLowerCase()}:${Number(BigInt(l.logIndex))}`
const logsFilter = (from: bigint, to: bigint) => ({ address: nft, fromBlock: hex(from), toBlock: hex(to) })

async function post(url: string, body: unknown, signal?: AbortSignal) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal,
  })
  return { status: res.status, headers: res.headers, text: await res.text() }
}

async function call(url: string, method: string, params: unknown[] = []): Promise<Answer> {
  const { status, text } = await post(url, { jsonrpc: '2.0', id: 1, method, params })
  expect(status).toBe(200)
  return JSON.parse(text) as Answer
}

async function start(options: Partial<Parameters<typeof startProviderProxy>[0]> = {}) {
  const p = await startProviderProxy({ upstream: chain.anvil.rpcUrl, seed: 7, ...options })
  started.push(p)
  return p
}

beforeAll(async () => {
  chain = await startTestChain()
  nft = (await chain.deploy('TestNFT', ['Proxy', 'P', 'data:,'])).address
  for (let i = 0; i < MINT_BLOCKS; i++) {
    mintBlocks.push(
      await chain.call(nft, 'TestNFT', 'mintBatch', [
        chain.accounts[1],
        BigInt(i * LOGS_PER_BLOCK),
        BigInt(LOGS_PER_BLOCK),
      ]),
    )
  }
  head = await chain.head()
  expect(head).toBe(mintBlocks.at(-1))
  proxy = await start()
})

afterAll(async () => {
  await Promise.all(started.map((p) => p.stop()))
  await chain?.stop()
})

beforeEach(() => proxy.setFaults(NO_FAULTS))

describe('provider proxy without faults', () => {
  it('answers single requests and batches as the node does, keeping every log field', async () => {
    const batch = [
      { jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] },
      { jsonrpc: '2.0', id: 'b', method: 'eth_getLogs', params: [logsFilter(mintBlocks[0]!, head)] },
      { jsonrpc: '2.0', id: 3, method: 'eth_getBlockByNumber', params: [hex(head), false] },
      { jsonrpc: '2.0', id: 4, method: 'eth_chainId', params: [] },
    ]
    const before = proxy.stats()
    const viaProxy = JSON.parse((await post(proxy.url, batch)).text) as Answer[]
    const direct = JSON.parse((await post(chain.anvil.rpcUrl, batch)).text) as Answer[]
    expect(viaProxy).toEqual(direct)
    const logs = viaProxy[1]!.result as Log[]
    expect(logs).toHaveLength(MINT_BLOCKS * LOGS_PER_BLOCK)
    expect(logs[0]!.blockTimestamp).toMatch(/^0x/)

    const single = await call(proxy.url, 'eth_getLogs', [logsFilter(head, head)])
    expect(single.id).toBe(1)
    expect(single.result).toHaveLength(LOGS_PER_BLOCK)

    const after = proxy.stats()
    expect(after.requests! - before.requests!).toBe(2)
    expect(after.items! - before.items!).toBe(5)
    expect(after['method.eth_getLogs']! - (before['method.eth_getLogs'] ?? 0)).toBe(2)
    for (const kind of ['rateLimited', 'itemError', 'omitLog', 'lagging'] as const)
      expect(after[kind]).toBe(before[kind])
  })

  it('answers a wrong chain id and refuses eth_getBlockReceipts when configured so', async () => {
    const p = await start({ chainId: 1, noBlockReceipts: true })
    expect((await call(p.url, 'eth_chainId')).result).toBe('0x1')
    expect((await call(p.url, 'eth_getBlockReceipts', [hex(head)])).error).toEqual({
      code: -32601,
      message: 'the method eth_getBlockReceipts does not exist/is not available',
    })
    expect((await call(proxy.url, 'eth_getBlockReceipts', [hex(head)])).result).toHaveLength(1)
    expect(p.stats()).toMatchObject({ chainIdOverride: 1, blockReceiptsRefused: 1 })
  })

  it('adds the configured latency to each HTTP request', async () => {
    const p = await start({ latencyMs: [80, 100] })
    const t0 = performance.now()
    await call(p.url, 'eth_blockNumber')
    expect(performance.now() - t0).toBeGreaterThanOrEqual(79)
  })
})

describe('HTTP faults', () => {
  it('rate limits with HTTP 429 and an integer Retry-After', async () => {
    const p = await start({ retryAfterSeconds: 3, faults: { rateLimited: 1 } })
    const shapes = new Set<string>()
    for (let i = 0; i < 6; i++) {
      const res = await post(p.url, { jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] })
      expect(res.status).toBe(429)
      expect(res.headers.get('retry-after')).toBe('3')
      if (res.text.startsWith('{')) {
        expect(JSON.parse(res.text).error).toEqual({ code: 429, message: 'Too Many Requests' })
        shapes.add('json')
      } else {
        expect(res.text.trim()).toBe('Too Many Requests')
        shapes.add('text')
      }
    }
    // Both shapes providers use: a JSON-RPC error and a plain-text body.
    expect(shapes).toEqual(new Set(['json', 'text']))
    expect(p.stats().rateLimited).toBe(6)
  })

  it('answers a load balancer 502 HTML page', async () => {
    proxy.setFaults({ badGateway: 1 })
    const res = await post(proxy.url, { jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] })
    expect(res.status).toBe(502)
    expect(res.headers.get('content-type')).toBe('text/html')
    expect(res.text).toContain('<title>502 Bad Gateway</title>')
  })

  it('drops the connection without an answer', async () => {
    proxy.setFaults({ dropConnection: 1 })
    const before = proxy.stats().dropConnection!
    await expect(
      post(proxy.url, { jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }),
    ).rejects.toThrow()
    expect(proxy.stats().dropConnection).toBe(before + 1)
  })

  it('answers HTTP 200 with a body that is not JSON', async () => {
    proxy.setFaults({ nonJson: 1 })
    const res = await post(proxy.url, { jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] })
    expect(res.status).toBe(200)
    expect(() => JSON.parse(res.text)).toThrow()
    expect(res.text).toContain('upstream connect error')
  })

  it('hangs until the client gives up, or until stop()', async () => {
    const p = await start({ faults: { hang: 1 } })
    const body = { jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }
    await expect(post(p.url, body, AbortSignal.timeout(300))).rejects.toThrow(/aborted|timeout/i)
    const pending = post(p.url, body)
    const outcome = await Promise.race([
      pending.then(
        () => 'answered',
        () => 'failed',
      ),
      sleep(300).then(() => 'open'),
    ])
    expect(outcome).toBe('open')
    await p.stop()
    await expect(pending).rejects.toThrow()
    expect(p.stats().hang).toBe(2)
  })
})

describe('JSON-RPC faults', () => {
  it('fails single items and only some items of a batch', async () => {
    proxy.setFaults({ itemError: 1 })
    const single = await call(proxy.url, 'eth_blockNumber')
    expect(['internal error', 'request rate exceeded']).toContain(single.error?.message)

    proxy.setFaults({ itemError: 0.5 })
    const batch = Array.from({ length: 40 }, (_, id) => ({
      jsonrpc: '2.0',
      id,
      method: 'eth_blockNumber',
      params: [],
    }))
    const answers = JSON.parse((await post(proxy.url, batch)).text) as Answer[]
    expect(answers.map((a) => a.id)).toEqual(batch.map((b) => b.id))
    const failed = answers.filter((a) => a.error)
    expect(failed.length).toBeGreaterThan(5)
    expect(failed.length).toBeLessThan(35)
    for (const a of failed) expect([-32603, -32005]).toContain(a.error!.code)
    for (const a of answers.filter((x) => !x.error)) expect(BigInt(a.result as string)).toBe(head)
  })

  it('serves a request from a lagging node: lower head, nothing above it, one node per batch', async () => {
    proxy.setFaults({ lagging: 1, lagBlocks: 3 })
    const heads = new Set<bigint>()
    for (let i = 0; i < 12; i++)
      heads.add(BigInt((await call(proxy.url, 'eth_blockNumber')).result as string))
    for (const h of heads) expect(h >= head - 3n && h < head).toBe(true)
    expect(heads.size).toBeGreaterThan(1)

    const headBlock = await chain.clients.public.getBlock({ blockNumber: head })
    const batch = [
      { jsonrpc: '2.0', id: 0, method: 'eth_blockNumber', params: [] },
      { jsonrpc: '2.0', id: 1, method: 'eth_getBlockByNumber', params: [hex(head), false] },
      { jsonrpc: '2.0', id: 2, method: 'eth_getBlockByNumber', params: ['latest', false] },
      { jsonrpc: '2.0', id: 3, method: 'eth_getBlockByHash', params: [headBlock.hash, false] },
      { jsonrpc: '2.0', id: 4, method: 'eth_getLogs', params: [logsFilter(mintBlocks[0]!, head)] },
      { jsonrpc: '2.0', id: 5, method: 'eth_getLogs', params: [{ blockHash: headBlock.hash }] },
      {
        jsonrpc: '2.0',
        id: 6,
        method: 'eth_getLogs',
        params: [{ address: nft, fromBlock: hex(mintBlocks[0]!) }],
      },
    ]
    const answers = JSON.parse((await post(proxy.url, batch)).text) as Answer[]
    const nodeHead = BigInt(answers[0]!.result as string)
    expect(nodeHead).toBeLessThan(head)
    expect(answers[1]!.result).toBeNull()
    expect(BigInt((answers[2]!.result as { number: Hex }).number)).toBe(nodeHead)
    expect(answers[3]!.result).toBeNull()
    expect(answers[4]!.error).toEqual({ code: -32000, message: 'header not found' })
    expect(answers[5]!.error).toEqual({ code: -32000, message: 'unknown block' })
    // toBlock "latest" means the lagging node's head.
    const logs = answers[6]!.result as Log[]
    expect(logs.every((l) => BigInt(l.blockNumber) <= nodeHead)).toBe(true)
    expect(logs).toHaveLength(Number(nodeHead - mintBlocks[0]! + 1n) * LOGS_PER_BLOCK)
  })

  it("answers a range past a log node's head short, without an error, while the head stays current", async () => {
    proxy.setFaults({ shortLogs: 1, lagBlocks: 2 })
    const before = proxy.stats().shortLogs!
    expect(BigInt((await call(proxy.url, 'eth_blockNumber')).result as string)).toBe(head)
    const headBlock = await chain.clients.public.getBlock({ blockNumber: head })
    const [range, pastHead, byHash] = (
      JSON.parse(
        (
          await post(proxy.url, [
            { jsonrpc: '2.0', id: 0, method: 'eth_getLogs', params: [logsFilter(mintBlocks[0]!, head)] },
            { jsonrpc: '2.0', id: 1, method: 'eth_getLogs', params: [logsFilter(head - 1n, head)] },
            { jsonrpc: '2.0', id: 2, method: 'eth_getLogs', params: [{ blockHash: headBlock.hash }] },
          ])
        ).text,
      ) as Answer[]
    ).map((a) => a.result as Log[])
    // The logs up to the node's head (two blocks behind), none of the last two blocks.
    expect(range!.map((l) => BigInt(l.blockNumber)).at(-1)).toBe(head - 2n)
    expect(range).toHaveLength((MINT_BLOCKS - 2) * LOGS_PER_BLOCK)
    expect(pastHead).toEqual([])
    // A block asked by its hash is served whole.
    expect(byHash).toHaveLength(LOGS_PER_BLOCK)
    expect(proxy.stats().shortLogs! - before).toBe(2)
  })

  it('leaves out exactly one log per answer and records it, for ranges and block hashes', async () => {
    proxy.setFaults({ omitLog: 1 })
    const full = (await call(chain.anvil.rpcUrl, 'eth_getLogs', [logsFilter(mintBlocks[0]!, head)]))
      .result as Log[]
    const before = proxy.omitted().length
    const got = (await call(proxy.url, 'eth_getLogs', [logsFilter(mintBlocks[0]!, head)])).result as Log[]
    expect(got).toHaveLength(full.length - 1)
    const missing = full.map(logId).filter((id) => !got.map(logId).includes(id))
    expect(missing).toHaveLength(1)
    expect(proxy.omitted().slice(before)).toEqual(missing)

    const hash = (await chain.clients.public.getBlock({ blockNumber: mintBlocks[2]! })).hash
    const byHash = (await call(proxy.url, 'eth_getLogs', [{ blockHash: hash }])).result as Log[]
    expect(byHash).toHaveLength(LOGS_PER_BLOCK - 1)
    expect(proxy.omitted()).toHaveLength(before + 2)
    // An empty answer has nothing to leave out.
    const empty = await call(proxy.url, 'eth_getLogs', [{ ...logsFilter(1n, 1n), address: nft }])
    expect(empty.result).toEqual([])
    expect(proxy.omitted()).toHaveLength(before + 2)
  })

  it('with a broken log index, leaves the same logs out of every answer, by range or by hash, and nothing else', async () => {
    const brokenA = await start({ brokenLogIndex: 0.3, seed: 1 })
    const brokenB = await start({ brokenLogIndex: 0.3, seed: 2 })
    const filter = logsFilter(mintBlocks[0]!, head)
    const full = (await call(chain.anvil.rpcUrl, 'eth_getLogs', [filter])).result as Log[]
    const ids = async (p: ProviderProxy, params: unknown) =>
      ((await call(p.url, 'eth_getLogs', [params])).result as Log[]).map(logId)
    const first = await ids(brokenA, filter)
    const missing = full.map(logId).filter((id) => !first.includes(id))
    // About the share configured, never all of them.
    expect(missing.length).toBeGreaterThan(full.length * 0.1)
    expect(missing.length).toBeLessThan(full.length * 0.5)
    // Read again, or through another endpoint on the same index: the same answer.
    expect(await ids(brokenA, filter)).toEqual(first)
    expect(await ids(brokenB, filter)).toEqual(first)
    // Read by block hash or block by block: the same logs missing.
    const hash = (await chain.clients.public.getBlock({ blockNumber: mintBlocks[2]! })).hash
    const inBlock = full.filter((l) => BigInt(l.blockNumber) === mintBlocks[2]).map(logId)
    expect(await ids(brokenA, { blockHash: hash })).toEqual(inBlock.filter((id) => first.includes(id)))
    expect(brokenA.stats().brokenLogIndex).toBeGreaterThan(0)
    expect(new Set(brokenA.omitted())).toEqual(new Set(missing))
    // Block receipts stay honest: every log is in them.
    const receipts = (await call(brokenA.url, 'eth_getBlockReceipts', [hex(mintBlocks[2]!)]))
      .result as Array<{
      logs: Log[]
    }>
    expect(receipts.flatMap((r) => r.logs).map(logId)).toEqual(inBlock)
  })

  it('adds the last log of the next block with logs to an answer by range', async () => {
    proxy.setFaults({ strayLog: 1 })
    const asked = (
      await call(chain.anvil.rpcUrl, 'eth_getLogs', [logsFilter(mintBlocks[0]!, mintBlocks[0]!)])
    ).result as Log[]
    const next = (await call(chain.anvil.rpcUrl, 'eth_getLogs', [logsFilter(mintBlocks[1]!, mintBlocks[1]!)]))
      .result as Log[]
    const got = (await call(proxy.url, 'eth_getLogs', [logsFilter(mintBlocks[0]!, mintBlocks[0]!)]))
      .result as Log[]
    expect(got.map(logId)).toEqual([...asked, next[next.length - 1]!].map(logId))
    expect(proxy.stats().strayLog).toBeGreaterThan(0)
  })

  it('duplicates and reorders logs', async () => {
    proxy.setFaults({ duplicateAndReorder: 1 })
    const full = (await call(chain.anvil.rpcUrl, 'eth_getLogs', [logsFilter(mintBlocks[0]!, mintBlocks[1]!)]))
      .result as Log[]
    const got = (await call(proxy.url, 'eth_getLogs', [logsFilter(mintBlocks[0]!, mintBlocks[1]!)]))
      .result as Log[]
    expect(got.length).toBeGreaterThan(full.length)
    expect(new Set(got.map(logId))).toEqual(new Set(full.map(logId)))
    // Not in the node's order (duplicates merely appended or adjacent would keep it).
    const positions = got.map((l) => full.map(logId).indexOf(logId(l)))
    expect(positions.some((at, i) => i > 0 && at < positions[i - 1]!)).toBe(true)
  })

  it('answers one log with the hash of a replaced block, and keeps it stale until the fault is off', async () => {
    const range = logsFilter(mintBlocks[0]!, mintBlocks[2]!)
    const full = (await call(chain.anvil.rpcUrl, 'eth_getLogs', [range])).result as Log[]
    proxy.setFaults({ staleLog: 1 })
    const got = (await call(proxy.url, 'eth_getLogs', [range])).result as Log[]
    expect(got.map(logId)).toEqual(full.map(logId))
    const stale = got.filter((l, i) => l.blockHash !== full[i]!.blockHash)
    expect(stale).toHaveLength(1)
    expect(stale[0]!.blockHash).toMatch(/^0x5a1e[0-9a-f]{60}$/)
    // Inside the range, and the other logs of its block keep the block's hash.
    expect(BigInt(stale[0]!.blockNumber)).toBe(mintBlocks[1])
    expect(got.filter((l) => l.blockNumber === stale[0]!.blockNumber).length).toBeGreaterThan(1)
    // A stale cache: the same log stays stale while no other becomes so.
    proxy.setFaults({ staleLog: 0.000001 })
    const again = (await call(proxy.url, 'eth_getLogs', [range])).result as Log[]
    expect(again.filter((l, i) => l.blockHash !== full[i]!.blockHash).map(logId)).toEqual([logId(stale[0]!)])
    proxy.setFaults({ staleLog: 0 })
    expect((await call(proxy.url, 'eth_getLogs', [range])).result).toEqual(full)
    expect(proxy.stats().staleLog).toBe(2)
  })

  it('an answer in flight when the stale cache is turned off does not stale it again', async () => {
    const range = logsFilter(mintBlocks[0]!, mintBlocks[2]!)
    const full = (await call(chain.anvil.rpcUrl, 'eth_getLogs', [range])).result as Log[]
    const slow = await start({ latencyMs: [300, 300], faults: { staleLog: 1 } })
    const inFlight = call(slow.url, 'eth_getLogs', [range])
    await new Promise((r) => setTimeout(r, 100))
    slow.setFaults({ staleLog: 0 })
    await inFlight
    expect((await call(slow.url, 'eth_getLogs', [range])).result).toEqual(full)
  })
})

/** Each style's refusal as its provider words it (code, message; suggestion where there is one). */
const expected: Record<ProviderStyle, { range: [number, RegExp]; results: [number, RegExp] }> = {
  alchemy: {
    range: [
      -32600,
      /^You can make eth_getLogs requests with up to a 3 block range\. Based on your parameters, this block range should work: \[0x[0-9a-f]+, 0x[0-9a-f]+\]$/,
    ],
    results: [
      -32602,
      /^Log response size exceeded\. You can make eth_getLogs requests with up to a 3 block range and no limit on the response size, or you can request any block range with a cap of 15 logs in the response\. Based on your parameters and the response size limit, this block range should work: \[0x[0-9a-f]+, 0x[0-9a-f]+\]$/,
    ],
  },
  infura: {
    range: [-32602, /^range 4 exceeds limit of 3$/],
    results: [
      -32005,
      /^query returned more than 15 results\. Try with this block range \[0x[0-9A-F]+, 0x[0-9A-F]+\]\.$/,
    ],
  },
  quicknode: {
    range: [-32614, /^eth_getLogs is limited to a 3 range$/],
    results: [-32002, /^request timed out$/],
  },
  ankr: {
    range: [-32600, /^block range is too wide$/],
    results: [-32602, /^query exceeds max results 15, retry with the range \d+-\d+$/],
  },
  cloudflare: {
    range: [-32047, /^Invalid eth_getLogs request\. 'fromBlock'-'toBlock' range too large\. Max range: 3$/],
    results: [-32002, /^request timed out$/],
  },
  geth: { range: [-32602, /^exceed maximum block range 3$/], results: [-32002, /^request timed out$/] },
  erigon: {
    range: [-32602, /^query block range exceeds server limit, narrow your filter: 3$/],
    results: [-32602, /^query returns too many logs, narrow your filter: 15$/],
  },
  reth: {
    range: [-32602, /^query exceeds max block range 3$/],
    results: [-32602, /^query exceeds max results 15, retry with the range \d+-\d+$/],
  },
}

/** The range a refusal suggests, wherever its provider puts it. */
function suggestion(error: NonNullable<Answer['error']>): [bigint, bigint] | undefined {
  const data = error.data as { from?: string; to?: string } | undefined
  if (data?.from && data.to) return [BigInt(data.from), BigInt(data.to)]
  const hexPair = /\[(0x[0-9a-fA-F]+), (0x[0-9a-fA-F]+)\]/.exec(error.message)
  if (hexPair) return [BigInt(hexPair[1]!), BigInt(hexPair[2]!)]
  const dashed = /range (\d+)-(\d+)$/.exec(error.message)
  return dashed ? [BigInt(dashed[1]!), BigInt(dashed[2]!)] : undefined
}

describe('eth_getLogs caps in each provider style', () => {
  it.each(Object.keys(PROVIDER_STYLES) as ProviderStyle[])('%s', async (style) => {
    const p = await start({ getLogsCap: { maxBlocks: 3, maxResults: 15, style } })
    const spec = PROVIDER_STYLES[style]
    const [b1, , , b4] = mintBlocks as [bigint, bigint, bigint, bigint]

    // Four blocks: wider than the block cap.
    const wide = await post(p.url, {
      jsonrpc: '2.0',
      id: 1,
      method: 'eth_getLogs',
      params: [logsFilter(b1, b4)],
    })
    expect(wide.status).toBe(style === 'quicknode' ? 413 : 200)
    const rangeError = (JSON.parse(wide.text) as Answer).error!
    expect(rangeError.code).toBe(expected[style].range[0])
    expect(rangeError.message).toMatch(expected[style].range[1])
    if (spec.suggests.range) expect(suggestion(rangeError)).toEqual([b1, b1 + 2n])
    // In a batch the refusal is that item's error, with HTTP 200.
    const inBatch = await post(p.url, [
      { jsonrpc: '2.0', id: 1, method: 'eth_getLogs', params: [logsFilter(b1, b4)] },
      { jsonrpc: '2.0', id: 2, method: 'eth_blockNumber', params: [] },
    ])
    expect(inBatch.status).toBe(200)
    expect((JSON.parse(inBatch.text) as Answer[]).map((a) => Boolean(a.error))).toEqual([true, false])

    // Two blocks of 10 logs: within the block cap, over the result cap.
    const dense = await call(p.url, 'eth_getLogs', [logsFilter(b1, b1 + 1n)])
    expect(dense.error?.code).toBe(expected[style].results[0])
    expect(dense.error?.message).toMatch(expected[style].results[1])
    if (spec.suggests.results) {
      const [from, to] = suggestion(dense.error!)!
      expect([from, to]).toEqual([b1, b1])
      const retried = await call(p.url, 'eth_getLogs', [logsFilter(from, to)])
      expect(retried.result).toHaveLength(LOGS_PER_BLOCK)
    }
    expect(p.stats()).toMatchObject({ capRange: 2, capResults: 1 })
  })

  it('refuses a single dense block except in reth style, which returns all logs of one block', async () => {
    for (const style of ['reth', 'infura'] as const) {
      const p = await start({ getLogsCap: { maxResults: 5, style } })
      const one = await call(p.url, 'eth_getLogs', [logsFilter(mintBlocks[0]!, mintBlocks[0]!)])
      if (style === 'reth') expect(one.result).toHaveLength(LOGS_PER_BLOCK)
      else expect(one.error?.code).toBe(-32005)
    }
  })

  it('resolves "latest" before measuring the range', async () => {
    const p = await start({ getLogsCap: { maxBlocks: 2, style: 'alchemy' } })
    const answer = await call(p.url, 'eth_getLogs', [{ address: nft, fromBlock: hex(head - 1n) }])
    expect(answer.result).toHaveLength(2 * LOGS_PER_BLOCK)
    const refused = await call(p.url, 'eth_getLogs', [
      { address: nft, fromBlock: hex(head - 2n), toBlock: 'latest' },
    ])
    expect(suggestion(refused.error!)).toEqual([head - 2n, head - 1n])
  })
})

describe('determinism', () => {
  const faults: Partial<ProviderFaults> = {
    rateLimited: 0.15,
    badGateway: 0.1,
    dropConnection: 0.05,
    nonJson: 0.1,
    itemError: 0.2,
    lagging: 0.3,
    lagBlocks: 3,
    duplicateAndReorder: 0.3,
    omitLog: 0.4,
  }
  /** What a client sees of 25 requests sent one after another. */
  async function run(seed: number): Promise<string[]> {
    const p = await start({ seed, faults })
    const seen: string[] = []
    for (let i = 0; i < 25; i++) {
      const body = [
        { jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] },
        {
          jsonrpc: '2.0',
          id: 2,
          method: 'eth_getLogs',
          params: [logsFilter(mintBlocks[0]!, mintBlocks[2]!)],
        },
      ]
      try {
        const res = await post(p.url, body)
        seen.push(`${res.status} ${res.text}`)
      } catch {
        seen.push('dropped')
      }
    }
    await p.stop()
    return seen
  }

  it('meets the same faults in the same order under the same seed, and others under another', async () => {
    const [a, b, c] = [await run(42), await run(42), await run(43)]
    expect(a).toEqual(b)
    expect(c).not.toEqual(a)
    // The mix really happened.
    expect(a.some((s) => s.startsWith('429'))).toBe(true)
    expect(a.some((s) => s.startsWith('200 ['))).toBe(true)
  })
})

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
