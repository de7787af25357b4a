/**
 * A JSON-RPC proxy in front of a node (anvil) that behaves like a hosted
 * provider: rate limits with Retry-After, load-balancer error pages, dropped
 * and hung connections, non-JSON bodies, per-item errors inside batches,
 * load-balanced nodes a few blocks behind, eth_getLogs answers with
 * duplicated, reordered or silently missing logs, with logs of blocks not
 * asked for or with a log kept under a replaced block's hash, and eth_getLogs
 * caps refused in the wording of each provider, and a node whose log index
 * lacks the same logs on every read (brokenLogIndex).
 *
 * Deterministic under a seed: every HTTP request takes the next seed from a
 * mulberry32 stream in arrival order and draws all its decisions from its own
 * generator, so a given sequence of requests meets the same faults on every
 * run. Every injected fault is counted (stats()).
 *
 * Fast on purpose (tests and benchmarks run through it): node:http on both
 * sides with keep-alive to the upstream, eth_getLogs answers passed through
 * as bytes (their logs counted, not parsed) unless a fault or a cap needs
 * their content.
 */
import http from 'node:http'
import https from 'node:https'
import type { AddressInfo } from 'node:net'
import { mulberry32 } from '@/lib/random'

export interface ProviderFaults {
  /**
   * Probability (0..1) per HTTP request of an HTTP 429 with Retry-After, its body a JSON-RPC error
   * or plain text; defaults 0 (off), as all faults.
   */
  rateLimited: number
  /** Per HTTP request: HTTP 502 with a load balancer's HTML page. */
  badGateway: number
  /** Per HTTP request: the socket is destroyed without an answer. */
  dropConnection: number
  /** Per HTTP request: never answered (until the client gives up or the proxy stops). */
  hang: number
  /** Per HTTP request: HTTP 200 with a body that is not JSON. */
  nonJson: number
  /** Per JSON-RPC item (batch or single): an error object for that item only; the others answer normally. */
  itemError: number
  /**
   * Per HTTP request: served by a load-balanced node 1..lagBlocks behind the head. It answers
   * eth_blockNumber with its own head; "latest" as its head; null for blocks, block receipts,
   * transactions and receipts above it; "header not found" for eth_getLogs whose toBlock is
   * above it and for state reads (eth_call, eth_getCode, …) at such a block; "unknown block"
   * for eth_getLogs by the hash of such a block. All items of a batch are served by the same node.
   */
  lagging: number
  lagBlocks: number
  /**
   * Per eth_getLogs request by block range: served by a node `lagBlocks` behind the head that
   * answers a range reaching past its head with the logs up to its head and no error (older
   * geth's filter code, clients built on it, nanoreth), as a provider that sends log queries to
   * a pool of nodes behind its others does. Its other answers, and the head, stay current.
   */
  shortLogs: number
  /** Per eth_getLogs answer with >= 2 logs: some logs duplicated and the order shuffled. */
  duplicateAndReorder: number
  /** Per eth_getLogs answer with >= 1 log (by range or by blockHash): exactly one log silently left out. */
  omitLog: number
  /** The same, for answers to eth_getLogs by blockHash only (how a node following the head reads). */
  omitLogByHash: number
  /**
   * Per eth_getLogs answer by block range: the last log of the next block with logs (within 16
   * blocks after the range) added, as a node whose range filter is broken answers.
   */
  strayLog: number
  /**
   * Per eth_getLogs answer by block range: one log of a block with other logs in the answer is
   * given the hash of a block a reorganisation replaced (`0x5a1e…`), and keeps it in every later
   * answer, as a node's stale cache does, until this fault is set to 0.
   */
  staleLog: number
}

export type ProviderStyle =
  | 'alchemy'
  | 'infura'
  | 'quicknode'
  | 'ankr'
  | 'cloudflare'
  | 'geth'
  | 'erigon'
  | 'reth'

export interface ProviderProxyOptions {
  /** The node's HTTP JSON-RPC URL. */
  upstream: string
  /** 0 or undefined: an ephemeral port. */
  port?: number
  seed?: number
  faults?: Partial<ProviderFaults>
  /** Retry-After of rate-limited answers, in whole seconds; default 1. */
  retryAfterSeconds?: number
  /** Added latency per HTTP request, uniform in [min, max] ms. */
  latencyMs?: [number, number]
  /**
   * eth_getLogs caps: a range of more than maxBlocks blocks, or an answer of more than maxResults
   * logs, is refused in the style of the given provider (with a range that fits, where the
   * provider suggests one).
   */
  getLogsCap?: { maxBlocks?: number; maxResults?: number; style: ProviderStyle }
  /**
   * eth_getLogs answers of more logs than this are cut to their first `silentResultCap` logs,
   * without an error, as some providers and relays do.
   */
  silentResultCap?: number
  /** Answer eth_chainId (and net_version) with this instead of the upstream's: a misconfigured endpoint. */
  chainId?: number
  /** Refuse eth_getBlockReceipts with -32601, as providers without it do. */
  noBlockReceipts?: boolean
  /**
   * A lagging node answers eth_getLogs by the hash of a block it does not have with no logs
   * instead of "unknown block", as Besu, reth before 2024, Frontier chains and anvil did.
   */
  emptyForUnknownHash?: boolean
  /**
   * A node whose log index is broken (a bad bloom or index migration): every eth_getLogs answer,
   * by range or by block hash, leaves out the same share (0..1) of logs, chosen by each log's
   * identity, so that reads agree with each other, and proxies given the same share share the
   * index. Blocks, headers and eth_getBlockReceipts stay honest. Counted as `brokenLogIndex`.
   */
  brokenLogIndex?: number
}

