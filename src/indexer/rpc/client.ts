import type { Logger } from 'pino'
import { EndpointPool, type EndpointPoolOptions } from './endpoint-pool'
import { readBlock, readBlockNumber, readChainId, readCode, readLogs } from './reads'
import { sendRequest } from './request'
import { readWhileBehind } from './retry'
import type { RequestContext, RequestOptions, Rpc } from './types'

export { isExecutionFailure, isTransientRpcError } from './transient'
export type { LogFilter, RequestOptions, Rpc } from './types'

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

/**
 * A JSON-RPC client over one or more endpoints: each request is retried
 * (request.ts), each attempt hedged (hedged-attempt.ts) and booked on its
 * endpoint (attempt.ts); the typed reads check what they are answered (reads.ts).
 */
export function createRpc(options: RpcOptions): Rpc {
  const pool = options.pool ?? new EndpointPool({ ...options, urls: splitRpcUrls(options.url ?? '') })
  const ctx: RequestContext = {
    pool,
    lane: options.background ? 'background' : 'sync',
    logger: options.logger,
    signal: options.signal,
    retries: options.retries ?? 6,
  }
  const request = <T>(method: string, params: unknown[], opts?: RequestOptions) =>
    sendRequest<T>(ctx, method, params, opts)
  return {
    pool,
    request,
    chainId: () => readChainId(request),
    blockNumber: () => readBlockNumber(request, pool),
    getBlock: (block, opts) => readBlock(request, block, opts),
    getLogs: (filter, topics, opts) => readLogs(request, ctx.logger, filter, topics, opts),
    getCode: (address, block) => readCode(request, address, block),
  }
}
