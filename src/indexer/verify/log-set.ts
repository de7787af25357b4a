import type { RawLog } from '../chain'
import { IndexerError } from '../errors'

/*
 * Reads of eth_getLogs compared, merged and put in chain order: what
 * verification decides with (docs/indexer.md, "Verification").
 */

/**
 * Providers may repeat logs and send them out of order (load-balanced
 * backends merged, retried pages): one copy each, in chain order. An answer
 * that mixes two chains is refused (read again): two different logs at one
 * position, or logs of two blocks at one height (a node that kept logs of a
 * block a reorganisation replaced). The common answer, already in order
 * without repeats, is returned as is after passes that allocate nothing (a
 * backfill reads every log twice).
 */
export function normaliseLogs(logs: RawLog[]): RawLog[] {
  let ordered = true
  for (let i = 0; i < logs.length && ordered; i++) {
    if (logs[i]!.removed || (i > 0 && comparePosition(logs[i - 1]!, logs[i]!) >= 0)) ordered = false
  }
  const out = ordered ? logs : inChainOrder(logs)
  // Neighbours only: the logs of one height are adjacent in chain order.
  for (let i = 1; i < out.length; i++) {
    const a = out[i - 1]!
    const b = out[i]!
    if (!sameHex(a.blockHash, b.blockHash) && Number(a.blockNumber) === Number(b.blockNumber))
      throw new InconsistentLogsError(
        `logs of two blocks at height ${Number(b.blockNumber)}: ${a.blockHash} and ${b.blockHash}`,
      )
  }
  return out
}

function inChainOrder(logs: RawLog[]): RawLog[] {
  const sorted = logs.filter((l) => !l.removed).sort(comparePosition)
  const out: RawLog[] = []
  for (const log of sorted) {
    const previous = out[out.length - 1]
    if (!previous || comparePosition(previous, log) !== 0) out.push(log)
    else if (!sameLog(previous, log))
      throw new InconsistentLogsError(
        `two different logs at index ${Number(log.logIndex)} of block ${Number(log.blockNumber)}`,
      )
  }
  return out
}

/** Chain order: block number, then log index (both fit a double exactly). */
function comparePosition(a: RawLog, b: RawLog): number {
  // Neighbours in an answer mostly share a block: its number, the same text, is not parsed twice.
  const blocks = a.blockNumber === b.blockNumber ? 0 : Number(a.blockNumber) - Number(b.blockNumber)
  return blocks || Number(a.logIndex) - Number(b.logIndex)
}

const sameHex = (a: string, b: string) => a === b || a.toLowerCase() === b.toLowerCase()

/**
 * Two logs' full identity compared field by field: where each is (block hash and number,
 * transaction, index) and what it says (address, topics, data).
 */
function sameLog(a: RawLog, b: RawLog): boolean {
  return a === b || (Number(a.logIndex) === Number(b.logIndex) && sameLogAnywhere(a, b))
}

/**
 * The same log but perhaps for its index: the same block and transaction, and what it says
 * (address, topics, data).
 */
function sameLogAnywhere(a: RawLog, b: RawLog): boolean {
  if (
    !sameHex(a.blockHash, b.blockHash) ||
    !sameHex(a.transactionHash, b.transactionHash) ||
    !sameHex(a.address, b.address) ||
    !sameHex(a.data, b.data) ||
    Number(a.blockNumber) !== Number(b.blockNumber) ||
    a.topics.length !== b.topics.length
  )
    return false
  for (let i = 0; i < a.topics.length; i++) if (!sameHex(a.topics[i]!, b.topics[i]!)) return false
  return true
}

/**
 * Every log of two normalised reads (normaliseLogs) in chain order, a log
 * both hold once. Two different logs at one position are both kept, for
 * normaliseLogs to refuse.
 */
export function mergeLogs(a: RawLog[], b: RawLog[]): RawLog[] {
  const out: RawLog[] = []
  walkInChainOrder(
    a,
    b,
    (log) => out.push(log),
    (log) => out.push(log),
    (log) => out.push(log),
  )
  return out
}

/**
 * Calls `onlyA` with each log of normalised read `a` that `b` does not hold
 * (the same position and identity), and `onlyB` the other way round: the two
 * reads walked side by side, nothing built per log.
 */
export function forEachDifference(
  a: RawLog[],
  b: RawLog[],
  onlyA: (log: RawLog) => void,
  onlyB: (log: RawLog) => void,
): void {
  walkInChainOrder(a, b, onlyA, onlyB, () => undefined)
}

function walkInChainOrder(
  a: RawLog[],
  b: RawLog[],
  onlyA: (log: RawLog) => void,
  onlyB: (log: RawLog) => void,
  both: (log: RawLog) => void,
): void {
  let i = 0
  let j = 0
  while (i < a.length || j < b.length) {
    const order = i === a.length ? 1 : j === b.length ? -1 : comparePosition(a[i]!, b[j]!)
    if (order < 0) onlyA(a[i++]!)
    else if (order > 0) onlyB(b[j++]!)
    else {
      if (sameLog(a[i]!, b[j]!)) both(a[i]!)
      else {
        onlyA(a[i]!)
        onlyB(b[j]!)
      }
      i++
      j++
    }
  }
}

/**
 * A log of normalised read `kept` that normalised read `later` holds only at another
 * index of its block, where `kept` holds nothing like it (described), or undefined. A
 * transaction may emit one log twice (two indexes, the same content): a later read that
 * holds the kept read's copy at its index shows nothing; one that lacks it and holds the
 * other copy looks like a renumbering (docs/indexer.md, "Verification"; verify/agreed-logs.ts).
 */
export function renumberedLog(kept: RawLog[], later: RawLog[]): string | undefined {
  const onlyKept: RawLog[] = []
  const onlyLater: RawLog[] = []
  forEachDifference(
    kept,
    later,
    (log) => onlyKept.push(log),
    (log) => onlyLater.push(log),
  )
  for (const log of onlyKept) {
    const elsewhere = onlyLater.find((other) => sameLogAnywhere(log, other))
    if (elsewhere)
      return `one log at index ${Number(log.logIndex)} and at index ${Number(elsewhere.logIndex)} of block ${Number(log.blockNumber)}`
  }
  return undefined
}

/** Whether two normalised reads hold exactly the same logs. */
export function sameLogs(a: RawLog[], b: RawLog[]): boolean {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (!sameLog(a[i]!, b[i]!)) return false
  return true
}

/** An answer that cannot be one chain's logs; read again. */
export class InconsistentLogsError extends IndexerError {
  constructor(detail: string) {
    super(`Inconsistent eth_getLogs answer: ${detail}`)
    this.name = 'InconsistentLogsError'
  }
}
