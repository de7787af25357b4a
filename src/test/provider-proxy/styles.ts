/** How each hosted provider and node refuses an eth_getLogs query over its caps. */
import { hex, type JsonRpcError } from './json-rpc'

export type ProviderStyle =
  | 'alchemy'
  | 'infura'
  | 'quicknode'
  | 'ankr'
  | 'cloudflare'
  | 'geth'
  | 'erigon'
  | 'reth'

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

/** The context of a cap refusal for the range [from, to], suggesting [from, suggestedTo]. */
export function capContext(
  cap: { maxBlocks?: number; maxResults?: number },
  from: bigint,
  to: bigint,
  suggestedTo: bigint,
): CapContext {
  return {
    from,
    to,
    maxBlocks: cap.maxBlocks ?? 2_000,
    maxResults: cap.maxResults ?? 10_000,
    suggestion: { from, to: suggestedTo < to ? suggestedTo : to },
  }
}

/** The JSON-RPC error of a refusal, without its HTTP status. */
export function errorOf({ httpStatus: _, ...error }: CapRefusal): JsonRpcError {
  return error
}
