import type { Logger } from 'pino'
import type { Hex } from 'viem'
import type { RawLog, RpcBlock } from '../chain'
import { describeError, errorChain, IndexerError } from '../errors'
import { maxBig, minBig } from '../util/bigint'
import { sleep } from '../util/sleep'
import { normaliseLogs } from '../verify/log-set'
import type { RequestOptions, Rpc } from './client'
import { getServedBlock, isTransientRpcError } from './client'
import type { Endpoint } from './endpoint'
import { bloomMayHold } from './logs-bloom'
import { readWhileBehind, rpcRetryDelay } from './retry'
import { RpcRequestError } from './transport'

/**
 * The block span of one eth_getLogs request, adapted to the provider and to
 * log density: halved (or set to the provider's suggestion) when a range is
 * refused, cut so the next response holds about `targetLogs` when one was
 * much larger (nodes without a result cap would otherwise send the whole
 * chain at once), doubled while requests stay small and fast.
 */
export class AdaptiveRange {
  /** Growth stops below the last refused span until enough requests have succeeded. */
  private ceiling: bigint
  private successes = 0

  constructor(
    public size: bigint = 1_000n,
    readonly min: bigint = 1n,
    readonly max: bigint = 100_000n,
    /** Grow while a request returns fewer logs than this. */
    readonly growBelowLogs = 2_000,
    readonly targetLogs = 5_000,
    /** Successful requests after which a refused span is tried again (log density changes). */
    readonly forgetAfter = 100,
  ) {
    this.ceiling = max
  }

  succeeded(span: bigint, logCount: number, elapsedMs: number): void {
    if (++this.successes >= this.forgetAfter) this.ceiling = this.max
    if (logCount > 2 * this.targetLogs) {
      const fitting = (span * BigInt(this.targetLogs)) / BigInt(logCount)
      this.size = maxBig(this.min, minBig(this.size, fitting))
    } else if (span >= this.size && logCount < this.growBelowLogs && elapsedMs < 2_000) {
      this.size = minBig(this.ceiling, this.size * 2n)
    }
  }

  refused(span: bigint, suggested?: bigint): void {
    const next = suggested !== undefined && suggested < span ? suggested : span / 2n
    this.size = maxBig(this.min, minBig(this.size, next))
    this.ceiling = this.size
    this.successes = 0
  }
}

export interface FetchLogsOptions {
  topics: Hex[][]
  range: AdaptiveRange
  logger: Logger
  signal?: AbortSignal
  retries?: number
  /** Passed to each request (a verification read avoids the first read's endpoints and learns its own). */
  request?: RequestOptions
}

/** All logs of [fromBlock, toBlock], split into as many requests as the provider needs. */
export async function fetchLogs(rpc: Rpc, fromBlock: bigint, toBlock: bigint, options: FetchLogsOptions) {
  const out: RawLog[] = []
  let from = fromBlock
  let failures = 0
  /** Reads of this range again since a block past its answer came back empty by hash against its bloom. */
  let rereads = 0
  while (from <= toBlock) {
    const to = minBig(toBlock, from + options.range.size - 1n)
    const span = to - from + 1n
    const started = performance.now()
    try {
      let servedBy: Endpoint | undefined
      const logs = await rpc.getLogs({ fromBlock: from, toBlock: to }, options.topics, {
        ...options.request,
        onServed: (e) => {
          servedBy = e
          options.request?.onServed?.(e)
        },
      })
      if (span > 1n && (await cutAtSilentCap(rpc, logs, to, options))) {
        options.range.refused(span)
        options.logger.warn(
          { fromBlock: from, toBlock: to, logs: logs.length, nextSpan: Number(options.range.size) },
          `eth_getLogs answered ${logs.length} logs for ${span} blocks and left the rest out without an error: shrinking range`,
        )
        continue
      }
      const tail = await logsPastAnswer(rpc, logs, from, to, options, rereads >= TAIL_REREADS)
      if (tail.length > 0 && servedBy) rpc.pool.observer?.rpcShortAnswer(servedBy.index)
      options.range.succeeded(span, logs.length, performance.now() - started)
      for (const log of logs) out.push(log)
      for (const log of tail) out.push(log)
      from = to + 1n
      failures = 0
      rereads = 0
    } catch (err) {
      if (options.signal?.aborted) throw err
      if (err instanceof BloomNamedLogsError) {
        const delay = rpcRetryDelay(rereads++)
        options.logger.warn(
          { fromBlock: from, toBlock: to, block: err.block, attempt: rereads, retryInMs: Math.round(delay) },
          `eth_getLogs answered blocks ${from}..${to} without logs of block ${err.block}, whose bloom names some, and its reads by hash came back empty: reading the range again`,
        )
        await sleep(delay, options.signal)
        continue
      }
      const tooLarge = isRangeTooLargeError(err) || (span > 1n && isTimeout(err))
      if (tooLarge && span > 1n) {
        options.range.refused(span, suggestedSpan(err, from))
        options.logger.warn(
          { fromBlock: from, toBlock: to, nextSpan: Number(options.range.size) },
          `eth_getLogs refused ${span} blocks, shrinking range: ${describeError(err)}`,
        )
        continue
      }
      const transient = tooLarge || isTransientRpcError(err) || err instanceof BlockNotServedError
      if (!transient || failures >= (options.retries ?? 8)) throw err
      const delay = rpcRetryDelay(failures++)
      options.logger.warn(
        { fromBlock: from, toBlock: to, attempt: failures, retryInMs: Math.round(delay) },
        `eth_getLogs failed, retrying: ${describeError(err)}`,
      )
      await sleep(delay, options.signal)
    }
  }
  return normaliseLogs(out)
}

