/** eth_getLogs answers with the log faults, caps and cuts a hosted provider's answers have. */

import { mulberry32 } from '@/lib/random'
import { hex, isQuantity, type JsonRpcError, type Result } from './json-rpc'
import { countLogs, duplicateAndShuffle, fittingTo, type RawLog, unitHash } from './logs'
import type { LogsContext } from './options'
import type { Plan } from './plan'
import { capContext, errorOf, PROVIDER_STYLES } from './styles'

/** The proxy's eth_getLogs: passed through as bytes unless a fault or the result cap needs the logs. */
export function createGetLogs({
  options,
  count,
  upstream: node,
  faults: currentFaults,
  omitted,
  unindexed,
  staleHashes,
}: LogsContext): (p: Extract<Plan, { kind: 'logs' }>) => Promise<Buffer | Result> {
  const cap = options.getLogsCap
  const style = cap ? PROVIDER_STYLES[cap.style] : undefined
  const upstream = node.post

  /** One eth_getLogs: passed through as bytes unless a fault or the result cap needs the logs. */
  async function getLogs(p: Extract<Plan, { kind: 'logs' }>): Promise<Buffer | Result> {
    const body = await upstream(
      JSON.stringify({ jsonrpc: '2.0', id: p.id ?? null, method: 'eth_getLogs', params: [p.filter] }),
    )
    const maxResults = cap?.maxResults
    const n = countLogs(body)
    const overCap =
      maxResults !== undefined &&
      n > maxResults &&
      !(style!.singleBlockExempt && (p.range ? p.range.from === p.range.to : true))
    const omit = p.omit !== undefined && n >= 1
    const dup = p.dup !== undefined && n >= 2
    const stray = p.stray ? await strayLog(p.filter, p.stray) : undefined
    const cut = options.silentResultCap !== undefined && n > options.silentResultCap
    const stale = typeof p.filter.blockHash !== 'string' && (p.stale || staleHashes.size > 0)
    const broken = (options.brokenLogIndex ?? 0) > 0 && n >= 1
    if (!overCap && !omit && !dup && !stray && !cut && !stale && !broken) return body

    const answer = JSON.parse(body.toString('utf8')) as { result?: RawLog[]; error?: JsonRpcError }
    if (!Array.isArray(answer.result)) return body
    let logs = answer.result
    if (broken) logs = withoutUnindexed(logs)
    if (cut) {
      count('silentCut')
      logs = logs.slice(0, options.silentResultCap)
    }
    if (overCap) {
      count('capResults')
      const from = p.range?.from ?? BigInt(logs[0]!.blockNumber)
      const to = p.range?.to ?? from
      const refusal = style!.results(capContext(cap!, from, to, fittingTo(logs, from, to, maxResults!)))
      return { error: errorOf(refusal) }
    }
    if (omit) {
      count('omitLog')
      const at = Math.floor(p.omit! * logs.length)
      const [gone] = logs.splice(at, 1)
      omitted.push(`${gone!.transactionHash.toLowerCase()}:${Number(BigInt(gone!.logIndex))}`)
    }
    if (dup) {
      count('duplicateAndReorder')
      logs = duplicateAndShuffle(logs, mulberry32(p.dup!))
    }
    if (stray) {
      count('strayLog')
      logs.push(stray)
    }
    if (stale) logs = withStaleHashes(logs, p.stale === true ? p.filter : undefined)
    return { result: logs }
  }

  /** The answer of the broken log index: the logs it lacks are left out, each recorded once. */
  function withoutUnindexed(logs: RawLog[]): RawLog[] {
    const kept = logs.filter((l) => {
      const key = `${l.transactionHash.toLowerCase()}:${Number(BigInt(l.logIndex))}`
      if (unitHash(key) >= options.brokenLogIndex!) return true
      if (!unindexed.has(key)) {
        unindexed.add(key)
        omitted.push(key)
      }
      return false
    })
    if (kept.length < logs.length) count('brokenLogIndex')
    return kept
  }

  /**
   * The stale cache's answer: logs it holds get their other block hash. `addFrom`: the answer's
   * filter, when one more log joins the cache — the second log of a block inside the range (not
   * an edge, whose header a client may read with the logs) with two in the answer, so that the
   * other keeps the block's hash.
   */
  function withStaleHashes(logs: RawLog[], addFrom?: Record<string, unknown>): RawLog[] {
    const key = (l: RawLog) => `${l.transactionHash.toLowerCase()}:${Number(BigInt(l.logIndex))}`
    const [from, to] = [addFrom?.fromBlock, addFrom?.toBlock]
    // The rate now, not the one drawn when the request came in: an answer still in flight when
    // the fault is turned off must not stale the cache again.
    if (currentFaults().staleLog > 0 && isQuantity(from) && isQuantity(to)) {
      const inside = (l: RawLog) => BigInt(l.blockNumber) > BigInt(from) && BigInt(l.blockNumber) < BigInt(to)
      const i = logs.findIndex((l, j) => j > 0 && logs[j - 1]!.blockNumber === l.blockNumber && inside(l))
      if (i > 0) staleHashes.set(key(logs[i]!), `0x5a1e${logs[i]!.blockHash.slice(6)}`)
    }
    let rewritten = false
    const out = logs.map((l) => {
      const hash = staleHashes.get(key(l))
      if (hash === undefined) return l
      rewritten = true
      return { ...l, blockHash: hash }
    })
    if (rewritten) count('staleLog')
    return out
  }

  /** The last log of the first block in `blocks` that has logs the filter matches. */
  async function strayLog(filter: Record<string, unknown>, blocks: { from: bigint; to: bigint }) {
    const body = await upstream(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'eth_getLogs',
        params: [{ ...filter, fromBlock: hex(blocks.from), toBlock: hex(blocks.to) }],
      }),
    )
    const logs = (JSON.parse(body.toString('utf8')) as { result?: RawLog[] }).result ?? []
    const first = logs[0]?.blockNumber
    return logs.filter((l) => l.blockNumber === first).pop()
  }

  return getLogs
}
