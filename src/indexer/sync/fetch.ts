import type { Hex } from 'viem'
import type { VerifiedSpan } from '@/db/queries/indexer-state'
import type { RawLog, RpcBlock } from '../chain'
import { IndexerError } from '../errors'
import { consecutiveRows, MAX_CONSECUTIVE_RANGE } from '../events/consecutive'
import { decodeLog } from '../events/decode'
import { INDEXED_TOPICS } from '../events/topics'
import {
  type MetadataUpdateEvent,
  type PendingTransfer,
  type TransferEvent,
  withBlockTimestamp,
} from '../events/types'
import { getServedBlock, type Rpc } from '../rpc/client'
import type { Endpoint } from '../rpc/endpoint'
import { readBlockLogs } from '../rpc/get-logs'
import { compareChainOrder } from '../store/transfers'
import { type LogReader, readLogs, readVerifiedLogs, reportMismatch } from '../verify/agreed-logs'
import { normaliseLogs, sameLogs } from '../verify/log-set'
import { canProve, provenBlock } from '../verify/proven-logs'
import type { ContractClassifier } from './classify'

export interface FetchContext extends LogReader {
  classifier: ContractClassifier
  /** Verify every range before it counts as confirmed (docs/indexer.md, "Verification"). */
  verify: boolean
  /**
   * Blocks followed at the head and not verified yet: the logs of their one
   * read (the first read their verification counts) and the endpoint that
   * answered (verification reads prefer another).
   */
  followed: Map<bigint, { logs: RawLog[]; endpoint?: Endpoint }>
}

/** The decoded content of blocks [fromBlock, toBlock], ready to commit. */
export interface FetchedRange {
  fromBlock: bigint
  toBlock: bigint
  transfers: TransferEvent[]
  metadataUpdates: MetadataUpdateEvent[]
  /** Header of fromBlock: its parentHash links the range to the stored chain. */
  first: RpcBlock
  /** Headers to store: every block in realtime mode, the last block in historical mode. */
  headers: RpcBlock[]
  logCount: number
  /** Verified (docs/indexer.md, "Verification"). */
  verified: boolean
  /** How, when verified by this indexer. */
  verifiedBy?: Pick<VerifiedSpan, 'method' | 'sampleRate'>
}

/** The chain changed while a range was being read; the step is retried. */
export class ChainChangedError extends IndexerError {
  constructor(detail: string) {
    super(`Chain changed while reading: ${detail}`)
    this.name = 'ChainChangedError'
  }
}

/**
 * A range whose ERC-2309 logs expand to more rows than one block may: it is read again in
 * smaller ranges (the adaptive range was shrunk to fit), so memory stays bounded by the
 * per-block cap whatever the logs of many blocks add up to.
 */
export class RangeTooLargeError extends IndexerError {
  constructor(fromBlock: bigint, toBlock: bigint, rows: number) {
    super(`blocks ${fromBlock}..${toBlock} expand to ${rows} ERC-2309 rows: reading smaller ranges`)
    this.name = 'RangeTooLargeError'
  }
}

/** Historical mode (confirmed blocks): logs by block range (read twice and compared), headers only where needed. */
export async function fetchHistoricalRange(
  ctx: FetchContext,
  fromBlock: bigint,
  toBlock: bigint,
): Promise<FetchedRange> {
  const started = performance.now()
  // The range's first and last headers are asked with its logs (one JSON-RPC batch when one
  // endpoint serves both): a round trip less per range than asking them after.
  const edges = getHeaders(ctx.rpc, [...new Set([fromBlock, toBlock])])
  edges.catch(() => undefined)
  const verified = ctx.verify ? await readVerifiedLogs(ctx, fromBlock, toBlock) : null
  const logs = verified?.logs ?? (await readLogs(ctx, fromBlock, toBlock))
  const rows = logs.reduce((sum, log) => sum + consecutiveRows(log), 0)
  if (rows > Number(MAX_CONSECUTIVE_RANGE) && toBlock > fromBlock) {
    const span = toBlock - fromBlock + 1n
    ctx.range.refused(span, (span * MAX_CONSECUTIVE_RANGE) / BigInt(rows))
    throw new RangeTooLargeError(fromBlock, toBlock, rows)
  }
  const fetchedAt = performance.now()
  const range = await rangeFromLogs(ctx, fromBlock, toBlock, logs, await edges)
  if (verified) range.verifiedBy = { method: verified.method, sampleRate: verified.sampleRate }
  ctx.logger.debug(
    {
      fromBlock: fromBlock.toString(),
      toBlock: toBlock.toString(),
      logs: logs.length,
      getLogsMs: Math.round(fetchedAt - started),
      totalMs: Math.round(performance.now() - started),
    },
    'fetched range',
  )
  return range
}

/**
 * Decodes the (agreed) logs of [fromBlock, toBlock] and reads the headers it
 * needs (those not `known` already): a range ready to commit.
 */
