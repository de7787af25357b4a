import type { ProviderFaults } from './faults'
import type { Upstream } from './json-rpc'
import type { ProviderStyle } from './styles'

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

/** What the parts of a running proxy share: its options and its counters. */
export interface ProxyContext {
  options: ProviderProxyOptions
  count(key: string, by?: number): void
}

/** The state eth_getLogs answers read and write, besides the context. */
export interface LogsContext extends ProxyContext {
  upstream: Upstream
  /** The fault rates now (they change at run time). */
  faults(): ProviderFaults
  /** Logs left out so far (ProviderProxy.omitted). */
  omitted: string[]
  /** Logs the broken log index lacks (brokenLogIndex), once found in an answer. */
  unindexed: Set<string>
  /** Logs (`${transactionHash}:${logIndex}`) the node's stale cache answers with another block hash. */
  staleHashes: Map<string, string>
}
