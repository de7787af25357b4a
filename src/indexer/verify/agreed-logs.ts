/**
 * Reads of a block range that count as verified (docs/indexer.md,
 * "Verification"): two independent reads that agree on the full identity of
 * every log (three when there are few logs), each read preferring another
 * endpoint than the one before; disagreements settled by receipts proof
 * where the node offers it.
 */
import type { Logger } from 'pino'
import { IndexerError } from '../errors'
import { INDEXED_TOPICS } from '../events/topics'
import type { RawLog, RequestOptions, Rpc } from '../rpc/client'
import { Endpoint } from '../rpc/endpoint'
import { type AdaptiveRange, fetchLogs, logIdentity, normaliseLogs, sameLogs } from '../rpc/get-logs'
import { TwinReads } from '../rpc/transport'
import { canProve, provenBlock, provenRange } from './proven-logs'

/** Reads of one range before giving up for this step (the step is retried). */
const MAX_READS = 6
/**
 * Below this many logs, three reads must agree instead of two: two reads
 * leaving out the same log agree wrongly with a chance of about p²/k (k logs,
 * p the omission rate per answer); three, about p³/k².
 */
export const FEW_LOGS = 16
/** A range of fewer blocks than this with few logs is proven by receipts rather than read again. */
export const PROVEN_SPAN = 50n

export interface LogMismatch {
  fromBlock: bigint
  toBlock: bigint
  /** Logs (or rows) the earlier answer had and the later did not, and the other way round. */
  missing: number
  extra: number
  /** Whether stored rows had to be repaired. */
  repaired: boolean
}

export interface LogReader {
  rpc: Rpc
  range: AdaptiveRange
  logger: Logger
  signal?: AbortSignal
  /** Told of every disagreement between two reads of one range. */
  onMismatch?: (mismatch: LogMismatch) => void
}

export class VerificationError extends IndexerError {
  constructor(fromBlock: bigint, toBlock: bigint) {
    super(`No two of ${MAX_READS} reads of blocks ${fromBlock}..${toBlock} agreed`)
    this.name = 'VerificationError'
  }
}

/** One read of [fromBlock, toBlock]'s indexed logs, split into as many requests as the provider needs. */
export function readLogs(
  ctx: LogReader,
  fromBlock: bigint,
  toBlock: bigint,
  request?: RequestOptions,
): Promise<RawLog[]> {
  return fetchLogs(ctx.rpc, fromBlock, toBlock, {
    topics: INDEXED_TOPICS,
    range: ctx.range,
    logger: ctx.logger,
    signal: ctx.signal,
    request,
  })
}

/**
 * The verified logs of a backfill range: two reads at once (with a provider,
 * latency is what a second read costs), the second preferring another
 * endpoint than the one the first is likely to get. A range with few logs
 * and few blocks is proven by receipts where the node offers them (cheap and
 * certain when there is little to prove); any other range is read until
 * reads agree.
 */
export async function readVerifiedLogs(
  ctx: LogReader,
  fromBlock: bigint,
  toBlock: bigint,
): Promise<RawLog[]> {
  const likely = ctx.rpc.pool.pick()
  const secondBy = new Set<Endpoint>()
  // Both reads reach the provider; an answer identical to its twin's, byte for byte, is parsed once.
  const twin = new TwinReads()
  const [first, second] = await Promise.all([
    readLogs(ctx, fromBlock, toBlock, { twin }),
    readLogs(ctx, fromBlock, toBlock, {
      avoid: likely instanceof Endpoint ? new Set([likely]) : undefined,
      onServed: (e) => secondBy.add(e),
      twin,
    }),
  ])
  if (first.length < FEW_LOGS && toBlock - fromBlock < PROVEN_SPAN && canProve(ctx.rpc)) {
    const proven = await provenRange(ctx, fromBlock, toBlock)
    if (proven) {
      for (const read of [first, second])
        if (!sameLogs(read, proven)) reportMismatch(ctx, fromBlock, toBlock, read, proven)
      return proven
    }
  }
  // The common case: two identical reads, each then the whole union, settle at once
  // (compared field by field, nothing allocated per log).
  if (first.length >= FEW_LOGS && sameLogs(first, second)) return first
  return readAgreedLogs(ctx, fromBlock, toBlock, [first, second], secondBy)
}

