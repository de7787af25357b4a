/** The faults the provider proxy injects, and their rates (see index.ts). */
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
