import type { Logger } from 'pino'
import type { Hex } from 'viem'
import type { RawLog, RpcBlock } from '../chain'
import { describeError, errorChain, IndexerError } from '../errors'
import { sleep } from '../util/sleep'
import { Endpoint } from './endpoint'
import { EndpointPool, type EndpointPoolOptions } from './endpoint-pool'
import { isLogsBloom } from './logs-bloom'
import { readWhileBehind, rpcRetryDelay } from './retry'
import { RpcRequestError, type TwinReads } from './transport'

export type LogFilter = { fromBlock: bigint; toBlock: bigint } | { blockHash: Hex }

export interface RpcOptions extends Partial<Omit<EndpointPoolOptions, 'urls'>> {
  /** One endpoint, or several separated by commas (RPC_URL). Ignored when `pool` is given. */
  url?: string
  /** Endpoints shared with other Rpc instances of the process (their health and heads are shared). */
  pool?: EndpointPool
  logger: Logger
  signal?: AbortSignal
  retries?: number
  /** Background work (the metadata queue): yields every endpoint's slots to the sync loop. */
  background?: boolean
}

export interface RequestOptions {
  retry?: boolean
  /** Attempts after the first (default: the Rpc's `retries`). */
  retries?: number
  label?: string
  /** The block the request reads: endpoints known to be behind it are asked last. */
  minBlock?: bigint
  /** Endpoints to avoid when another can answer (verification reads). */
  avoid?: ReadonlySet<Endpoint>
  /** Told which endpoint answered. */
  onServed?: (endpoint: Endpoint) => void
  /** Ask this endpoint and no other (reading each endpoint's head). */
  only?: Endpoint
  /** In an HTTP exchange of its own, not batched with requests of the same tick (large answers). */
  alone?: boolean
  /** A read expected to answer as another does (verification): identical answers are parsed once. */
  twin?: TwinReads
}

export interface Rpc {
  readonly pool: EndpointPool
  request<T>(method: string, params: unknown[], options?: RequestOptions): Promise<T>
  chainId(): Promise<number>
  /** The best head reported so far (asks one endpoint); never lower than an earlier answer. */
  blockNumber(): Promise<bigint>
  getBlock(
    block: bigint | 'latest' | 'finalized' | 'safe',
    options?: RequestOptions,
  ): Promise<RpcBlock | null>
  getLogs(filter: LogFilter, topics: Hex[][], options?: RequestOptions): Promise<RawLog[]>
  getCode(address: Hex, block?: bigint): Promise<Hex>
}

/** How one attempt ended: the answer, or the failure (newFault: not booked on the endpoint before). */
type Attempt<T> = { endpoint: Endpoint; value: T } | { endpoint: Endpoint; error: unknown; newFault: boolean }

/** Requests alike in answer time: a range's logs (alone) take far longer than a block's. */
const hedgeKind = (method: string, opts: RequestOptions) => (opts.alone ? `${method} alone` : method)

const toHex = (n: bigint): Hex => `0x${n.toString(16)}`

/**
 * Block `n`, asked again briefly while the answer is null (readWhileBehind): a
 * node behind the others near the head is lag. Null when it still is.
 */
export const getServedBlock = (rpc: Rpc, n: bigint, request?: RequestOptions, signal?: AbortSignal) =>
  readWhileBehind(
    () => rpc.getBlock(n, request),
    (b) => b !== null,
    signal,
  )

export const splitRpcUrls = (value: string): string[] =>
  value
    .split(',')
    .map((u) => u.trim())
    .filter(Boolean)

