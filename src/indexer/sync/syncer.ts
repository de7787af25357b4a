import type pg from 'pg'
import type { VerifiedSpan } from '@/db/queries/indexer-state'
import { IndexerError } from '../errors'
import { type CommitResult, type OpenCommit, startCommit } from '../store/commit'
import type { ProofSampleOptions } from '../verify/proof-sample'
import type { FetchContext, FetchedRange } from './fetch'
import type { BackfillProgress } from './progress'

export interface SyncOptions {
  network: string
  startBlock: bigint
  confirmations: bigint
  /** Block hashes kept below the confirmed block, for deeper-than-expected reorgs. */
  keepBlocks: bigint
  pollIntervalMs: number
  /**
   * Backfill ranges reading at once: as many as the endpoints take requests at
   * once (their AIMD limits, EndpointPool.capacity), within [min, max] (`max`
   * bounds the memory of raw answers); read and waiting for their commit
   * together, at most max too (their decoded logs are the rest of it; reads
   * further ahead only take CPU from the commits they wait for).
   */
  rangesInFlight: { min: number; max: number }
  /** Backfill ranges merged into one commit up to this many events. */
  maxEventsPerCommit: number
  /** Blocks read per realtime step. */
  realtimeBatch: number
  /** First eth_getLogs span and the most it may grow to. */
  initialRange: bigint
  maxRange: bigint
  /** Read every range twice before it counts as confirmed (docs/indexer.md, "Verification"). */
  verify: boolean
  /** CHAIN_ID, which every endpoint must keep answering (asked with each head). */
  chainId: number
  /** Backfill blocks proven by receipts on top of agreeing reads (verify/proof-sample.ts). */
  proofSample: ProofSampleOptions
}

/** Mutable state of the sync loop, shared by the historical and realtime steps. */
export interface Syncer {
  ctx: FetchContext & { pool: pg.Pool }
  options: SyncOptions
  /** Last indexed block and its hash (null hash when not stored). */
  tip: { number: bigint; hash: string | null } | null
  /** End of the verified prefix (last_verified_block). */
  verifiedThrough: bigint | null
  head: { lastSeenBlock: bigint; chainConfirmedBlock: bigint }
  progress: BackfillProgress
  /** True while the loop is backfilling (other work in the process yields to it). */
  backfilling: boolean
  /** Called after each commit (benchmarks measure head-follow latency with it). */
  onCommit?: (info: { fromBlock: bigint; toBlock: bigint; transfers: number }) => void
}

/** A new block does not build on the stored tip. */
export class ReorgDetectedError extends IndexerError {
  constructor(readonly atBlock: bigint) {
    super(`Reorganisation detected at block ${atBlock}`)
    this.name = 'ReorgDetectedError'
  }
}

export const cursorOf = (s: Syncer) => (s.tip ? s.tip.number + 1n : s.options.startBlock)

export const transfersOf = (ranges: FetchedRange[]) => ranges.flatMap((r) => r.transfers)

/** Commits fetched ranges as one transaction (both halves of the commit at once). */
export async function commitFetched(s: Syncer, ranges: FetchedRange[]): Promise<void> {
  await finishFetched(s, ranges, await startCommit(s.ctx.pool, transfersOf(ranges)))
}

/**
 * Checks that the ranges link by parent hash to the stored tip and to each
 * other, then finishes their open commit (aborted on any failure).
 */
export async function finishFetched(s: Syncer, ranges: FetchedRange[], open: OpenCommit): Promise<void> {
  let prev = s.tip
  const transfers = ranges.reduce((n, r) => n + r.transfers.length, 0)
  const started = performance.now()
  let progress: CommitResult
  try {
    for (const r of ranges) {
      if (prev?.hash && prev.number === r.fromBlock - 1n && r.first.parentHash.toLowerCase() !== prev.hash) {
        throw new ReorgDetectedError(r.fromBlock)
      }
      const last = r.headers[r.headers.length - 1]!
      prev = { number: r.toBlock, hash: last.hash.toLowerCase() }
    }
    progress = await open.finish(
      {
        network: s.options.network,
        startBlock: s.options.startBlock,
        expectedLastIndexed: s.tip?.number ?? null,
        keepBlocks: s.options.keepBlocks,
      },
      {
        fromBlock: ranges[0]!.fromBlock,
        toBlock: ranges[ranges.length - 1]!.toBlock,
        metadataUpdates: ranges.flatMap((r) => r.metadataUpdates),
        blocks: ranges.flatMap((r) => r.headers),
        ...s.head,
        verified: ranges.every((r) => r.verified),
        verifiedBy: spansOf(ranges),
      },
    )
  } finally {
    await open.abort()
  }
  s.ctx.logger.debug(
    {
      fromBlock: ranges[0]!.fromBlock.toString(),
      toBlock: prev!.number.toString(),
      transfers,
      ms: Math.round(performance.now() - started),
    },
    'committed',
  )
  s.tip = prev
  s.verifiedThrough = progress.lastVerifiedBlock
  forgetVerifiedReads(s)
  // Filling a gap joins the range above it: continue from the end of the joined range.
  if (progress.joinedTipHash !== undefined && progress.lastIndexedBlock !== null) {
    s.tip = { number: progress.lastIndexedBlock, hash: progress.joinedTipHash }
  }
  s.onCommit?.({ fromBlock: ranges[0]!.fromBlock, toBlock: prev!.number, transfers })
}

/** How each range was verified, as spans (a range verified without a method names none). */
function spansOf(ranges: FetchedRange[]): VerifiedSpan[] {
  const spans: VerifiedSpan[] = []
  for (const r of ranges) if (r.verifiedBy) spans.push({ from: r.fromBlock, to: r.toBlock, ...r.verifiedBy })
  return spans
}

/** The reads of followed blocks are kept only until those blocks are verified. */
export function forgetVerifiedReads(s: Syncer): void {
  const verified = s.verifiedThrough
  if (verified === null) return
  for (const n of s.ctx.followed.keys()) if (n <= verified) s.ctx.followed.delete(n)
}