export interface ProviderProxy {
  url: string
  /**
   * Counters: `requests` (HTTP), `items` (JSON-RPC), one per fault kind injected (the
   * ProviderFaults names, plus capRange, capResults, silentCut, blockReceiptsRefused, chainIdOverride,
   * upstreamErrors), `method.<name>` per JSON-RPC method and `peakInFlight` (the most HTTP
   * requests open at once).
   */
  stats(): Record<string, number>
  /** Changes fault rates at run time; unnamed kinds keep their rate. */
  setFaults(faults: Partial<ProviderFaults>): void
  /** Logs left out of eth_getLogs answers so far, as `${transactionHash}:${logIndex}` (lower-case hash, decimal index). */
  omitted(): string[]
  /** Closes the server and ends open (and hung) requests. */
  stop(): Promise<void>
}

export interface JsonRpcError {
  code: number
  message: string
  data?: unknown
}

/** What a cap refusal is built from: the request's resolved range and a range that fits the cap. */
export interface CapContext {
  from: bigint
  to: bigint
  maxBlocks: number
  maxResults: number
  /**
   * A range from `from` that fits: maxBlocks wide after a range refusal; after a result refusal,
   * up to the last block that keeps the answer within maxResults (by the logs the node returned).
   */
  suggestion: { from: bigint; to: bigint }
}

export interface CapRefusal extends JsonRpcError {
  /** HTTP status when the refusal answers a single (non-batch) request; default 200. */
  httpStatus?: number
}

export interface ProviderStyleSpec {
  /** A range wider than maxBlocks. */
  range(ctx: CapContext): CapRefusal
  /** An answer with more logs than maxResults. */
  results(ctx: CapContext): CapRefusal
  /** Which refusals carry the suggested range (in the message, or in `data` for Infura). */
  suggests: { range: boolean; results: boolean }
  /** A one-block range is never refused for its size (reth returns all logs of a single block). */
  singleBlockExempt: boolean
}

const hex = (n: bigint | number) => `0x${n.toString(16)}`
/** 2000 -> "2K", as Alchemy writes its limits. */
const kilo = (n: number) => (n % 1000 === 0 ? `${n / 1000}K` : String(n))
const grouped = (n: number) => n.toLocaleString('en-US')
const span = (ctx: CapContext) => ctx.to - ctx.from + 1n

// geth's answer to a query that outlives its RPC time-out: nodes behind Cloudflare's and
// QuickNode's gateways answer an oversized log query with it (neither documents a result cap).
const gethTimeout = (): CapRefusal => ({ code: -32002, message: 'request timed out' })

/**
 * Each provider's own refusals, as they send them. Alchemy: the free tier's block-range message
 * and the paid tier's response-size message; Infura: the result cap with its suggestion in the
 * message and in `data` (upper-case hex digits), and the live block-range check; QuickNode: the
 * range cap, HTTP 413 for a single request; Ankr: "block range is too wide" (-32600) and its
 * nodes' result cap; Cloudflare's gateway: -32047 with "Max range"; geth: --rpc.rangelimit and
 * its RPC time-out; erigon: --rpc.blockrange.limit and --rpc.logs.maxresults; reth: its
 * max-blocks and max-logs filter limits, the latter with a retry range.
 */