export function createRpc(options: RpcOptions): Rpc {
  const { logger, signal } = options
  const pool = options.pool ?? new EndpointPool({ ...options, urls: splitRpcUrls(options.url ?? '') })
  const retries = options.retries ?? 6

  const lane = options.background ? 'background' : 'sync'

  /**
   * Sends one attempt to `endpoint` and books its outcome there (health,
   * latency, metrics). `abort` ends an attempt whose hedge answered first:
   * that is booked as slowness, not as a fault. `sent` is told when the
   * request goes out, after any wait for one of the endpoint's slots.
   */
  const sendAttempt = async <T>(
    endpoint: Endpoint,
    method: string,
    params: unknown[],
    opts: RequestOptions,
    hedge: { abort?: AbortSignal; sent: () => void },
  ): Promise<Attempt<T>> => {
    const started = performance.now()
    let sentAt = started
    try {
      const wire = lane === 'background' ? endpoint.backgroundWire : endpoint.wire
      const value = (await wire.call(method, params, {
        signal: hedge.abort ?? signal,
        block: opts.minBlock === undefined ? -1 : Number(opts.minBlock),
        alone: opts.alone,
        twin: opts.twin,
        sent: () => {
          sentAt = performance.now()
          hedge.sent()
        },
      })) as T
      const answered = performance.now()
      endpoint.succeeded(answered - started)
      pool.hedging.answered(hedgeKind(method, opts), answered - sentAt)
      pool.observer?.rpcAttempt(method, endpoint.index)
      return { endpoint, value }
    } catch (err) {
      if (signal?.aborted) throw signal.reason ?? err
      if (hedge.abort?.aborted) {
        endpoint.outpaced(performance.now() - started)
        pool.observer?.rpcAttempt(method, endpoint.index)
        return { endpoint, error: err, newFault: false }
      }
      const newFault = endpoint.failed(err, lane)
      pool.observer?.rpcAttempt(method, endpoint.index, err instanceof RpcRequestError ? err.kind : 'network')
      return { endpoint, error: err, newFault }
    }
  }

  /**
   * One attempt, hedged (rpc/hedge.ts): when it has no answer after the usual
   * time of its kind, twice over, the same request goes once more — to another
   * endpoint when one can take it, else to the same one on another connection —
   * and the first answer wins. A request alone in its exchange (a range's logs)
   * is cut when the other answers; a batched one runs on, as the batch does.
   * Settles with the first answer, or with a failure of the hedge, or of the
   * first attempt when no hedge runs: the retry loop then takes over.
   */
  const hedgedAttempt = <T>(
    first: Endpoint,
    method: string,
    params: unknown[],
    opts: RequestOptions,
  ): Promise<Attempt<T>> =>
    new Promise((resolve, reject) => {
      const cuttable = opts.alone === true || opts.twin !== undefined
      const cuts: AbortController[] = []
      let running = 0
      let settled = false
      let timer: NodeJS.Timeout | undefined
      const settle = (end: () => void) => {
        settled = true
        clearTimeout(timer)
        for (const cut of cuts) cut.abort()
        end()
      }
      const hedge = () => {
        if (settled) return
        const avoid = new Set(opts.avoid)
        avoid.add(first)
        const next = pool.pick({ minBlock: opts.minBlock, avoid, lane })
        if (!(next instanceof Endpoint) || !pool.hedging.take()) return
        logger.debug(
          { op: opts.label ?? method, endpoint: next.index + 1 },
          `${opts.label ?? method}: no answer from ${first.label} yet, asking ${next === first ? 'it' : next.label} again`,
        )
        pool.observer?.rpcHedge(method, next.index)
        send(next, () => undefined)
      }
      const send = (endpoint: Endpoint, sent: () => void) => {
        const hedged = running > 0
        running++
        const cut = cuttable ? new AbortController() : undefined
        const onAbort = () => cut?.abort(signal?.reason)
        if (cut) {
          cuts.push(cut)
          signal?.addEventListener('abort', onAbort, { once: true })
        }
        sendAttempt<T>(endpoint, method, params, opts, { abort: cut?.signal, sent }).then(
          (outcome) => {
            signal?.removeEventListener('abort', onAbort)
            running--
            if (settled) return
            // A first attempt that fails while its hedge runs waits for the hedge; a hedge that
            // fails ends the wait (the retry loop takes over) even while the first still hangs.
            if ('value' in outcome || running === 0 || hedged) settle(() => resolve(outcome))
          },
          (err) => {
            signal?.removeEventListener('abort', onAbort)
            if (!settled) settle(() => reject(err))
          },
        )
      }
      // The wait is timed from when the request goes out, not from a wait for a slot before.
      // Reading each endpoint's own head goes to that endpoint only, and nothing waits on the
      // background lane's requests (the metadata queue's): neither is hedged.
      const hedgeable = !opts.only && lane === 'sync'
      send(first, () => {
        if (hedgeable && !settled) timer = setTimeout(hedge, pool.hedging.delayMs(hedgeKind(method, opts)))
      })
    })

  /**
   * One request, retried on transient failures: at once on another endpoint
   * when one can take it, else after a back-off (at least the Retry-After of a
   * rate-limited endpoint).
   */
  const request = async <T>(method: string, params: unknown[], opts: RequestOptions = {}): Promise<T> => {
    const failed = new Set<Endpoint>()
    for (let attempt = 0; ; ) {
      // Not waited out: only the sync loop's head reads find out when one serves it again.
      if (!opts.only && pool.endpoints.every((e) => e.wrongChainId !== null))
        throw new IndexerError(`RPC ${method}: every endpoint now serves another chain`)
      const choice =
        opts.only ?? pool.pick({ minBlock: opts.minBlock, avoid: opts.avoid, exclude: failed, lane })
      if (!(choice instanceof Endpoint)) {
        await sleep(choice.waitMs, signal)
        continue
      }
      const outcome = await hedgedAttempt<T>(choice, method, params, opts)
      if ('value' in outcome) {
        opts.onServed?.(outcome.endpoint)
        return outcome.value
      }
      const { endpoint, error: err, newFault } = outcome
      const wrapped = new IndexerError(`RPC ${method} failed on ${endpoint.label}`, { cause: err })
      if (opts.retry === false || attempt >= (opts.retries ?? retries) || !isTransientRpcError(err))
        throw wrapped
      attempt++
      failed.add(endpoint)
      const another =
        !opts.only && pool.endpoints.some((e) => !failed.has(e) && e.restingUntil(lane) <= Date.now())
      // A node that does not have the block yet is behind by a block or two: asked again soon,
      // as a null block is (retry.ts, readWhileBehind), not after a back-off of seconds.
      const delay = another ? 0 : notYet(err) ? 100 * attempt : rpcRetryDelay(attempt - 1)
      // One line per fault: the items of a batch that failed whole share its error.
      if (newFault)
        logger.warn(
          { op: opts.label ?? method, attempt, endpoint: endpoint.index + 1, retryInMs: Math.round(delay) },
          `${opts.label ?? method} failed, retrying${another ? ' on another endpoint' : ''}: ${describeError(err)}`,
        )
      if (!another) {
        failed.clear()
        await sleep(delay, signal)
      }
    }
  }

  /** A header, checked: a broken cache or load balancer may answer another block, or half of one. */
  const parseBlock = (raw: Record<string, unknown> | null, asked: bigint | string): RpcBlock | null => {
    if (raw === null) return null
    const { number, hash, parentHash, timestamp, logsBloom } = raw
    const valid =
      isQuantity(number) &&
      isHash(hash) &&
      isHash(parentHash) &&
      isQuantity(timestamp) &&
      (typeof asked !== 'bigint' || BigInt(number) === asked)
    if (!valid)
      throw new IndexerError(
        `RPC eth_getBlockByNumber(${asked}) answered another block or an incomplete one`,
        {
          cause: new RpcRequestError('bad_body', `block ${String(number)} (${String(hash)})`),
        },
      )
    const block: RpcBlock = { number: BigInt(number), hash, parentHash, timestamp: BigInt(timestamp) }
    if (isLogsBloom(logsBloom)) block.logsBloom = logsBloom
    return block
  }

  return {
    pool,
    request,
    chainId: async () => Number(BigInt(await request<Hex>('eth_chainId', []))),
    blockNumber: async () => {
      let served: Endpoint | undefined
      const head = BigInt(
        await request<Hex>('eth_blockNumber', [], {
          onServed: (e) => {
            served = e
          },
        }),
      )
      served?.observeHead(head)
      return pool.head > head ? pool.head : head
    },
    getBlock: async (block, opts = {}) => {
      const tag = typeof block === 'bigint' ? toHex(block) : block
      let raw: Record<string, unknown> | null
      try {
        raw = await request('eth_getBlockByNumber', [tag, false], {
          ...opts,
          minBlock: typeof block === 'bigint' ? block : undefined,
        })
      } catch (err) {
        // Nodes without the tag answer with an error rather than null.
        if (typeof block === 'string' && block !== 'latest' && !isTransientRpcError(err)) return null
        throw err
      }
      return parseBlock(raw, block)
    },
    getLogs: (filter, topics, opts = {}) => {
      const params =
        'blockHash' in filter
          ? { blockHash: filter.blockHash, topics }
          : { fromBlock: toHex(filter.fromBlock), toBlock: toHex(filter.toBlock), topics }
      // Range errors are not retried here: the range helper shrinks the range instead.
      // A range's answer (up to a provider's cap, 10,000 logs) goes alone: batched with others it
      // would wait for the slowest, fail with them on one 429, and arrive with them in memory at once.
      return request<RawLog[]>('eth_getLogs', [params], {
        retry: 'blockHash' in filter,
        alone: 'toBlock' in filter,
        ...opts,
        minBlock: 'toBlock' in filter ? filter.toBlock : opts.minBlock,
      }).then((logs) => {
        if (!Array.isArray(logs))
          throw new IndexerError('RPC eth_getLogs returned no log list', {
            cause: new RpcRequestError('bad_body', 'eth_getLogs answered without a list'),
          })
        // The common answer holds only what was asked: one pass, nothing allocated.
        const asked = askedBy(filter)
        if (logs.every(asked)) return logs
        const inside = logs.filter(asked)
        logger.warn(
          { filter: describeFilter(filter), strays: logs.length - inside.length },
          `eth_getLogs answered ${logs.length - inside.length} log(s) of blocks it was not asked for: left out`,
        )
        return inside
      })
    },
    getCode: (address, block) =>
      request<Hex>('eth_getCode', [address, block === undefined ? 'latest' : toHex(block)]),
  }
}