export async function rangeFromLogs(
  ctx: FetchContext,
  fromBlock: bigint,
  toBlock: bigint,
  logs: RawLog[],
  known: Map<bigint, RpcBlock> = new Map(),
): Promise<FetchedRange> {
  const decoded = await decodeLogs(ctx, logs)
  const needed = new Set<bigint>([fromBlock, toBlock])
  for (const e of decoded.transfers) if (!decoded.timestamps.has(e.blockNumber)) needed.add(e.blockNumber)
  for (const n of known.keys()) needed.delete(n)
  const headers = new Map(known)
  for (const [n, header] of await getHeaders(ctx.rpc, [...needed])) headers.set(n, header)
  // A log's block timestamp (a field nodes add) is one answer: taken only where it fits the
  // chain, between the range's first and last headers and in block order (transfers are
  // folded in time order: a later block dated before an earlier one would put a move before
  // the mint it follows); where it does not, the block's header is read.
  for (let suspect = outOfChainTime(decoded.timestamps, headers); suspect.length > 0; ) {
    for (const [n, header] of await getHeaders(ctx.rpc, suspect)) headers.set(n, header)
    suspect = outOfChainTime(decoded.timestamps, headers)
  }
  for (const log of logs) {
    const header = headers.get(BigInt(log.blockNumber))
    if (header && header.hash.toLowerCase() !== log.blockHash.toLowerCase()) {
      throw new ChainChangedError(
        `block ${header.number} has hash ${header.hash}, its logs say ${log.blockHash}`,
      )
    }
  }
  return {
    fromBlock,
    toBlock,
    transfers: withTimestamps(decoded.transfers, decoded.timestamps, headers),
    metadataUpdates: decoded.metadataUpdates,
    first: headers.get(fromBlock)!,
    headers: [headers.get(toBlock)!],
    logCount: logs.length,
    verified: ctx.verify,
  }
}

/** Realtime mode (unconfirmed blocks): headers already linked; logs by block hash (EIP-234). */
export async function fetchRealtimeBlocks(ctx: FetchContext, allHeaders: RpcBlock[]): Promise<FetchedRange> {
  // Each block's logs by hash and, where the node offers receipts, its proof at the same time:
  // a proven block is verified at once, so the head shows no omitted log even before it is
  // confirmed. Unproven blocks are verified once confirmed (sync/verify-confirmed.ts).
  const proving = ctx.verify && canProve(ctx.rpc)
  const [allRead, allProofs] = await Promise.all([
    Promise.all(
      allHeaders.map(async (h) => {
        let endpoint: Endpoint | undefined
        const onServed = (e: Endpoint) => {
          endpoint = e
        }
        const logs = normaliseLogs(
          await readBlockLogs(ctx.rpc, h, INDEXED_TOPICS, {
            request: { onServed },
            signal: ctx.signal,
            // With a proof at the same time, an empty answer is not read again.
            once: proving,
          }),
        )
        ctx.followed.set(h.number, { logs, endpoint })
        return logs
      }),
    ),
    proving ? Promise.all(allHeaders.map((h) => provenBlock(ctx, h.number, h.hash).catch(() => null))) : null,
  ])
  const allProven = allProofs?.every((p) => p !== null) ? (allProofs as RawLog[][]) : null
  // As many leading blocks as one commit's ERC-2309 rows allow (each block is capped on its own);
  // the syncer reads the rest in its next step. The reads of the blocks left are not kept.
  const count = blocksWithinRowBudget(allProven ?? allRead)
  for (const h of allHeaders.slice(count)) ctx.followed.delete(h.number)
  const headers = allHeaders.slice(0, count)
  const perBlock = allRead.slice(0, count)
  const provenByBlock = allProven?.slice(0, count) ?? null
  const read = normaliseLogs(perBlock.flat())
  const proven = provenByBlock ? normaliseLogs(provenByBlock.flat()) : null
  const from = headers[0]!.number
  const to = headers[headers.length - 1]!.number
  if (provenByBlock && proven) {
    // Each block's read and proof are in chain order already (normaliseLogs, provenBlock).
    const incomplete = perBlock.filter((logs, i) => !sameLogs(logs, provenByBlock[i]!)).length
    ctx.omissions.record(perBlock.length, incomplete)
    if (incomplete > 0) reportMismatch(ctx, from, to, read, proven)
  }
  const logs = proven ?? read
  const decoded = await decodeLogs(ctx, logs)
  const byNumber = new Map(headers.map((h) => [h.number, h]))
  return {
    fromBlock: from,
    toBlock: to,
    transfers: withTimestamps(decoded.transfers, decoded.timestamps, byNumber),
    metadataUpdates: decoded.metadataUpdates,
    first: headers[0]!,
    headers,
    logCount: logs.length,
    // Without verification the node is trusted.
    verified: !ctx.verify || proven !== null,
    verifiedBy: ctx.verify && proven !== null ? { method: 'receipts_proof', sampleRate: null } : undefined,
  }
}

