/**
 * Reads of a block range that count as verified (docs/indexer.md,
 * "Verification"): independent reads that agree on the full identity of
 * every log (two, or more for few logs or a provider seen leaving logs out:
 * verify/omission-rate.ts), each read preferring another endpoint than the
 * one before; disagreements settled by receipts proof where the node offers it,
 * and a random sample of blocks proven as well (verify/proof-sample.ts).
 */
import type { Logger } from 'pino'
import type { VerificationMethod } from '@/db/queries/indexer-state'
import type { RawLog } from '../chain'
import { IndexerError } from '../errors'
import { INDEXED_TOPICS } from '../events/topics'
import type { RequestOptions, Rpc } from '../rpc/client'
import { Endpoint } from '../rpc/endpoint'
import { type AdaptiveRange, fetchLogs } from '../rpc/get-logs'
import { TwinReads } from '../rpc/transport'
import {
  forEachDifference,
  InconsistentLogsError,
  mergeLogs,
  normaliseLogs,
  renumberedLog,
  sameLogs,
} from './log-set'
import { MAX_AGREEING, type OmissionRate } from './omission-rate'
import type { ProofPolicy } from './proof-sample'
import { canProve, provenBlock, provenBlocks, provenRange } from './proven-logs'

/** Reads of one range before giving up for this step (the step is retried). */
const MAX_READS = 2 * MAX_AGREEING
/** Below this many logs a range is cheap to prove by receipts (where the node offers them)... */
export const FEW_LOGS = 16
/** ...when it also spans fewer blocks than this. */
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
  /** How often answers left logs out lately: how many reads must agree. */
  omissions: OmissionRate
  /** Told of every disagreement between two reads of one range. */
  onMismatch?: (mismatch: LogMismatch) => void
  /** Which backfill blocks are proven by receipts on top of agreeing reads: a sample, or all of them. */
  proofs?: ProofPolicy
}

/** A range's verified logs and how they were verified. */
export interface VerifiedLogs {
  logs: RawLog[]
  method: VerificationMethod
  /** Share of blocks proven at random on top of the reads; null when none were. */
  sampleRate: number | null
}

export class VerificationError extends IndexerError {
  constructor(fromBlock: bigint, toBlock: bigint, detail = `no ${MAX_READS} reads settled on one answer`) {
    super(`Blocks ${fromBlock}..${toBlock} not verified: ${detail}`)
    this.name = 'VerificationError'
  }
}