const isQuantity = (v: unknown): v is Hex => typeof v === 'string' && /^0x[0-9a-fA-F]{1,64}$/.test(v)
const isHash = (v: unknown): v is Hex => typeof v === 'string' && /^0x[0-9a-fA-F]{64}$/.test(v)

/**
 * Whether a log is of the blocks the filter asked for. Nodes with a broken
 * range filter answer logs of other blocks too (docs/indexer.md, "Providers");
 * taken, such a log would be stored before the blocks between, out of chain order.
 */
function askedBy(filter: LogFilter): (log: RawLog) => boolean {
  if ('blockHash' in filter) {
    const hash = filter.blockHash.toLowerCase()
    return (log) => typeof log.blockHash === 'string' && log.blockHash.toLowerCase() === hash
  }
  const from = Number(filter.fromBlock)
  const to = Number(filter.toBlock)
  return (log) => {
    const n = typeof log.blockNumber === 'string' ? Number(log.blockNumber) : Number.NaN
    return n >= from && n <= to
  }
}

const describeFilter = (filter: LogFilter) =>
  'blockHash' in filter
    ? { blockHash: filter.blockHash }
    : { fromBlock: filter.fromBlock.toString(), toBlock: filter.toBlock.toString() }

/**
 * Errors that say nothing about the request itself: worth retrying unchanged.
 * Every fault of the provider's transport is (rpc/transport.ts); of JSON-RPC
 * errors, limits (-32005, 429), internal errors (-32603) and blocks a node
 * behind the others does not have yet ("header not found", "unknown block").
 */
export function isTransientRpcError(err: unknown): boolean {
  for (const e of errorChain(err)) {
    if (e instanceof RpcRequestError) {
      // The same request would get the same answer: only a smaller one helps (rpc/get-logs.ts).
      if (e.kind === 'too_large') return false
      if (e.kind !== 'rpc') return true
      if (e.code === -32005 || e.code === -32603 || e.code === 429) return true
      return TRANSIENT_MESSAGE.test(e.message) || NOT_YET_MESSAGE.test(e.message)
    }
  }
  return false
}

/** The node's answer for a block it has not seen yet (geth, erigon, reth and their providers). */
const NOT_YET_MESSAGE = /header not found|unknown block|block not found/i

const TRANSIENT_MESSAGE = /rate limit|too many requests|try again|temporarily unavailable|internal error/i

const notYet = (err: unknown) =>
  err instanceof RpcRequestError && err.kind === 'rpc' && NOT_YET_MESSAGE.test(err.message)