/**
 * Result caps some providers and relays apply without an error: the answer
 * is cut to its first N logs (public reports: 25, 100, 256, 1,000, 10,000).
 * Such an N is a round number, and on a real chain an answer of exactly that
 * many logs is rare, so only those are checked (docs/indexer.md, "Providers").
 */
const SILENT_CAPS = new Set([
  25, 50, 100, 128, 200, 250, 256, 500, 512, 1_000, 1_024, 2_000, 2_048, 2_500, 4_096, 5_000, 8_192, 10_000,
  20_000, 50_000, 100_000,
])

/**
 * Whether an answer of [.., to] was cut at a silent cap: the blocks from its
 * last log's block to `to`, asked on their own, hold more than the answer has
 * of them. A cut answer holds a prefix of the range's logs in chain order.
 */
async function cutAtSilentCap(rpc: Rpc, logs: RawLog[], to: bigint, options: FetchLogsOptions) {
  if (!SILENT_CAPS.has(logs.length)) return false
  let last = 0
  for (const log of logs) last = Math.max(last, Number(log.blockNumber))
  const tail = await rpc.getLogs({ fromBlock: BigInt(last), toBlock: to }, options.topics, options.request)
  const held = normaliseLogs(logs).filter((log) => Number(log.blockNumber) >= last).length
  return normaliseLogs(tail).length > held
}

/**
 * Blocks this close below the best head may be past the head of the node that
 * answers a range: a provider's load balancer may send a log query to a node
 * behind the others, and some node software (older geth, clients built on its
 * filter code, nanoreth) then answers the blocks up to its own head and leaves
 * the rest out without an error (docs/indexer.md, "Providers").
 */
const LAG_MARGIN = 64n

/**
 * Reads of a range again (its answer short, a block past it empty by hash
 * while its bloom names logs) before the block's empty answers are taken as
 * the bloom's false positive.
 */
const TAIL_REREADS = 3

/**
 * The logs of the blocks of a range's answer that the answer does not vouch
 * for: those after its last log's block (a log of block L shows the node had
 * every block up to L) and within LAG_MARGIN of the best head. They are read
 * block by block by hash (readBlockLogs), which a node without the block
 * refuses with an error (EIP-234), or answers with none where the block's
 * bloom names some, rather than answering short. Far below the head, or with
 * logs up to the range's end (the common answer), nothing is read.
 *
 * A block whose reads by hash stay empty while its bloom names logs is not
 * taken as empty: an answer by hash that leaves out a block's only log looks
 * the same, and reads that all stopped short of the block would then agree on
 * lacking its logs. BloomNamedLogsError has the range read again; only after
 * TAIL_REREADS such reads (`takeEmpty`) is the empty answer taken, as the
 * bloom's false positive (docs/indexer.md, "Providers").
 */
async function logsPastAnswer(
  rpc: Rpc,
  logs: RawLog[],
  from: bigint,
  to: bigint,
  options: FetchLogsOptions,
  takeEmpty: boolean,
): Promise<RawLog[]> {
  const head = rpc.pool.head
  if (head < 0n || to <= head - LAG_MARGIN) return []
  let last = Number(from) - 1
  for (const log of logs) last = Math.max(last, Number(log.blockNumber))
  const first = maxBig(BigInt(last) + 1n, head - LAG_MARGIN + 1n)
  if (first > to) return []
  // Only where the caller wants its reads to go: a verification read still avoids the first's endpoints.
  const request: RequestOptions = { avoid: options.request?.avoid, onServed: options.request?.onServed }
  const numbers: bigint[] = []
  for (let n = first; n <= to; n++) numbers.push(n)
  const perBlock = await Promise.all(
    numbers.map(async (n) => {
      const block = await getServedBlock(rpc, n, request, options.signal)
      if (!block) throw new BlockNotServedError(n)
      const logs = await readBlockLogs(rpc, block, options.topics, { request, signal: options.signal })
      if (logs.length > 0 || !bloomNames(block, options.topics)) return logs
      if (!takeEmpty) throw new BloomNamedLogsError(n)
      options.logger.warn(
        { block: n.toString(), rangeReads: TAIL_REREADS + 1 },
        `block ${n}: its bloom names logs that no read found (the range read ${TAIL_REREADS + 1} times, the block by hash after each): taken as the bloom's false positive`,
      )
      return logs
    }),
  )
  const tail = perBlock.flat()
  if (tail.length > 0)
    options.logger.warn(
      { fromBlock: from.toString(), toBlock: to.toString(), missing: tail.length, lastLogBlock: last },
      `eth_getLogs answered blocks ${from}..${to} without the ${tail.length} logs of blocks ${first}..${to}, and no error (a node behind the head): read by block hash`,
    )
  return tail
}

