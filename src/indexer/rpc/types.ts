import type { Logger } from 'pino'
import type { Hex } from 'viem'
import type { RawLog, RpcBlock } from '../chain'
import type { Endpoint, Lane } from './endpoint'
import type { EndpointPool } from './endpoint-pool'
import type { TwinReads } from './transport'

export type LogFilter = { fromBlock: bigint; toBlock: bigint } | { blockHash: Hex }

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

/** What every request of one Rpc shares: its endpoints, its lane, its log and its end. */
export interface RequestContext {
  pool: EndpointPool
  /** Background work (the metadata queue) yields every endpoint's slots to the sync loop. */
  lane: Lane
  logger: Logger
  signal?: AbortSignal
  /** Attempts after the first, unless a request says otherwise. */
  retries: number
}