/** One read of [fromBlock, toBlock]'s indexed logs, split into as many requests as the provider needs. */
export function readLogs(
  ctx: Omit<LogReader, 'omissions' | 'onMismatch'>,
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
 * reads agree, and its sampled blocks are proven (withSampledProof). Once the
 * log index is not trusted, every block is proven and nothing is read.
 */
export async function readVerifiedLogs(
  ctx: LogReader,
  fromBlock: bigint,
  toBlock: bigint,
): Promise<VerifiedLogs> {
  if (ctx.proofs?.untrusted && canProve(ctx.rpc)) return proveEveryBlock(ctx, fromBlock, toBlock)
  const likely = ctx.rpc.pool.pick()
  const firstBy = new Set<Endpoint>()
  const secondBy = new Set<Endpoint>()
  // Both reads reach the provider; an answer identical to its twin's, byte for byte, is parsed once.
  const twin = new TwinReads()
  const [first, second] = await Promise.all([
    readLogs(ctx, fromBlock, toBlock, { twin, onServed: (e) => firstBy.add(e) }),
    readLogs(ctx, fromBlock, toBlock, {
      avoid: likely instanceof Endpoint ? new Set([likely]) : undefined,
      onServed: (e) => secondBy.add(e),
      twin,
    }),
  ])
  if (first.length < FEW_LOGS && toBlock - fromBlock < PROVEN_SPAN && canProve(ctx.rpc)) {
    const proven = await provenRange(ctx, fromBlock, toBlock)
    if (proven) {
      let incomplete = 0
      for (const read of [first, second]) {
        if (sameLogs(read, proven)) continue
        incomplete++
        reportMismatch(ctx, fromBlock, toBlock, read, proven)
      }
      ctx.omissions.record(2, incomplete)
      await checkLogIndex(ctx, [first, second], proven)
      return { logs: proven, method: 'receipts_proof', sampleRate: null }
    }
  }
  // The common case: two identical reads, each then the whole union, settle at once
  // (compared field by field, nothing allocated per log) unless the range has so few logs,
  // or the provider drops them so often, that two reads may well leave out the same one.
  const servedBy = new Set([...firstBy, ...secondBy])
  let agreed = first
  if (sameLogs(first, second) && ctx.omissions.readsNeeded(first.length) <= 2) ctx.omissions.record(2, 0)
  else agreed = await readAgreedLogs(ctx, fromBlock, toBlock, [first, second], secondBy, servedBy)
  return withSampledProof(ctx, fromBlock, toBlock, agreed, servedBy.size > 1)
}

/** Every block of [from, to] proven by its receipts. */
async function proveEveryBlock(ctx: LogReader, from: bigint, to: bigint): Promise<VerifiedLogs> {
  const proven = await provenRange(ctx, from, to)
  if (!proven) throw new VerificationError(from, to, 'a block could not be proven by its receipts')
  return { logs: proven, method: 'receipts_proof', sampleRate: null }
}

/**
 * Agreed reads of [from, to] whose sampled blocks (ProofPolicy) are proven
 * by receipts too. A proof that differs from the reads shows a log index
 * that lacks logs however often it is read: it is not trusted any more, and
 * the whole range is proven (docs/indexer.md, "Verification").
 */
async function withSampledProof(
  ctx: LogReader,
  from: bigint,
  to: bigint,
  agreed: RawLog[],
  twoEndpoints: boolean,
): Promise<VerifiedLogs> {
  const readsOnly: VerifiedLogs = {
    logs: agreed,
    method: twoEndpoints ? 'second_endpoint' : 'repeated_reads',
    sampleRate: null,
  }
  const policy = ctx.proofs
  if (!policy || !canProve(ctx.rpc)) return readsOnly
  // Settling these reads showed the log index lacking logs: the range is proven instead.
  if (policy.untrusted) return proveEveryBlock(ctx, from, to)
  if (policy.rate === 0) return readsOnly
  const proven = await provenBlocks(ctx, policy.sampled(from, to))
  // Not proven (the node lost its receipts, or a block changed): no sample is claimed.
  if (!proven) return readsOnly
  policy.provenSamples += proven.size
  for (const [number, logs] of proven) {
    const read = agreed.filter((l) => BigInt(l.blockNumber) === number)
    if (sameLogs(read, logs)) continue
    reportMismatch(ctx, number, number, read, logs)
    distrustLogIndex(
      ctx,
      `sampled proof of block ${number} disagrees with the agreed reads (${read.length} logs read, ${logs.length} proven)`,
    )
    return proveEveryBlock(ctx, from, to)
  }
  return { ...readsOnly, method: twoEndpoints ? 'second_endpoint' : 'sampled_proof', sampleRate: policy.rate }
}

/**
 * Reads [from, to] until the answer is settled (`earlier` reads count); each
 * read prefers endpoints other than the previous read's.
 *
 * Providers leave logs out; they do not invent them. So the answer is the
 * union of every read (one chain: two different logs at one position are
 * refused), and it is settled once enough reads each held all of it: two, or
 * more when the range has few logs or answers lately left logs out often
 * (readsNeeded; a read is complete with probability about 1 − p, n complete
 * reads that all miss the same log need every read to miss it).
 * Agreeing on a subset is never enough: when every read leaves some log out,
 * no answer is settled and the step is retried later. When two reads
 * disagree, the blocks they disagree on are settled by receipts proof if the
 * node offers it.
 *
 * `kept` is the one read stored rows were committed from (blocks followed at
 * the head), counted as the first read. A later read that holds another log
 * at one of its positions, or one of its logs only at another position (a
 * free one in the kept read), shows one of the two lying; the kept read is then
 * set aside (counted as an incomplete answer, so the range needs more reads)
 * and the answer is settled from the other reads alone: a kept read that lied
 * cannot hold agreement back on every retry, and it is never accepted on its
 * own (docs/indexer.md, "Verification").
 */
export async function readAgreedLogs(
  ctx: LogReader,
  fromBlock: bigint,
  toBlock: bigint,
  earlier: RawLog[][] = [],
  firstAvoid: ReadonlySet<Endpoint> = new Set(),
  /** Collects every endpoint that served a read. */
  servedBy: Set<Endpoint> = new Set(),
  /** The one read stored rows were committed from: the first read, set aside on a conflict (above). */
  kept?: RawLog[],
): Promise<RawLog[]> {
  const reads: RawLog[][] = []
  /** Every log any read held, in chain order. */
  let all: RawLog[] = []
  /** The kept read while it counts, and whether it was set aside (an incomplete answer). */
  let keptRead: RawLog[] | null = null
  let setAside = 0
  const setKeptAside = (detail: string) => {
    setAside = 1
    ctx.logger.warn(
      { fromBlock: fromBlock.toString(), toBlock: toBlock.toString() },
      `verification: the read blocks ${fromBlock}..${toBlock} were committed from conflicts with a later read (${detail}); set aside, settling from the other reads`,
    )
  }
  /** Counts one more read; returns the answer once it is settled. */
  const consider = async (answer: RawLog[], isKept = false): Promise<RawLog[] | null> => {
    let logs: RawLog[]
    try {
      logs = normaliseLogs(answer)
    } catch (err) {
      if (!isKept || !(err instanceof InconsistentLogsError)) throw err
      setKeptAside(err.message)
      return null
    }
    let previous = reads[reads.length - 1]
    reads.push(logs)
    if (isKept) keptRead = logs
    let conflict: string | undefined
    try {
      all = normaliseLogs(mergeLogs(all, logs))
      // The kept read and this later one tell one log at two positions (the kept read's other
      // position free, so no two logs meet at one): one of the two numbered it wrongly.
      if (keptRead && !isKept) conflict = renumberedLog(keptRead, logs)
    } catch (err) {
      if (!keptRead || !(err instanceof InconsistentLogsError)) throw err
      conflict = err.message
    }
    if (keptRead && conflict !== undefined) {
      // Another log at a position of the kept read, or one of its logs at another position:
      // one of the two lied, and the kept read is one answer that no other backs. The union
      // of the other reads (refused if they too hold two logs at one position) is what
      // counts from now on.
      const conflicting: RawLog[] = keptRead
      reads.splice(reads.indexOf(conflicting), 1)
      keptRead = null
      let others: RawLog[] = []
      for (const read of reads) others = normaliseLogs(mergeLogs(others, read))
      reportMismatch(ctx, fromBlock, toBlock, conflicting, logs)
      setKeptAside(conflict)
      all = others
      previous = reads[reads.length - 2]
    }
    const complete = reads.filter((read) => read.length === all.length && sameLogs(read, all)).length
    const incomplete = reads.length - complete
    const answers = reads.length + setAside
    if (complete >= ctx.omissions.readsNeeded(all.length, answers, incomplete + setAside)) {
      ctx.omissions.record(answers, incomplete + setAside)
      return all
    }
    if (!previous || sameLogs(previous, logs)) return null
    reportMismatch(ctx, fromBlock, toBlock, previous, logs)
    const settled = await settleByReceipts(ctx, previous, logs)
    if (!settled) return null
    ctx.omissions.record(answers, reads.filter((read) => !sameLogs(read, settled)).length + setAside)
    await checkLogIndex(ctx, reads, settled)
    return settled
  }
  if (kept) {
    const settled = await consider(kept, true)
    if (settled) return settled
  }
  for (const logs of earlier) {
    const settled = await consider(logs)
    if (settled) return settled
  }
  let avoid = firstAvoid
  while (reads.length < MAX_READS) {
    const served = new Set<Endpoint>()
    const settled = await consider(
      await readLogs(ctx, fromBlock, toBlock, {
        avoid,
        onServed: (e) => {
          served.add(e)
          servedBy.add(e)
        },
      }),
    )
    if (settled) return settled
    avoid = served
  }
  throw new VerificationError(fromBlock, toBlock)
}

/**
 * A proof that holds logs every read lacked: reads that left out the same
 * log by chance, or a log index that lacks it (verify/proof-sample.ts). The
 * blocks of those logs are read again until a read holds them (chance) or so
 * many reads lacked them that chance is ruled out (readsNeeded, the reads
 * before counting): then the log index is not trusted. Costs nothing while
 * reads hold every proven log.
 */
async function checkLogIndex(ctx: LogReader, reads: RawLog[][], proven: RawLog[]): Promise<void> {
  if (!ctx.proofs || ctx.proofs.untrusted) return
  let lacked = proven
  for (const read of reads) lacked = logsOnlyIn(lacked, read)
  if (lacked.length === 0) return
  const from = BigInt(lacked[0]!.blockNumber)
  const to = BigInt(lacked[lacked.length - 1]!.blockNumber)
  const logsThere = proven.filter((l) => BigInt(l.blockNumber) >= from && BigInt(l.blockNumber) <= to)
  const needed = ctx.omissions.readsNeeded(logsThere.length)
  for (let lacking = reads.length; lacking < needed; lacking++) {
    lacked = logsOnlyIn(lacked, normaliseLogs(await readLogs(ctx, from, to)))
    if (lacked.length === 0) return
  }
  distrustLogIndex(
    ctx,
    `receipts of blocks ${from}..${to} hold ${lacked.length} logs that ${Math.max(needed, reads.length)} reads all lacked`,
  )
}

/** The logs of normalised `a` that normalised `b` does not hold. */
function logsOnlyIn(a: RawLog[], b: RawLog[]): RawLog[] {
  const out: RawLog[] = []
  forEachDifference(
    a,
    b,
    (log) => out.push(log),
    () => undefined,
  )
  return out
}

/** A proof showed the log index lacking logs: every block is proven from now on. */
function distrustLogIndex(ctx: LogReader, evidence: string) {
  ctx.logger.warn(
    `verification: ${evidence}: the log index is not trusted, every block is proven from now on`,
  )
  ctx.proofs?.distrust()
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
  const blocks = new Set<bigint>()
  const dispute = (log: RawLog) => blocks.add(BigInt(log.blockNumber))
  forEachDifference(a, b, dispute, dispute)
  return [...blocks].sort((x, y) => (x < y ? -1 : 1))
}

/** Tells the reader's onMismatch how two answers for one range differ. */
export function reportMismatch(ctx: LogReader, fromBlock: bigint, toBlock: bigint, a: RawLog[], b: RawLog[]) {
  ctx.onMismatch?.({
    fromBlock,
    toBlock,
    ...logsDifference(a, b),
    repaired: false,
  })
}

/** How many logs normalised answer `earlier` had that `later` did not, both ways. */
function logsDifference(earlier: RawLog[], later: RawLog[]) {
  let missing = 0
  let extra = 0
  forEachDifference(
    earlier,
    later,
    () => missing++,
    () => extra++,
  )
  return { missing, extra }
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