export const PROVIDER_STYLES: Record<ProviderStyle, ProviderStyleSpec> = {
  alchemy: {
    range: (c) => ({
      code: -32600,
      message: `You can make eth_getLogs requests with up to a ${c.maxBlocks} block range. Based on your parameters, this block range should work: [${hex(c.suggestion.from)}, ${hex(c.suggestion.to)}]`,
    }),
    results: (c) => ({
      code: -32602,
      message: `Log response size exceeded. You can make eth_getLogs requests with up to a ${kilo(c.maxBlocks)} block range and no limit on the response size, or you can request any block range with a cap of ${kilo(c.maxResults)} logs in the response. Based on your parameters and the response size limit, this block range should work: [${hex(c.suggestion.from)}, ${hex(c.suggestion.to)}]`,
    }),
    suggests: { range: true, results: true },
    singleBlockExempt: false,
  },
  infura: {
    range: (c) => ({ code: -32602, message: `range ${span(c)} exceeds limit of ${c.maxBlocks}` }),
    results: (c) => {
      const from = `0x${c.suggestion.from.toString(16).toUpperCase()}`
      const to = `0x${c.suggestion.to.toString(16).toUpperCase()}`
      return {
        code: -32005,
        message: `query returned more than ${c.maxResults} results. Try with this block range [${from}, ${to}].`,
        data: { from, limit: c.maxResults, to },
      }
    },
    suggests: { range: false, results: true },
    singleBlockExempt: false,
  },
  quicknode: {
    range: (c) => ({
      code: -32614,
      message: `eth_getLogs is limited to a ${grouped(c.maxBlocks)} range`,
      httpStatus: 413,
    }),
    results: gethTimeout,
    suggests: { range: false, results: false },
    singleBlockExempt: false,
  },
  ankr: {
    range: () => ({ code: -32600, message: 'block range is too wide' }),
    results: (c) => ({
      code: -32602,
      message: `query exceeds max results ${c.maxResults}, retry with the range ${c.suggestion.from}-${c.suggestion.to}`,
    }),
    suggests: { range: false, results: true },
    singleBlockExempt: false,
  },
  cloudflare: {
    range: (c) => ({
      code: -32047,
      message: `Invalid eth_getLogs request. 'fromBlock'-'toBlock' range too large. Max range: ${c.maxBlocks}`,
    }),
    results: gethTimeout,
    suggests: { range: false, results: false },
    singleBlockExempt: false,
  },
  geth: {
    range: (c) => ({ code: -32602, message: `exceed maximum block range ${c.maxBlocks}` }),
    results: gethTimeout,
    suggests: { range: false, results: false },
    singleBlockExempt: false,
  },
  erigon: {
    range: (c) => ({
      code: -32602,
      message: `query block range exceeds server limit, narrow your filter: ${c.maxBlocks}`,
    }),
    results: (c) => ({
      code: -32602,
      message: `query returns too many logs, narrow your filter: ${c.maxResults}`,
    }),
    suggests: { range: false, results: false },
    singleBlockExempt: false,
  },
  reth: {
    range: (c) => ({ code: -32602, message: `query exceeds max block range ${c.maxBlocks}` }),
    results: (c) => ({
      code: -32602,
      message: `query exceeds max results ${c.maxResults}, retry with the range ${c.suggestion.from}-${c.suggestion.to}`,
    }),
    suggests: { range: false, results: true },
    singleBlockExempt: true,
  },
}

const ITEM_ERRORS: JsonRpcError[] = [
  { code: -32603, message: 'internal error' },
  { code: -32005, message: 'request rate exceeded' },
]
const BAD_GATEWAY_HTML =
  '<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n'
// Envoy's answer when its upstream resets, as some gateways pass it on with status 200.
const NON_JSON_BODY =
  'upstream connect error or disconnect/reset before headers. reset reason: connection termination'
const RATE_LIMITED = { jsonrpc: '2.0', error: { code: 429, message: 'Too Many Requests' } }
const HEADER_NOT_FOUND: JsonRpcError = { code: -32000, message: 'header not found' }
const UNKNOWN_BLOCK: JsonRpcError = { code: -32000, message: 'unknown block' }
const HEAD_TAGS = new Set(['latest', 'pending'])
/** Position of the block parameter of state reads, which a lagging node answers at its own head. */
const STATE_BLOCK_PARAM: Record<string, number> = {
  eth_call: 1,
  eth_getCode: 1,
  eth_getBalance: 1,
  eth_getTransactionCount: 1,
  eth_getStorageAt: 2,
}
/** Every fault kind the proxy injects (the counters of stats() carry these names). */
export const FAULT_KINDS = [
  'rateLimited',
  'badGateway',
  'dropConnection',
  'hang',
  'nonJson',
  'itemError',
  'lagging',
  'shortLogs',
  'duplicateAndReorder',
  'omitLog',
  'strayLog',
  'staleLog',
  'brokenLogIndex',
] as const

type RpcRequest = { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: unknown }
type Result = { result: unknown } | { error: JsonRpcError }
type Block = { number?: string } | null

/** How one item is answered. */
type Plan =
  | { kind: 'local'; answer: Result; httpStatus?: number }
  /** Sent with the other `call` items in one upstream batch; `check` may replace the node's result. */
  | { kind: 'call'; method: string; params: unknown[]; check?: (result: unknown) => Result | undefined }
  /** eth_getLogs, sent alone (with the client's id) so its answer can pass through as text. */
  | {
      kind: 'logs'
      id: unknown
      filter: Record<string, unknown>
      range?: { from: bigint; to: bigint }
      /** Where the left-out log is taken from (a fraction of the answer's length), when this fault is drawn. */
      omit?: number
      /** Seed of the duplication and shuffle, when this fault is drawn. */
      dup?: number
      /** Blocks a stray log is taken from (after the range, up to the node's head), when this fault is drawn. */
      stray?: { from: bigint; to: bigint }
      /** Whether a log of this answer becomes stale (staleLog), when this fault is drawn. */
      stale?: boolean
    }

