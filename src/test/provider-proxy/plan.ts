/** How the proxy answers each JSON-RPC item: locally, through the node, or as an eth_getLogs with faults. */
import type { ProviderFaults } from './faults'
import {
  HEAD_TAGS,
  HEADER_NOT_FOUND,
  hex,
  ITEM_ERRORS,
  isQuantity,
  type JsonRpcError,
  type Result,
  type RpcRequest,
  STATE_BLOCK_PARAM,
  UNKNOWN_BLOCK,
} from './json-rpc'
import { resolveBound } from './logs'
import type { ProxyContext } from './options'
import { capContext, errorOf, PROVIDER_STYLES } from './styles'

/** How one item is answered. */
export type Plan =
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

/** The plan of one item, its fault draws taken from `rng` (the same number of draws for every item). */
export function plan(
  { options, count }: ProxyContext,
  item: RpcRequest,
  f: ProviderFaults,
  rng: () => number,
  lag: number,
  nodeHead: bigint,
  numberOfHash: Map<string, bigint | null>,
): Plan {
  const cap = options.getLogsCap
  const style = cap ? PROVIDER_STYLES[cap.style] : undefined
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
        const ctx = capContext(cap, from, to, from + BigInt(cap.maxBlocks) - 1n)
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
    return number !== undefined && number !== null && BigInt(number) > nodeHead ? { result: null } : undefined
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
