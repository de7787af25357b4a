/** eth_getLogs answers as the proxy reads and bends them. */
import { HEAD_TAGS, isQuantity } from './json-rpc'

export interface RawLog {
  blockNumber: string
  blockHash: string
  transactionHash: string
  logIndex: string
  [key: string]: unknown
}

export function usesHeadTag(filter: Record<string, unknown> | undefined): boolean {
  if (!filter || typeof filter.blockHash === 'string') return false
  return [filter.fromBlock, filter.toBlock].some(
    (b) => b === undefined || (typeof b === 'string' && HEAD_TAGS.has(b)),
  )
}

/** A filter bound as a number (absent = latest); undefined for tags this proxy does not resolve (safe, finalized). */
export function resolveBound(bound: unknown, head: bigint): bigint | undefined {
  if (bound === undefined || bound === null) return head
  if (typeof bound === 'number') return BigInt(bound)
  if (typeof bound !== 'string') return undefined
  if (HEAD_TAGS.has(bound)) return head
  if (bound === 'earliest') return 0n
  return isQuantity(bound) ? BigInt(bound) : undefined
}

const LOG_INDEX = Buffer.from('"logIndex"')

/** Logs in a raw eth_getLogs answer, without parsing it: every log has exactly one logIndex. */
export function countLogs(body: Buffer): number {
  let n = 0
  for (let at = body.indexOf(LOG_INDEX); at !== -1; at = body.indexOf(LOG_INDEX, at + LOG_INDEX.length)) n++
  return n
}

/** The last block from `from` such that the logs of [from, it] are at most `max` (at least `from`). */
export function fittingTo(logs: RawLog[], from: bigint, to: bigint, max: number): bigint {
  const perBlock = new Map<bigint, number>()
  for (const log of logs) {
    const b = BigInt(log.blockNumber)
    perBlock.set(b, (perBlock.get(b) ?? 0) + 1)
  }
  let total = 0
  for (const b of [...perBlock.keys()].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0))) {
    total += perBlock.get(b)!
    if (total > max) return b - 1n < from ? from : b - 1n
  }
  return to
}

/** 1..3 logs repeated, then a shuffle that is never the identity. */
/** A string's FNV-1a hash, mixed (murmur3's finaliser), as a number in [0, 1): the same in every proxy. */
export function unitHash(text: string): number {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193)
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b)
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35)
  return ((h ^ (h >>> 16)) >>> 0) / 4294967296
}

export function duplicateAndShuffle(logs: RawLog[], rng: () => number): RawLog[] {
  const out = [...logs]
  const extra = 1 + Math.floor(rng() * Math.min(3, logs.length))
  for (let k = 0; k < extra; k++) out.push(logs[Math.floor(rng() * logs.length)]!)
  const original = out.map((l) => l)
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1))
    ;[out[i], out[j]] = [out[j]!, out[i]!]
  }
  if (out.every((l, i) => l === original[i])) out.push(out.shift()!)
  return out
}