/** Every fault off: a perfect provider. */
export const NO_FAULTS: ProviderFaults = {
  rateLimited: 0,
  badGateway: 0,
  dropConnection: 0,
  hang: 0,
  nonJson: 0,
  itemError: 0,
  lagging: 0,
  lagBlocks: 3,
  shortLogs: 0,
  duplicateAndReorder: 0,
  omitLog: 0,
  omitLogByHash: 0,
  strayLog: 0,
  staleLog: 0,
}

export async function startProviderProxy(options: ProviderProxyOptions): Promise<ProviderProxy> {
  const upstreamUrl = new URL(options.upstream)
  const client = upstreamUrl.protocol === 'https:' ? https : http
  const agent = new client.Agent({ keepAlive: true, maxSockets: 64 })
  let faults: ProviderFaults = { ...NO_FAULTS, ...options.faults }
  const retryAfter = String(Math.max(0, Math.round(options.retryAfterSeconds ?? 1)))
  const cap = options.getLogsCap
  const style = cap ? PROVIDER_STYLES[cap.style] : undefined
  const requestSeeds = mulberry32(options.seed ?? 1)
  const counters = new Map<string, number>()
  const count = (key: string, by = 1) => counters.set(key, (counters.get(key) ?? 0) + by)
  const omitted: string[] = []
  /** Logs the broken log index lacks (brokenLogIndex), once found in an answer. */
  const unindexed = new Set<string>()
  /** Logs (`${transactionHash}:${logIndex}`) the node's stale cache answers with another block hash. */
  const staleHashes = new Map<string, string>()
  const hung = new Set<http.ServerResponse>()

  /** One POST to the node; resolves with its body. */
  const upstream = (body: string): Promise<Buffer> =>
    new Promise((resolve, reject) => {
      const req = client.request(
        upstreamUrl,
        {
          method: 'POST',
          agent,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          const chunks: Buffer[] = []
          res.on('data', (chunk: Buffer) => chunks.push(chunk))
          res.on('end', () => resolve(Buffer.concat(chunks)))
          res.on('error', reject)
        },
      )
      req.on('error', reject)
      req.end(body)
    })

  const upstreamBatch = async (calls: { method: string; params: unknown[] }[]): Promise<Result[]> => {
    const text = await upstream(
      JSON.stringify(calls.map((c, id) => ({ jsonrpc: '2.0', id, method: c.method, params: c.params }))),
    )
    const parsed = JSON.parse(text.toString('utf8')) as unknown
    const byId = new Map<unknown, Result>()
    if (Array.isArray(parsed)) for (const a of parsed) byId.set(a?.id, a)
    return calls.map((_, id) => {
      const answer = byId.get(id) ?? (Array.isArray(parsed) ? undefined : (parsed as Result))
      if (answer && 'error' in answer && answer.error) return { error: answer.error }
      if (answer && 'result' in answer) return { result: answer.result }
      return { error: { code: -32603, message: 'no answer from the node' } }
    })
  }

  let inFlight = 0
  const server = http.createServer((req, res) => {
    inFlight++
    if (inFlight > (counters.get('peakInFlight') ?? 0)) counters.set('peakInFlight', inFlight)
    res.once('close', () => inFlight--)
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      handle(Buffer.concat(chunks).toString('utf8'), req, res).catch((err) => {
        count('upstreamErrors')
        if (!res.headersSent && !res.destroyed) {
          res.writeHead(502, { 'content-type': 'text/plain' })
          res.end(`upstream error: ${err instanceof Error ? err.message : String(err)}`)
        }
      })
    })
  })
  // Longer than clients' idle time-outs, so a reused keep-alive socket is never closed under a request.
  server.keepAliveTimeout = 30_000

  async function handle(body: string, req: http.IncomingMessage, res: http.ServerResponse) {
    count('requests')
    const rng = mulberry32(Math.floor(requestSeeds() * 2 ** 32))
    const f = faults
    const latency = options.latencyMs
    if (latency) await sleep(latency[0] + rng() * (latency[1] - latency[0]))
    if (res.destroyed) return

    if (rng() < f.rateLimited) {
      count('rateLimited')
      const json = rng() < 0.5
      res.writeHead(429, {
        'content-type': json ? 'application/json' : 'text/plain',
        'retry-after': retryAfter,
      })
      res.end(json ? JSON.stringify(RATE_LIMITED) : 'Too Many Requests\n')
      return
    }
    if (rng() < f.badGateway) {
      count('badGateway')
      res.writeHead(502, { 'content-type': 'text/html' })
      res.end(BAD_GATEWAY_HTML)
      return
    }
    if (rng() < f.dropConnection) {
      count('dropConnection')
      req.socket.destroy()
      return
    }
    if (rng() < f.hang) {
      count('hang')
      hung.add(res)
      res.once('close', () => hung.delete(res))
      return
    }
    if (rng() < f.nonJson) {
      count('nonJson')
      res.writeHead(200, { 'content-type': 'text/plain' })
      res.end(NON_JSON_BODY)
      return
    }

    let parsed: unknown
    try {
      parsed = JSON.parse(body)
    } catch {
      return send(
        res,
        200,
        JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'parse error' } }),
      )
    }
    const isBatch = Array.isArray(parsed)
    const items = (isBatch ? parsed : [parsed]) as RpcRequest[]
    if (items.length === 0) {
      return send(
        res,
        200,
        JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'empty batch' } }),
      )
    }

    // The node serving this request: a lagging one is behind by 1..lagBlocks.
    const lag = rng() < f.lagging ? 1 + Math.floor(rng() * Math.max(1, f.lagBlocks)) : 0
    if (lag) count('lagging')

    // What the plans need from the node first: its head, and the numbers of blocks named by hash.
    const wantsHead =
      lag > 0 ||
      ((f.shortLogs > 0 || f.strayLog > 0) && items.some((it) => it?.method === 'eth_getLogs')) ||
      (cap !== undefined &&
        items.some(
          (it) => it?.method === 'eth_getLogs' && usesHeadTag(firstParam(it) as Record<string, unknown>),
        ))
    const hashes = lag
      ? [
          ...new Set(
            items
              .filter((it) => it?.method === 'eth_getLogs')
              .map((it) => (firstParam(it) as { blockHash?: unknown } | undefined)?.blockHash)
              .filter((h): h is string => typeof h === 'string'),
          ),
        ]
      : []
    let nodeHead = 0n
    const numberOfHash = new Map<string, bigint | null>()
    if (wantsHead || hashes.length > 0) {
      const lookups = await upstreamBatch([
        { method: 'eth_blockNumber', params: [] },
        ...hashes.map((h) => ({ method: 'eth_getBlockByHash', params: [h, false] })),
      ])
      const head = lookups[0]!
      if ('error' in head) throw new Error(`eth_blockNumber: ${head.error.message}`)
      nodeHead = BigInt(head.result as string) - BigInt(lag)
      if (nodeHead < 0n) nodeHead = 0n
      hashes.forEach((h, i) => {
        const block = lookups[i + 1]!
        const number = 'result' in block ? (block.result as Block)?.number : undefined
        numberOfHash.set(h, number ? BigInt(number) : null)
      })
    }

    const plans = items.map((item) => plan(item, f, rng, lag, nodeHead, numberOfHash))
    const answers = await answer(plans)

    // Notifications (no id) get no answer.
    const out: Buffer[] = []
    let status = 200
    items.forEach((item, i) => {
      if (!item || typeof item !== 'object' || !('id' in item)) return
      const a = answers[i]!
      out.push(Buffer.isBuffer(a) ? a : Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: item.id, ...a })))
      const p = plans[i]!
      if (!isBatch && p.kind === 'local' && p.httpStatus) status = p.httpStatus
    })
    send(res, status, isBatch ? joinArray(out) : (out[0] ?? Buffer.alloc(0)))
  }

  function plan(
    item: RpcRequest,
    f: ProviderFaults,
    rng: () => number,
    lag: number,
    nodeHead: bigint,
    numberOfHash: Map<string, bigint | null>,
  ): Plan {
    count('items')
    const method = typeof item?.method === 'string' ? item.method : ''
    count(`method.${method}`)
    // Drawn for every item, so the draws of later items do not depend on this one's method.
    const failItem = rng() < f.itemError
    const which = rng()
    const [omitDraw, omitAt] = [rng(), rng()]
    const [dupDraw, dupSeed] = [rng(), rng()]
    const omit = omitDraw < f.omitLog ? omitAt : undefined
    const dup = dupDraw < f.duplicateAndReorder ? Math.floor(dupSeed * 2 ** 32) : undefined
    const strayDrawn = rng() < f.strayLog
    // Drawn only while the fault is on: the draws of every other fault stay those of the same seed.
    const short = f.shortLogs > 0 && rng() < f.shortLogs
    // `which` only picks the kind of an item error: free to decide this without a draw more,
    // so the other faults' draws stay those of the same seed.
    const stale = !failItem && which < f.staleLog ? true : undefined
    if (failItem) {
      count('itemError')
      return { kind: 'local', answer: { error: ITEM_ERRORS[Math.floor(which * ITEM_ERRORS.length)]! } }
    }
    if (!method) return { kind: 'local', answer: { error: { code: -32600, message: 'invalid request' } } }
    const params = Array.isArray(item.params) ? [...item.params] : []
    const local = (result: unknown): Plan => ({ kind: 'local', answer: { result } })
    const failed = (error: JsonRpcError, httpStatus?: number): Plan => ({
      kind: 'local',
      answer: { error },
      httpStatus,
    })

    if ((method === 'eth_chainId' || method === 'net_version') && options.chainId !== undefined) {
      count('chainIdOverride')
      return local(method === 'eth_chainId' ? hex(options.chainId) : String(options.chainId))
    }
    if (method === 'eth_getBlockReceipts' && options.noBlockReceipts) {
      count('blockReceiptsRefused')
      return failed({
        code: -32601,
        message: 'the method eth_getBlockReceipts does not exist/is not available',
      })
    }

    if (method === 'eth_getLogs') {
      const filter = { ...((params[0] ?? {}) as Record<string, unknown>) }
      if (typeof filter.blockHash === 'string') {
        const number = numberOfHash.get(filter.blockHash)
        if (lag && number !== undefined && number !== null && number > nodeHead)
          return options.emptyForUnknownHash ? local([]) : failed(UNKNOWN_BLOCK)
        const omitByHash = omitDraw < Math.max(f.omitLog, f.omitLogByHash) ? omitAt : undefined
        return { kind: 'logs', id: item.id, filter, omit: omitByHash, dup }
      }
      // Tags are resolved against the serving node's head, and sent as numbers so the range stays fixed.
      const from = resolveBound(filter.fromBlock, nodeHead)
      let to = resolveBound(filter.toBlock, nodeHead)
      const shortHead = nodeHead - BigInt(f.lagBlocks)
      if (short && !lag && from !== undefined && to !== undefined && to > shortHead) {
        count('shortLogs')
        if (from > shortHead) return local([])
        to = shortHead
        filter.toBlock = hex(to)
      }
      const stray =
        strayDrawn && to !== undefined && to < nodeHead
          ? { from: to + 1n, to: to + 16n < nodeHead ? to + 16n : nodeHead }
          : undefined
      if (!lag && !cap) return { kind: 'logs', id: item.id, filter, omit, dup, stray, stale }
      if (from === undefined || to === undefined) return { kind: 'logs', id: item.id, filter, omit, dup }
      if (lag) {
        if (to > nodeHead) return failed(HEADER_NOT_FOUND)
        if (from > nodeHead) return local([])
      }
      filter.fromBlock = hex(from)
      filter.toBlock = hex(to)
      if (cap?.maxBlocks !== undefined && to >= from && to - from + 1n > BigInt(cap.maxBlocks)) {
        if (!(style!.singleBlockExempt && from === to)) {
          count('capRange')
          const ctx = capContext(from, to, from + BigInt(cap.maxBlocks) - 1n)
          const refusal = style!.range(ctx)
          return failed(errorOf(refusal), refusal.httpStatus)
        }
      }
      return { kind: 'logs', id: item.id, filter, range: { from, to }, omit, dup, stray, stale }
    }

    if (!lag) return { kind: 'call', method, params }

    // A lagging node: its own head, nothing above it.
    const aboveHead = (result: unknown): Result | undefined => {
      const number =
        (result as { blockNumber?: string; number?: string } | null)?.blockNumber ??
        (result as { number?: string } | null)?.number
      return number !== undefined && number !== null && BigInt(number) > nodeHead
        ? { result: null }
        : undefined
    }
    switch (method) {
      case 'eth_blockNumber':
        return local(hex(nodeHead))
      case 'eth_getBlockByNumber':
      case 'eth_getBlockReceipts': {
        const tag = params[0]
        if (typeof tag === 'string' && HEAD_TAGS.has(tag)) params[0] = hex(nodeHead)
        else if (isQuantity(tag) && BigInt(tag) > nodeHead) return local(null)
        const check =
          method === 'eth_getBlockByNumber'
            ? aboveHead
            : (r: unknown) => (Array.isArray(r) && r.length > 0 ? aboveHead(r[0]) : undefined)
        return { kind: 'call', method, params, check }
      }
      case 'eth_getBlockByHash':
      case 'eth_getTransactionReceipt':
      case 'eth_getTransactionByHash':
        return { kind: 'call', method, params, check: aboveHead }
    }
    const at = STATE_BLOCK_PARAM[method]
    if (at !== undefined) {
      const tag = params[at]
      const number =
        tag && typeof tag === 'object' ? (tag as { blockNumber?: unknown }).blockNumber : (tag ?? 'latest')
      if (typeof number === 'string' && HEAD_TAGS.has(number)) params[at] = hex(nodeHead)
      else if (isQuantity(number) && BigInt(number) > nodeHead) return failed(HEADER_NOT_FOUND)
    }
    return { kind: 'call', method, params }
  }

  function capContext(from: bigint, to: bigint, suggestedTo: bigint): CapContext {
    return {
      from,
      to,
      maxBlocks: cap?.maxBlocks ?? 2_000,
      maxResults: cap?.maxResults ?? 10_000,
      suggestion: { from, to: suggestedTo < to ? suggestedTo : to },
    }
  }

  /** Runs the plans: `call` items in one upstream batch, each eth_getLogs on its own. */
  async function answer(plans: Plan[]): Promise<(Buffer | Result)[]> {
    const out: (Buffer | Result)[] = new Array(plans.length)
    const calls: { i: number; plan: Extract<Plan, { kind: 'call' }> }[] = []
    const pending: Promise<void>[] = []
    plans.forEach((p, i) => {
      if (p.kind === 'local') out[i] = p.answer
      else if (p.kind === 'call') calls.push({ i, plan: p })
      else
        pending.push(
          getLogs(p).then((a) => {
            out[i] = a
          }),
        )
    })
    if (calls.length > 0) {
      pending.push(
        upstreamBatch(calls.map((c) => c.plan)).then((results) => {
          results.forEach((r, k) => {
            const { i, plan } = calls[k]!
            out[i] = ('result' in r && plan.check?.(r.result)) || r
          })
        }),
      )
    }
    await Promise.all(pending)
    return out
  }

  /** One eth_getLogs: passed through as bytes unless a fault or the result cap needs the logs. */
  async function getLogs(p: Extract<Plan, { kind: 'logs' }>): Promise<Buffer | Result> {
    const body = await upstream(
      JSON.stringify({ jsonrpc: '2.0', id: p.id ?? null, method: 'eth_getLogs', params: [p.filter] }),
    )
    const maxResults = cap?.maxResults
    const n = countLogs(body)
    const overCap =
      maxResults !== undefined &&
      n > maxResults &&
      !(style!.singleBlockExempt && (p.range ? p.range.from === p.range.to : true))
    const omit = p.omit !== undefined && n >= 1
    const dup = p.dup !== undefined && n >= 2
    const stray = p.stray ? await strayLog(p.filter, p.stray) : undefined
    const cut = options.silentResultCap !== undefined && n > options.silentResultCap
    const stale = typeof p.filter.blockHash !== 'string' && (p.stale || staleHashes.size > 0)
    const broken = (options.brokenLogIndex ?? 0) > 0 && n >= 1
    if (!overCap && !omit && !dup && !stray && !cut && !stale && !broken) return body

    const answer = JSON.parse(body.toString('utf8')) as { result?: RawLog[]; error?: JsonRpcError }
    if (!Array.isArray(answer.result)) return body
    let logs = answer.result
    if (broken) logs = withoutUnindexed(logs)
    if (cut) {
      count('silentCut')
      logs = logs.slice(0, options.silentResultCap)
    }
    if (overCap) {
      count('capResults')
      const from = p.range?.from ?? BigInt(logs[0]!.blockNumber)
      const to = p.range?.to ?? from
      const refusal = style!.results(capContext(from, to, fittingTo(logs, from, to, maxResults!)))
      return { error: errorOf(refusal) }
    }
    if (omit) {
      count('omitLog')
      const at = Math.floor(p.omit! * logs.length)
      const [gone] = logs.splice(at, 1)
      omitted.push(`${gone!.transactionHash.toLowerCase()}:${Number(BigInt(gone!.logIndex))}`)
    }
    if (dup) {
      count('duplicateAndReorder')
      logs = duplicateAndShuffle(logs, mulberry32(p.dup!))
    }
    if (stray) {
      count('strayLog')
      logs.push(stray)
    }
    if (stale) logs = withStaleHashes(logs, p.stale === true ? p.filter : undefined)
    return { result: logs }
  }

  /** The answer of the broken log index: the logs it lacks are left out, each recorded once. */
  function withoutUnindexed(logs: RawLog[]): RawLog[] {
    const kept = logs.filter((l) => {
      const key = `${l.transactionHash.toLowerCase()}:${Number(BigInt(l.logIndex))}`
      if (unitHash(key) >= options.brokenLogIndex!) return true
      if (!unindexed.has(key)) {
        unindexed.add(key)
        omitted.push(key)
      }
      return false
    })
    if (kept.length < logs.length) count('brokenLogIndex')
    return kept
  }

  /**
   * The stale cache's answer: logs it holds get their other block hash. `addFrom`: the answer's
   * filter, when one more log joins the cache — the second log of a block inside the range (not
   * an edge, whose header a client may read with the logs) with two in the answer, so that the
   * other keeps the block's hash.
   */
  function withStaleHashes(logs: RawLog[], addFrom?: Record<string, unknown>): RawLog[] {
    const key = (l: RawLog) => `${l.transactionHash.toLowerCase()}:${Number(BigInt(l.logIndex))}`
    const [from, to] = [addFrom?.fromBlock, addFrom?.toBlock]
    // The rate now, not the one drawn when the request came in: an answer still in flight when
    // the fault is turned off must not stale the cache again.
    if (faults.staleLog > 0 && isQuantity(from) && isQuantity(to)) {
      const inside = (l: RawLog) => BigInt(l.blockNumber) > BigInt(from) && BigInt(l.blockNumber) < BigInt(to)
      const i = logs.findIndex((l, j) => j > 0 && logs[j - 1]!.blockNumber === l.blockNumber && inside(l))
      if (i > 0) staleHashes.set(key(logs[i]!), `0x5a1e${logs[i]!.blockHash.slice(6)}`)
    }
    let rewritten = false
    const out = logs.map((l) => {
      const hash = staleHashes.get(key(l))
      if (hash === undefined) return l
      rewritten = true
      return { ...l, blockHash: hash }
    })
    if (rewritten) count('staleLog')
    return out
  }

  /** The last log of the first block in `blocks` that has logs the filter matches. */
  async function strayLog(filter: Record<string, unknown>, blocks: { from: bigint; to: bigint }) {
    const body = await upstream(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'eth_getLogs',
        params: [{ ...filter, fromBlock: hex(blocks.from), toBlock: hex(blocks.to) }],
      }),
    )
    const logs = (JSON.parse(body.toString('utf8')) as { result?: RawLog[] }).result ?? []
    const first = logs[0]?.blockNumber
    return logs.filter((l) => l.blockNumber === first).pop()
  }

  const address = await new Promise<AddressInfo>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve(server.address() as AddressInfo))
  })

  let stopping: Promise<void> | undefined
  return {
    url: `http://127.0.0.1:${address.port}`,
    stats: () => {
      const out: Record<string, number> = { requests: 0, items: 0 }
      for (const kind of FAULT_KINDS) out[kind] = 0
      for (const [k, v] of counters) out[k] = v
      return out
    },
    setFaults(next) {
      faults = { ...faults, ...next }
      if (faults.staleLog === 0) staleHashes.clear()
    },
    omitted: () => [...omitted],
    stop() {
      stopping ??= new Promise<void>((resolve) => {
        for (const res of hung) res.socket?.destroy()
        hung.clear()
        server.close(() => resolve())
        server.closeAllConnections()
        agent.destroy()
      })
      return stopping
    },
  }
}