/**
 * Reads [from, to] until the answer is settled (`earlier` reads count); each
 * read prefers endpoints other than the previous read's.
 *
 * Providers leave logs out; they do not invent them. So the answer is the
 * union of every read (one chain: two different logs at one position are
 * refused), and it is settled once two reads each held all of it — three when
 * there are few logs (a read is complete with probability about 1 − p, two
 * complete reads that both miss the same log need every read to miss it).
 * Agreeing on a subset is never enough: when every read leaves some log out,
 * no answer is settled and the step is retried later. When two reads
 * disagree, the blocks they disagree on are settled by receipts proof if the
 * node offers it.
 */
export async function readAgreedLogs(
  ctx: LogReader,
  fromBlock: bigint,
  toBlock: bigint,
  earlier: RawLog[][] = [],
  firstAvoid: ReadonlySet<Endpoint> = new Set(),
): Promise<RawLog[]> {
  const reads: RawLog[][] = []
  const union = new Map<string, RawLog>()
  /** Counts one more read; returns the answer once it is settled. */
  const consider = async (logs: RawLog[]): Promise<RawLog[] | null> => {
    const previous = reads[reads.length - 1]
    reads.push(logs)
    for (const log of logs) union.set(logIdentity(log), log)
    const all = normaliseLogs([...union.values()])
    const complete = reads.filter((read) => read.length === all.length && sameLogs(read, all)).length
    if (complete >= (all.length < FEW_LOGS ? 3 : 2)) return all
    if (!previous || sameLogs(previous, logs)) return null
    reportMismatch(ctx, fromBlock, toBlock, previous, logs)
    return settleByReceipts(ctx, previous, logs)
  }
  for (const logs of earlier) {
    const settled = await consider(logs)
    if (settled) return settled
  }
  let avoid = firstAvoid
  while (reads.length < MAX_READS) {
    const servedBy = new Set<Endpoint>()
    const settled = await consider(
      await readLogs(ctx, fromBlock, toBlock, { avoid, onServed: (e) => servedBy.add(e) }),
    )
    if (settled) return settled
    avoid = servedBy
  }
  throw new VerificationError(fromBlock, toBlock)
}

/**
 * The logs of two disagreeing reads with every disputed block replaced by
 * its proven logs; null when a proof is not available (the caller reads again).
 */
async function settleByReceipts(ctx: LogReader, a: RawLog[], b: RawLog[]): Promise<RawLog[] | null> {
  if (!canProve(ctx.rpc)) return null
  const disputed = disputedBlocks(a, b)
  const proven = new Map<bigint, RawLog[]>()
  for (const number of disputed) {
    const logs = await provenBlock(ctx, number)
    if (!logs) return null
    proven.set(number, logs)
  }
  ctx.logger.info({ blocks: disputed.map(String) }, 'verification: disputed blocks settled by receipts proof')
  const agreed = a.filter((l) => !proven.has(BigInt(l.blockNumber)))
  for (const logs of proven.values()) agreed.push(...logs)
  return normaliseLogs(agreed)
}

function disputedBlocks(a: RawLog[], b: RawLog[]): bigint[] {
  const left = new Set(a.map(logIdentity))
  const right = new Set(b.map(logIdentity))
  const blocks = new Set<bigint>()
  for (const l of a) if (!right.has(logIdentity(l))) blocks.add(BigInt(l.blockNumber))
  for (const l of b) if (!left.has(logIdentity(l))) blocks.add(BigInt(l.blockNumber))
  return [...blocks].sort((x, y) => (x < y ? -1 : 1))
}

/** Tells the reader's onMismatch how two answers for one range differ. */
export function reportMismatch(ctx: LogReader, fromBlock: bigint, toBlock: bigint, a: RawLog[], b: RawLog[]) {
  ctx.onMismatch?.({
    fromBlock,
    toBlock,
    ...difference(a.map(logIdentity), b.map(logIdentity)),
    repaired: false,
  })
}

/** How many identities one answer had that the other did not, both ways. */
export function difference(earlier: string[], later: string[]) {
  const left = new Set(earlier)
  const right = new Set(later)
  return {
    missing: earlier.filter((id) => !right.has(id)).length,
    extra: later.filter((id) => !left.has(id)).length,
  }
}
