import type { Logger } from 'pino'
import type { Hex } from 'viem'
import { describeError } from '../errors'
import type { RawLog, Rpc } from './client'
import { isTransientRpcError } from './client'
import { backoffDelay, sleep } from './retry'

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
}

/** All logs of [fromBlock, toBlock], split into as many requests as the provider needs. */
export async function fetchLogs(rpc: Rpc, fromBlock: bigint, toBlock: bigint, options: FetchLogsOptions) {
  const out: RawLog[] = []
  let from = fromBlock
  let failures = 0
  while (from <= toBlock) {
    const to = minBig(toBlock, from + options.range.size - 1n)
    const span = to - from + 1n
    const started = performance.now()
    try {
      const logs = await rpc.getLogs({ fromBlock: from, toBlock: to }, options.topics)
      options.range.succeeded(span, logs.length, performance.now() - started)
      for (const log of logs) out.push(log)
      from = to + 1n
      failures = 0
    } catch (err) {
      if (options.signal?.aborted) throw err
      const tooLarge = isRangeTooLargeError(err) || (span > 1n && isTimeout(err))
      if (tooLarge && span > 1n) {
        options.range.refused(span, suggestedSpan(err, from))
        options.logger.warn(
          { fromBlock: from, toBlock: to, nextSpan: Number(options.range.size) },
          `eth_getLogs refused ${span} blocks, shrinking range: ${describeError(err)}`,
        )
        continue
      }
      if (!(tooLarge || isTransientRpcError(err)) || failures >= (options.retries ?? 8)) throw err
      const delay = backoffDelay(failures++, 500, 30_000)
      options.logger.warn(
        { fromBlock: from, toBlock: to, attempt: failures, retryInMs: Math.round(delay) },
        `eth_getLogs failed, retrying: ${describeError(err)}`,
      )
      await sleep(delay, options.signal)
    }
  }
  return out
}

const RANGE_ERROR =
  /too many (results|logs)|more than \d+ results|response size|result(s)? (set )?(is )?too large|size exceed|exceed(s|ed)? (the )?(max|limit)|block range|range (is )?too (large|wide)|limit exceeded|query timeout|body too large|-32005/i

export function isRangeTooLargeError(err: unknown): boolean {
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    if (RANGE_ERROR.test(e.message)) return true
    const details = (e as { details?: unknown }).details
    if (typeof details === 'string' && RANGE_ERROR.test(details)) return true
  }
  return false
}

function isTimeout(err: unknown): boolean {
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    if (e.name === 'TimeoutError' || /timed? ?out/i.test(e.message)) return true
  }
  return false
}

/** Providers such as Alchemy and Infura name a range that would work: "[0x10, 0x2f]". */
function suggestedSpan(err: unknown, from: bigint): bigint | undefined {
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    const text = `${e.message} ${(e as { details?: unknown }).details ?? ''}`
    const match = /\[\s*(0x[0-9a-f]+)\s*,\s*(0x[0-9a-f]+)\s*\]/i.exec(text)
    if (match) {
      const start = BigInt(match[1]!)
      const end = BigInt(match[2]!)
      if (start === from && end >= start) return end - start + 1n
    }
  }
  return undefined
}

export const minBig = (a: bigint, b: bigint) => (a < b ? a : b)
export const maxBig = (a: bigint, b: bigint) => (a > b ? a : b)