/**
 * A block's logs, read by its hash (EIP-234). Some node software answers a
 * hash it does not know yet with no logs and no error (public reports against
 * Besu, reth before 2024, Frontier chains, anvil), so a node behind the
 * others passes for a block without logs. An empty answer for a block whose
 * logsBloom names one of the events asked for is read again for up to 2 s
 * (lag); then the last answer is taken, since a bloom may name an event the
 * block does not hold. `once`: read once, where a receipts proof settles the
 * block anyway (a bloom's false positive then costs no wait).
 */
export function readBlockLogs(
  rpc: Rpc,
  block: RpcBlock,
  topics: Hex[][],
  options: { request?: RequestOptions; signal?: AbortSignal; once?: boolean } = {},
): Promise<RawLog[]> {
  const read = () =>
    rpc.getLogs({ blockHash: block.hash }, topics, { ...options.request, minBlock: block.number })
  if (options.once) return read()
  // Only an empty answer is checked against the bloom (once).
  let named: boolean | undefined
  const settled = (logs: RawLog[]) => {
    if (logs.length > 0) return true
    named ??= bloomNames(block, topics)
    return !named
  }
  return readWhileBehind(read, settled, options.signal, 6)
}

/** Whether the block's logsBloom names one of the events asked for (false without a bloom). */
const bloomNames = (block: RpcBlock, topics: Hex[][]) =>
  block.logsBloom !== undefined && bloomMayHold(block.logsBloom, topics[0] ?? [])

/** A block past a range's answer that its bloom says holds logs came back empty by hash: the range is read again. */
class BloomNamedLogsError extends IndexerError {
  constructor(readonly block: bigint) {
    super(`Block ${block} answered without the logs its bloom names`)
    this.name = 'BloomNamedLogsError'
  }
}

/** A block at or below the best head that no endpoint serves yet (lag): the read is retried. */
class BlockNotServedError extends IndexerError {
  constructor(block: bigint) {
    super(`Block ${block} is not served yet`)
    this.name = 'BlockNotServedError'
  }
}

const RANGE_ERROR =
  /too many (results|logs)|more than \d+ results|response size|result(s)? (set )?(is )?too large|size exceed|exceed(s|ed)? (the )?(max|limit)|block range|range (is )?too (large|wide)|limit exceeded|query timeout|body too large|limited to (a )?[\d,]+|max(imum)? (block )?range|-32005/i

/**
 * A refusal of the range's size. A rate limit is not one, even when it shares
 * the code (-32005 "request rate exceeded", "limit exceeded"): shrinking the
 * range would only make more requests against the same limit.
 */
export function isRangeTooLargeError(err: unknown): boolean {
  for (const e of errorChain(err)) {
    if (e instanceof RpcRequestError && e.kind === 'rate_limited') return false
  }
  for (const e of errorChain(err)) {
    if (e instanceof RpcRequestError && e.kind === 'too_large') return true
    if (RANGE_ERROR.test(e.message)) return true
    const details = (e as { details?: unknown }).details
    if (typeof details === 'string' && RANGE_ERROR.test(details)) return true
  }
  return false
}

function isTimeout(err: unknown): boolean {
  for (const e of errorChain(err)) {
    if (e.name === 'TimeoutError' || /timed? ?out/i.test(e.message)) return true
  }
  return false
}

/**
 * The span a provider says would work, from its own words: Alchemy names a
 * range ("[0x10, 0x2f]"), Infura puts one in the error's data
 * ({"from": "0x10", "to": "0x2f"}), reth says "retry with the range 16-47",
 * QuickNode states its cap ("limited to a 10,000 range").
 */
function suggestedSpan(err: unknown, from: bigint): bigint | undefined {
  for (const e of errorChain(err)) {
    const text = `${e.message} ${(e as { details?: unknown }).details ?? ''}`
    const range =
      /\[\s*(0x[0-9a-f]+)\s*,\s*(0x[0-9a-f]+)\s*\]/i.exec(text) ??
      /"from"\s*:\s*"(0x[0-9a-f]+)"\s*,\s*"to"\s*:\s*"(0x[0-9a-f]+)"/i.exec(text) ??
      /range (\d+)\s*-\s*(\d+)/i.exec(text)
    if (range) {
      const start = BigInt(range[1]!)
      const end = BigInt(range[2]!)
      if (start === from && end >= start) return end - start + 1n
    }
    const cap = /limited to (?:a )?([\d,]+)(?: block)? range/i.exec(text)
    if (cap) return BigInt(cap[1]!.replaceAll(',', ''))
  }
  return undefined
}