/** How many leading blocks' logs expand to at most MAX_CONSECUTIVE_RANGE ERC-2309 rows together; at least one. */
function blocksWithinRowBudget(perBlock: RawLog[][]): number {
  let rows = 0
  for (let i = 0; i < perBlock.length; i++) {
    rows += perBlock[i]!.reduce((sum, log) => sum + consecutiveRows(log), 0)
    if (rows > Number(MAX_CONSECUTIVE_RANGE)) return Math.max(i, 1)
  }
  return perBlock.length
}

export async function decodeLogs(ctx: FetchContext, logs: RawLog[]) {
  const transfers: PendingTransfer[] = []
  const legacy: PendingTransfer[] = []
  const metadataUpdates: MetadataUpdateEvent[] = []
  const timestamps = new Map<bigint, bigint>()
  /** ERC-2309 rows of the block being decoded (logs come in chain order). */
  let block: bigint | undefined
  let consecutive = 0
  for (const log of logs) {
    const rows = consecutiveRows(log)
    if (rows > 0) {
      const number = BigInt(log.blockNumber)
      if (number !== block) [block, consecutive] = [number, 0]
      // A block's ranges expand to at most MAX_CONSECUTIVE_RANGE rows; the logs past that are refused
      // like a range over it alone: a decision of the block's own logs, the same on every read.
      if (consecutive + rows > Number(MAX_CONSECUTIVE_RANGE)) {
        ctx.logger.warn(
          { block: number.toString(), contract: log.address, rows },
          'ERC-2309 range refused: its block already expands to the most rows one block may',
        )
        continue
      }
      consecutive += rows
    }
    const decoded = decodeLog(log)
    if (!decoded) continue
    if (log.blockTimestamp) timestamps.set(BigInt(log.blockNumber), BigInt(log.blockTimestamp))
    if (decoded.kind === 'transfers') for (const e of decoded.events) transfers.push(e)
    else if (decoded.kind === 'legacy-transfer') legacy.push(decoded.event)
    else metadataUpdates.push(decoded.event)
  }
  for (const e of await ctx.classifier.keepNftTransfers(legacy)) transfers.push(e)
  return { transfers, metadataUpdates, timestamps }
}

/**
 * The blocks whose claimed timestamp (no header read for them) breaks the chain's order with
 * its neighbours, headers included: both sides of every inversion, since either may be the
 * lie. Each round reads at least one header, so rangeFromLogs's loop ends.
 */
function outOfChainTime(claimed: Map<bigint, bigint>, headers: Map<bigint, RpcBlock>): bigint[] {
  const times = [
    ...[...headers.values()].map((h) => ({ n: h.number, ts: h.timestamp, read: true })),
    ...[...claimed].filter(([n]) => !headers.has(n)).map(([n, ts]) => ({ n, ts, read: false })),
  ].sort((a, b) => (a.n < b.n ? -1 : a.n > b.n ? 1 : 0))
  const suspect = new Set<bigint>()
  for (let i = 1; i < times.length; i++) {
    const [earlier, later] = [times[i - 1]!, times[i]!]
    if (earlier.ts <= later.ts) continue
    if (!earlier.read) suspect.add(earlier.n)
    if (!later.read) suspect.add(later.n)
  }
  return [...suspect]
}

function withTimestamps(
  pending: PendingTransfer[],
  timestamps: Map<bigint, bigint>,
  headers: Map<bigint, RpcBlock>,
): TransferEvent[] {
  const out = pending.map((e) => {
    // The header's, where it was read (linked by hash), over the one the logs claim.
    const ts = headers.get(e.blockNumber)?.timestamp ?? timestamps.get(e.blockNumber)
    if (ts === undefined) throw new IndexerError(`No timestamp for block ${e.blockNumber}`)
    return withBlockTimestamp(e, ts)
  })
  return out.sort(compareChainOrder)
}

/**
 * Block headers by number, requested together so the transport sends them as
 * JSON-RPC batches. A block a node does not have yet (a load-balanced
 * backend behind the others) is asked again briefly (getServedBlock): near
 * the head that is lag, never a sign of a reorganisation.
 */
export async function getHeaders(rpc: Rpc, numbers: bigint[]): Promise<Map<bigint, RpcBlock>> {
  const blocks = await Promise.all(numbers.map((n) => getServedBlock(rpc, n)))
  const out = new Map<bigint, RpcBlock>()
  blocks.forEach((b, i) => {
    if (!b) throw new ChainChangedError(`block ${numbers[i]} is not available yet`)
    out.set(b.number, b)
  })
  return out
}

export const toHex = (n: bigint): Hex => `0x${n.toString(16)}`