interface RawLog {
  blockNumber: string
  blockHash: string
  transactionHash: string
  logIndex: string
  [key: string]: unknown
}

function send(res: http.ServerResponse, status: number, body: Buffer | string) {
  if (res.destroyed) return
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) })
  res.end(body)
}

const OPEN = Buffer.from('[')
const COMMA = Buffer.from(',')
const CLOSE = Buffer.from(']')

/** A JSON array of already serialised answers. */
function joinArray(parts: Buffer[]): Buffer {
  const all: Buffer[] = [OPEN]
  parts.forEach((part, i) => {
    if (i > 0) all.push(COMMA)
    all.push(part)
  })
  all.push(CLOSE)
  return Buffer.concat(all)
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const firstParam = (item: RpcRequest) => (Array.isArray(item?.params) ? item.params[0] : undefined)

const isQuantity = (v: unknown): v is string => typeof v === 'string' && /^0x[0-9a-f]+$/i.test(v)

function usesHeadTag(filter: Record<string, unknown> | undefined): boolean {
  if (!filter || typeof filter.blockHash === 'string') return false
  return [filter.fromBlock, filter.toBlock].some(
    (b) => b === undefined || (typeof b === 'string' && HEAD_TAGS.has(b)),
  )
}

/** A filter bound as a number (absent = latest); undefined for tags this proxy does not resolve (safe, finalized). */
function resolveBound(bound: unknown, head: bigint): bigint | undefined {
  if (bound === undefined || bound === null) return head
  if (typeof bound === 'number') return BigInt(bound)
  if (typeof bound !== 'string') return undefined
  if (HEAD_TAGS.has(bound)) return head
  if (bound === 'earliest') return 0n
  return isQuantity(bound) ? BigInt(bound) : undefined
}

const LOG_INDEX = Buffer.from('"logIndex"')

/** Logs in a raw eth_getLogs answer, without parsing it: every log has exactly one logIndex. */
function countLogs(body: Buffer): number {
  let n = 0
  for (let at = body.indexOf(LOG_INDEX); at !== -1; at = body.indexOf(LOG_INDEX, at + LOG_INDEX.length)) n++
  return n
}

/** The last block from `from` such that the logs of [from, it] are at most `max` (at least `from`). */
function fittingTo(logs: RawLog[], from: bigint, to: bigint, max: number): bigint {
  const perBlock = new Map<bigint, number>()
  for (const log of logs) {
    const b = BigInt(log.blockNumber)
    perBlock.set(b, (perBlock.get(b) ?? 0) + 1)
  }
  let total = 0
  for (const b of [...perBlock.keys()].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0))) {
    total += perBlock.get(b)!
    if (total > max) return b - 1n < from ? from : b - 1n
  }
  return to
}

/** 1..3 logs repeated, then a shuffle that is never the identity. */
/** A string's FNV-1a hash, mixed (murmur3's finaliser), as a number in [0, 1): the same in every proxy. */
function unitHash(text: string): number {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193)
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b)
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35)
  return ((h ^ (h >>> 16)) >>> 0) / 4294967296
}

function duplicateAndShuffle(logs: RawLog[], rng: () => number): RawLog[] {
  const out = [...logs]
  const extra = 1 + Math.floor(rng() * Math.min(3, logs.length))
  for (let k = 0; k < extra; k++) out.push(logs[Math.floor(rng() * logs.length)]!)
  const original = out.map((l) => l)
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1))
    ;[out[i], out[j]] = [out[j]!, out[i]!]
  }
  if (out.every((l, i) => l === original[i])) out.push(out.shift()!)
  return out
}

/** The JSON-RPC error of a refusal, without its HTTP status. */
function errorOf({ httpStatus: _, ...error }: CapRefusal): JsonRpcError {
  return error
}
