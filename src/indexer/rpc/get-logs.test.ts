import pino from 'pino'
import type { Hex } from 'viem'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { startJsonRpcServer, type TestServer } from '../test/http-server'
import { createRpc } from './client'
import { AdaptiveRange, fetchLogs } from './get-logs'

/**
 * A JSON-RPC server with synthetic logs (3 per block) and a provider-style result cap;
 * `strays` blocks on each side of the range answered too (a broken range filter), answers
 * cut to their first `silentCap` logs without an error.
 */
async function fakeProvider(
  refuse: (from: number, to: number, calls: number) => object | null,
  strays = 0,
  silentCap = Number.POSITIVE_INFINITY,
) {
  let calls = 0
  const spans: number[] = []
  type Item = { id: number; params: [{ fromBlock: string; toBlock: string }] }
  const server = await startJsonRpcServer<Item | Item[]>((parsed, res) => {
    const answer = (r: Item) => {
      calls++
      const from = Number(r.params[0].fromBlock)
      const to = Number(r.params[0].toBlock)
      spans.push(to - from + 1)
      const error = refuse(from, to, calls)
      if (error && 'status' in error) return { status: error.status as number }
      if (error) return { jsonrpc: '2.0', id: r.id, error }
      const result = []
      for (let b = Math.max(0, from - strays); b <= to + strays; b++) {
        for (let i = 0; i < 3; i++) result.push(syntheticLog(b, i))
      }
      return { jsonrpc: '2.0', id: r.id, result: result.slice(0, silentCap) }
    }
    const out = Array.isArray(parsed) ? parsed.map(answer) : answer(parsed)
    const failed = (Array.isArray(out) ? out : [out]).find((o) => 'status' in o)
    const status = failed ? (failed.status as number) : 200
    res
      .writeHead(status, { 'content-type': 'application/json' })
      .end(status === 200 ? JSON.stringify(out) : '')
  })
  servers.push(server)
  return { url: server.origin, spans, calls: () => calls }
}

/** A synthetic block's hash: its number, padded. */
const blockHash = (b: number) => `0x${b.toString(16).padStart(64, '0')}`

/** Log `i` of block `b`. */
const syntheticLog = (b: number, i: number) => ({
  blockNumber: `0x${b.toString(16)}`,
  blockHash: blockHash(b),
  transactionHash: `0x${(b * 3 + i).toString(16).padStart(64, '0')}`,
  logIndex: `0x${i.toString(16)}`,
  address: '0x00000000000000000000000000000000000000aa',
  topics: [],
  data: '0x',
})

const servers: TestServer[] = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()))
})

const logger = pino({ level: 'silent' })
/** Every log of [from, to] from the provider at `url`, read with `range`. */
const readAll = (url: string, from: bigint, to: bigint, range: AdaptiveRange) =>
  fetchLogs(createRpc({ url, logger }), from, to, { topics: [], range, logger })
const blocksOf = (logs: Array<{ blockNumber: string; logIndex: string }>) =>
  logs.map((l) => `${Number(l.blockNumber)}:${Number(l.logIndex)}`)
const expected = (from: number, to: number) => {
  const out: string[] = []
  for (let b = from; b <= to; b++) for (let i = 0; i < 3; i++) out.push(`${b}:${i}`)
  return out
}

