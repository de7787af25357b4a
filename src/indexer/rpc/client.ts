import type { Logger } from 'pino'
import { createPublicClient, type Hex, http, type PublicClient } from 'viem'
import { IndexerError } from '../errors'
import { Limiter } from './limiter'
import { withRetry } from './retry'

export interface RpcBlock {
  number: bigint
  hash: Hex
  parentHash: Hex
  timestamp: bigint
}

/** A log as the node returns it (hex quantities), before any decoding. */
export interface RawLog {
  address: Hex
  topics: Hex[]
  data: Hex
  blockNumber: Hex
  blockHash: Hex
  transactionHash: Hex
  logIndex: Hex
  /** Returned by newer nodes; saves a header request when present. */
  blockTimestamp?: Hex
  removed?: boolean
}

export type LogFilter = { fromBlock: bigint; toBlock: bigint } | { blockHash: Hex }

export interface RpcOptions {
  url: string
  logger: Logger
  signal?: AbortSignal
  /** JSON-RPC requests per HTTP batch. */
  batchSize?: number
  /** Requests in flight at once (batches count per request). */
  maxConcurrency?: number
  timeoutMs?: number
  retries?: number
}

export interface Rpc {
  readonly client: PublicClient
  request<T>(method: string, params: unknown[], options?: { retry?: boolean; label?: string }): Promise<T>
  chainId(): Promise<number>
  blockNumber(): Promise<bigint>
  getBlock(block: bigint | 'latest' | 'finalized' | 'safe'): Promise<RpcBlock | null>
  getLogs(filter: LogFilter, topics: Hex[][]): Promise<RawLog[]>
  getCode(address: Hex, block?: bigint): Promise<Hex>
}

const toHex = (n: bigint): Hex => `0x${n.toString(16)}`

export function createRpc(options: RpcOptions): Rpc {
  const { logger, signal } = options
  const client = createPublicClient({
    transport: http(options.url, {
      batch: { batchSize: options.batchSize ?? 100, wait: 0 },
      retryCount: 0,
      timeout: options.timeoutMs ?? 30_000,
      maxResponseBodySize: 256 * 1024 * 1024,
    }),
  }) as PublicClient
  const limiter = new Limiter(options.maxConcurrency ?? 32)

  const request = <T>(method: string, params: unknown[], opts: { retry?: boolean; label?: string } = {}) => {
    const once = () =>
      limiter
        .run(() => client.request({ method, params } as never) as Promise<T>)
        .catch((err: unknown) => {
          throw new IndexerError(`RPC ${method} failed`, { cause: err })
        })
    if (opts.retry === false) return once()
    return withRetry(once, {
      retries: options.retries ?? 6,
      shouldRetry: isTransientRpcError,
      signal,
      logger,
      label: opts.label ?? method,
    })
  }

  const parseBlock = (raw: Record<string, Hex> | null): RpcBlock | null =>
    raw
      ? {
          number: BigInt(raw.number!),
          hash: raw.hash!,
          parentHash: raw.parentHash!,
          timestamp: BigInt(raw.timestamp!),
        }
      : null

  return {
    client,
    request,
    chainId: async () => Number(BigInt(await request<Hex>('eth_chainId', []))),
    blockNumber: async () => BigInt(await request<Hex>('eth_blockNumber', [])),
    getBlock: async (block) => {
      const tag = typeof block === 'bigint' ? toHex(block) : block
      try {
        return parseBlock(await request<Record<string, Hex> | null>('eth_getBlockByNumber', [tag, false]))
      } catch (err) {
        // Nodes without the tag answer with an error rather than null.
        if (typeof block === 'string' && block !== 'latest' && !isTransientRpcError(err)) return null
        throw err
      }
    },
    getLogs: (filter, topics) => {
      const params =
        'blockHash' in filter
          ? { blockHash: filter.blockHash, topics }
          : { fromBlock: toHex(filter.fromBlock), toBlock: toHex(filter.toBlock), topics }
      // Range errors are not retried here: the range helper shrinks the range instead.
      return request<RawLog[]>('eth_getLogs', [params], { retry: false }).then((logs) => {
        if (!Array.isArray(logs))
          throw new IndexerError('RPC eth_getLogs returned no log list', {
            details: 'temporarily unavailable',
          })
        return logs
      })
    },
    getCode: (address, block) =>
      request<Hex>('eth_getCode', [address, block === undefined ? 'latest' : toHex(block)]),
  }
}

/** Errors that say nothing about the request itself: worth retrying unchanged. */
export function isTransientRpcError(err: unknown): boolean {
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    const status = (e as { status?: unknown }).status
    if (typeof status === 'number') return status === 408 || status === 429 || status >= 500
    const code = (e as { code?: unknown }).code
    if (code === -32005 || code === -32603 || code === 429) return true
    if (e.name === 'TimeoutError' || e.name === 'HttpRequestError') return true
    if (
      /ECONNRESET|ECONNREFUSED|ETIMEDOUT|EAI_AGAIN|socket hang up|fetch failed|other side closed/i.test(
        e.message,
      )
    )
      return true
    if (/rate limit|too many requests|header not found|try again|temporarily unavailable/i.test(e.message))
      return true
  }
  return false
}