describe('fetchLogs', () => {
  it.each([
    [
      'Alchemy-style',
      {
        code: -32602,
        message: 'Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range',
      },
    ],
    ['Infura-style', { code: -32005, message: 'query returned more than 10000 results' }],
    ['range cap', { code: -32000, message: 'block range is too wide' }],
    ['generic', { code: -32000, message: 'exceed maximum block range: 50' }],
  ])('shrinks the range on %s refusals and still returns every log once, in order', async (_name, error) => {
    const provider = await fakeProvider((from, to) => (to - from + 1 > 37 ? error : null))
    const range = new AdaptiveRange(1000n)
    const logs = await readAll(provider.url, 0n, 499n, range)
    expect(blocksOf(logs)).toEqual(expected(0, 499))
    expect(range.size).toBeLessThanOrEqual(37n)
  })

  it('uses the range a provider suggests', async () => {
    const provider = await fakeProvider((from, to) =>
      to - from + 1 > 20
        ? {
            code: -32005,
            message: `query returned more than 10000 results. Try with this block range [0x${from.toString(16)}, 0x${(from + 19).toString(16)}].`,
          }
        : null,
    )
    const range = new AdaptiveRange(1000n)
    const logs = await readAll(provider.url, 0n, 199n, range)
    expect(blocksOf(logs)).toEqual(expected(0, 199))
    expect(provider.spans.slice(0, 2)).toEqual([200, 20])
  })

  it('grows the range again while requests are cheap', async () => {
    const provider = await fakeProvider(() => null)
    const range = new AdaptiveRange(10n, 1n, 160n)
    await readAll(provider.url, 0n, 999n, range)
    expect(provider.spans.slice(0, 5)).toEqual([10, 20, 40, 80, 160])
    expect(range.size).toBe(160n)
  })

  it('retries transient failures (HTTP 503, rate limits) with backoff', async () => {
    const provider = await fakeProvider((_f, _t, calls) =>
      calls === 1 ? { status: 503 } : calls === 2 ? { code: 429, message: 'Too Many Requests' } : null,
    )
    const logs = await readAll(provider.url, 5n, 9n, new AdaptiveRange(100n))
    expect(blocksOf(logs)).toEqual(expected(5, 9))
    expect(provider.calls()).toBe(3)
  })

  it('waits before retrying a failed range as long as before any other request: 250 ms at most first', async () => {
    const provider = await fakeProvider((_f, _t, calls) => (calls === 1 ? { status: 502 } : null))
    const waits: number[] = []
    const recording = pino(
      { level: 'warn' },
      { write: (line: string) => waits.push(JSON.parse(line).retryInMs) },
    )
    // The jitter at its largest: the wait is its ceiling.
    const random = vi.spyOn(Math, 'random').mockReturnValue(0.999_999)
    try {
      const logs = await fetchLogs(createRpc({ url: provider.url, logger }), 5n, 9n, {
        topics: [],
        range: new AdaptiveRange(100n),
        logger: recording,
      })
      expect(blocksOf(logs)).toEqual(expected(5, 9))
    } finally {
      random.mockRestore()
    }
    expect(waits).toEqual([250])
  })

  it('keeps the range on a rate limit that shares the range refusal code (-32005)', async () => {
    const provider = await fakeProvider((_f, _t, calls) =>
      calls <= 2 ? { code: -32005, message: 'request rate exceeded' } : null,
    )
    const range = new AdaptiveRange(100n)
    const logs = await readAll(provider.url, 0n, 99n, range)
    expect(blocksOf(logs)).toEqual(expected(0, 99))
    expect(provider.spans).toEqual([100, 100, 100])
    expect(range.size).toBeGreaterThanOrEqual(100n)
  })

  it('shrinks the range when an answer is larger than the client accepts (a node without result caps)', async () => {
    const provider = await fakeProvider(() => null)
    // About 260 bytes a log, three logs a block: 20,000 bytes hold some 25 blocks.
    const rpc = createRpc({ url: provider.url, logger, maxBodyBytes: 20_000 })
    const range = new AdaptiveRange(1000n)
    const logs = await fetchLogs(rpc, 0n, 199n, { topics: [], range, logger })
    expect(blocksOf(logs)).toEqual(expected(0, 199))
    // Halved at each refusal, never asked again at a span that was too large.
    expect(provider.spans.slice(0, 4)).toEqual([200, 100, 50, 25])
    expect(range.size).toBeLessThanOrEqual(25n)
    expect(rpc.pool.endpoints[0]!.faults.too_large).toBeGreaterThan(0)
    // Too large says nothing about the endpoint's health: its error rate is untouched.
    expect(rpc.pool.endpoints[0]!.errorRate).toBe(0)
  })

  it('reads again in smaller ranges an answer cut at a silent result cap', async () => {
    const provider = await fakeProvider(() => null, 0, 100)
    const range = new AdaptiveRange(100n, 1n, 100n)
    const logs = await readAll(provider.url, 0n, 199n, range)
    expect(blocksOf(logs)).toEqual(expected(0, 199))
    expect(range.size).toBeLessThan(34n)
  })

  it('leaves out logs of blocks outside the range asked for (a broken range filter)', async () => {
    const provider = await fakeProvider(() => null, 2)
    const logs = await readAll(provider.url, 10n, 59n, new AdaptiveRange(7n, 7n, 7n))
    expect(blocksOf(logs)).toEqual(expected(10, 59))
  })

  it('leaves out logs of other blocks than the one asked for by hash', async () => {
    const server = await startJsonRpcServer<{ id: number }>(({ id }, res) =>
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ jsonrpc: '2.0', id, result: [7, 8, 9].map((b) => syntheticLog(b, 0)) })),
    )
    servers.push(server)
    const rpc = createRpc({ url: server.origin, logger })
    const logs = await rpc.getLogs({ blockHash: blockHash(8).toUpperCase().replace('0X', '0x') as Hex }, [])
    expect(blocksOf(logs)).toEqual(['8:0'])
  })

  describe('a range answered short near the head, without an error', () => {
    /**
     * A chain of blocks 0..HEAD with 3 logs each (none in `empty`) behind a load balancer whose
     * log queries by range go to a node `behind` blocks back: it answers up to its own head.
     * Blocks and logs by hash come from current nodes.
     */
    const HEAD = 500
    async function laggingLogNode(
      behind: number,
      empty: number[] = [],
      options: {
        /** Blocks holding one log. */
        single?: number[]
        /** Range answers cut at the node behind before the others answer in full (default: all). */
        shortAnswers?: number
        /** Every answer by hash leaves one log out (a block of one log comes back empty). */
        omitByHash?: boolean
        /** Headers carry a logsBloom: naming a log where the block holds one, and in `falsePositive` too. */
        bloom?: boolean
        falsePositive?: number[]
      } = {},
    ) {
      const logsOf = (b: number) =>
        empty.includes(b)
          ? []
          : [0, 1, 2].slice(0, options.single?.includes(b) ? 1 : 3).map((i) => syntheticLog(b, i))
      const bloomOf = (b: number) =>
        `0x${'00'.repeat(255)}${logsOf(b).length > 0 || options.falsePositive?.includes(b) ? '01' : '00'}`
      let rangeAnswers = 0
      const methods: string[] = []
      type Item = { id: number; method: string; params: [unknown, ...unknown[]] }
      const server = await startJsonRpcServer<Item | Item[]>((parsed, res) => {
        const answer = ({ id, method, params }: Item) => {
          methods.push(method)
          if (method === 'eth_getBlockByNumber') {
            const n = Number(params[0])
            const result = {
              number: `0x${n.toString(16)}`,
              hash: blockHash(n),
              parentHash: blockHash(n - 1),
              timestamp: '0x1',
              ...(options.bloom ? { logsBloom: bloomOf(n) } : {}),
            }
            return { jsonrpc: '2.0', id, result: n <= HEAD ? result : null }
          }
          const filter = params[0] as { fromBlock?: string; toBlock?: string; blockHash?: string }
          if (filter.blockHash)
            return {
              jsonrpc: '2.0',
              id,
              result: logsOf(Number(filter.blockHash)).slice(options.omitByHash ? 1 : 0),
            }
          const short = ++rangeAnswers <= (options.shortAnswers ?? Number.POSITIVE_INFINITY)
          const result = []
          for (
            let b = Number(filter.fromBlock);
            b <= Math.min(Number(filter.toBlock), short ? HEAD - behind : HEAD);
            b++
          )
            result.push(...logsOf(b))
          return { jsonrpc: '2.0', id, result }
        }
        const out = Array.isArray(parsed) ? parsed.map(answer) : answer(parsed)
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(out))
      })
      servers.push(server)
      const rpc = createRpc({ url: server.origin, logger })
      // The head the sync loop heard and took as served.
      rpc.pool.endpoints[0]!.observeHead(BigInt(HEAD))
      rpc.pool.endpoints[0]!.takeServedHead(BigInt(HEAD))
      const read = (from: number, to: number) =>
        fetchLogs(rpc, BigInt(from), BigInt(to), { topics: [], range: new AdaptiveRange(1000n), logger })
      return { read, methods }
    }
    const count = (methods: string[], method: string) => methods.filter((m) => m === method).length

    it("reads the blocks after the answer's last log by hash, and gets every log", async () => {
      const node = await laggingLogNode(5)
      expect(blocksOf(await node.read(480, 498))).toEqual(expected(480, 498))
      // One range read, then the three blocks it left out: a header and the logs by hash each.
      expect(count(node.methods, 'eth_getLogs')).toBe(4)
      expect(count(node.methods, 'eth_getBlockByNumber')).toBe(3)
    })

    it('reads every block by hash when the answer is empty, and finds empty blocks empty', async () => {
      const node = await laggingLogNode(10, [496, 498])
      const logs = await node.read(493, 498)
      expect(blocksOf(logs)).toEqual([...expected(493, 495), ...expected(497, 497)])
      expect(count(node.methods, 'eth_getBlockByNumber')).toBe(6)
    })

    it("reads the range again when a block's read by hash comes back empty while its bloom names a log", async () => {
      // Block 498 holds one log, which every answer by hash leaves out; the first range answer stops at 495.
      const node = await laggingLogNode(5, [496, 497], {
        single: [498],
        shortAnswers: 1,
        omitByHash: true,
        bloom: true,
      })
      expect(blocksOf(await node.read(480, 498))).toEqual([...expected(480, 495), '498:0'])
      // The short answer, its three blocks by hash (498's seven times: 0.1 … 0.6 s apart), the range again.
      expect(count(node.methods, 'eth_getLogs')).toBe(1 + 2 + 7 + 1)
    })

    it("takes a block's empty answers by hash when the range, read again, still leaves it out (a bloom's false positive)", async () => {
      const node = await laggingLogNode(5, [496, 497, 498], { bloom: true, falsePositive: [498] })
      expect(blocksOf(await node.read(480, 498))).toEqual(expected(480, 495))
      // The range read four times, each answer followed by its blocks by hash.
      expect(count(node.methods, 'eth_getLogs')).toBe(4 * (1 + 2 + 7))
    }, 20_000)

    it('reads nothing more for an answer with logs up to its last block, or far below the head', async () => {
      const node = await laggingLogNode(0, [])
      expect(blocksOf(await node.read(480, 498))).toEqual(expected(480, 498))
      // Further below the head than a node's lag is looked for (LAG_MARGIN, 64 blocks): taken as answered.
      const far = await laggingLogNode(80)
      expect(blocksOf(await far.read(300, 400))).toEqual(expected(300, 400))
      expect([...node.methods, ...far.methods]).toEqual(['eth_getLogs', 'eth_getLogs'])
    })
  })

  it('gives up on errors that retrying cannot fix', async () => {
    const provider = await fakeProvider(() => ({
      code: -32602,
      message: 'invalid argument 0: hex string has leading zero',
    }))
    await expect(readAll(provider.url, 0n, 9n, new AdaptiveRange(100n))).rejects.toThrow(/eth_getLogs failed/)
  })
})
