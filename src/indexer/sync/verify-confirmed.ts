/**
 * Confirmed means verified (docs/indexer.md, "Verification"). Backfill
 * ranges are verified before they are committed (verify/agreed-logs.ts);
 * blocks followed at the head are committed on one read, and this step of
 * the sync loop verifies them once they reach the confirmation depth: by
 * receipts proof where the node offers it, else by re-reads compared with
 * the stored rows. Stored rows that differ from the verified answer are
 * repaired in one transaction through the reorg rollback path. Once a proof
 * showed the log index lacking logs, blocks verified by reads are proven
 * again the same way (reproveReadSpans).
 */
import type { VerifiedSpan } from '@/db/queries/indexer-state'
import type { RawLog } from '../chain'
import type { Endpoint } from '../rpc/endpoint'
import { commitWithin } from '../store/commit'
import { withWriteTransaction } from '../store/db'
import { rollbackWithin } from '../store/rollback'
import {
  countVerificationMismatch,
  readVerificationSpans,
  storedHashes,
  updateProgress,
} from '../store/state'
import { storedTransferKeys, transferKey } from '../store/transfers'
import { storedUriKeys, uriKeysOf } from '../store/uri-events'
import { firstUnproven } from '../store/verification-spans'
import { minBig } from '../util/bigint'
import {
  difference,
  type LogMismatch,
  PROVEN_SPAN,
  readAgreedLogs,
  VerificationError,
} from '../verify/agreed-logs'
import { canProve, provenRange } from '../verify/proven-logs'
import { decodeLogs, getHeaders, rangeFromLogs } from './fetch'
import { forgetVerifiedReads, ReorgDetectedError, type Syncer } from './syncer'

/** Blocks verified per step by re-reads (a proof takes one request per block: PROVEN_SPAN). */
const REREAD_SPAN = 2_000n

/** The next blocks that reached the confirmation depth unverified are verified (or repaired). */
export async function verifyConfirmedBlocks(s: Syncer): Promise<void> {
  if (!s.ctx.verify || !s.tip) return
  const from = (s.verifiedThrough ?? s.options.startBlock - 1n) + 1n
  const withProof = canProve(s.ctx.rpc)
  const to = minBig(
    minBig(s.tip.number, s.head.chainConfirmedBlock),
    from + (withProof ? PROVEN_SPAN : REREAD_SPAN) - 1n,
  )
  if (to < from) return
  // A proof by receipts where the node offers them; else reads until settled, the stored
  // rows' own read counting as the first when this process made it. That read is one
  // answer: a later read holding another log at one of its positions sets it aside (it
  // lied, or the later read did), and fresh reads settle alone; the stored rows are then
  // compared with their answer and repaired where they differ. Kept as the first read,
  // a lie in it would refuse every union, on every retry, until a restart.
  const proven = withProof ? await provenRange(s.ctx, from, to) : null
  if (proven) return settleStored(s, { from, to, method: 'receipts_proof', sampleRate: null }, proven)
  const first = firstReaders(s, from, to)
  const servedBy = new Set(first)
  const agreed = await readAgreedLogs(s.ctx, from, to, [], first, servedBy, firstRead(s, from, to))
  const method = servedBy.size > 1 ? 'second_endpoint' : 'repeated_reads'
  return settleStored(s, { from, to, method, sampleRate: null }, agreed)
}

/**
 * After a proof showed the log index lacking logs that agreeing reads did
 * not (verify/proof-sample.ts), the verified blocks that rest on reads are
 * proven too, PROVEN_SPAN at a time from the oldest, and repaired where they
 * differ (docs/indexer.md, "Verification").
 */
export async function reproveReadSpans(s: Syncer): Promise<void> {
  if (!s.ctx.verify || !s.ctx.proofs?.untrusted || !canProve(s.ctx.rpc) || s.verifiedThrough === null) return
  const span = firstUnproven(await readVerificationSpans(s.ctx.pool, s.options.network), s.verifiedThrough)
  if (!span) return
  const from = span.from
  const to = minBig(span.to, from + PROVEN_SPAN - 1n)
  const proven = await provenRange(s.ctx, from, to)
  if (!proven) throw new VerificationError(from, to, 'a block could not be proven by its receipts')
  s.ctx.logger.info(
    { fromBlock: from.toString(), toBlock: to.toString(), was: span.method },
    `verification: blocks ${from}..${to}, verified by reads of a log index no longer trusted, proven by receipts`,
  )
  await settleStored(s, { from, to, method: 'receipts_proof', sampleRate: null }, proven)
}

/**
 * Compares the stored rows of span's blocks with their verified logs:
 * the same, the span counts as verified by its method; else the rows are
 * repaired from the verified logs.
 */
async function settleStored(s: Syncer, span: VerifiedSpan, verified: RawLog[]): Promise<void> {
  const { from, to } = span
  const headers = await getHeaders(s.ctx.rpc, [from, to])
  await expectStoredHashes(s, [...headers.values()])
  await expectStoredHashes(s, logBlocks(verified))
  const stored = [
    ...(await storedTransferKeys(s.ctx.pool, {
      fromBlock: from,
      toBlock: to,
      since: headers.get(from)!.timestamp,
      until: headers.get(to)!.timestamp,
    })),
    // URI events are stored chain data too (erc1155_uris): one left out is repaired like a transfer.
    ...(await storedUriKeys(s.ctx.pool, { fromBlock: from, toBlock: to })),
  ].sort()
  const verifiedKeys = await keysOf(s, verified)
  if (!sameKeys(stored, verifiedKeys)) {
    s.ctx.onMismatch?.({ fromBlock: from, toBlock: to, ...difference(stored, verifiedKeys), repaired: true })
    return repair(s, span, verified)
  }
  const progress = await withWriteTransaction(s.ctx.pool, (client) =>
    updateProgress(client, {
      network: s.options.network,
      startBlock: s.options.startBlock,
      ...s.head,
      verified: { from, to, by: [span] },
    }),
  )
  s.verifiedThrough = progress.lastVerifiedBlock
  forgetVerifiedReads(s)
}

/** The endpoints that read these blocks first: a verification read prefers another. */
function firstReaders(s: Syncer, from: bigint, to: bigint): Set<Endpoint> {
  const avoid = new Set<Endpoint>()
  for (let n = from; n <= to; n++) {
    const endpoint = s.ctx.followed.get(n)?.endpoint
    if (endpoint) avoid.add(endpoint)
  }
  return avoid
}

/**
 * The stored rows' read of these blocks, when this process followed all of them (not after
 * a restart): kept, not trusted (readAgreedLogs sets it aside when a later read conflicts).
 */
function firstRead(s: Syncer, from: bigint, to: bigint): RawLog[] | undefined {
  const logs: RawLog[] = []
  for (let n = from; n <= to; n++) {
    const block = s.ctx.followed.get(n)
    if (!block) return undefined
    for (const log of block.logs) logs.push(log)
  }
  return logs
}

/**
 * Replaces the stored rows of [from, to] with the verified logs in ONE
 * transaction: the reorg rollback to the block before, then a commit of the
 * range, verified. Blocks above `to` were rolled back too; the loop reads
 * them again.
 */
async function repair(s: Syncer, span: VerifiedSpan, logs: RawLog[]) {
  const { from, to } = span
  const range = await rangeFromLogs(s.ctx, from, to, logs)
  const result = await withWriteTransaction(s.ctx.pool, async (client) => {
    const rolledBack = await rollbackWithin(
      client,
      { network: s.options.network, startBlock: s.options.startBlock, ...s.head },
      from - 1n,
    )
    const committed = await commitWithin(
      client,
      {
        network: s.options.network,
        startBlock: s.options.startBlock,
        expectedLastIndexed: rolledBack.lastIndexedBlock,
        keepBlocks: s.options.keepBlocks,
      },
      {
        fromBlock: from,
        toBlock: to,
        transfers: range.transfers,
        metadataUpdates: range.metadataUpdates,
        blocks: range.headers,
        ...s.head,
        verified: true,
        verifiedBy: [span],
      },
    )
    return { rolledBack, committed }
  })
  s.ctx.logger.warn(
    {
      fromBlock: from.toString(),
      toBlock: to.toString(),
      removedTransfers: result.rolledBack.deletedTransfers,
      storedTransfers: range.transfers.length,
    },
    `verification: repaired blocks ${from}..${to} from the verified reads`,
  )
  s.tip = { number: to, hash: range.headers[range.headers.length - 1]!.hash.toLowerCase() }
  s.verifiedThrough = result.committed.lastVerifiedBlock
  s.ctx.followed.clear()
}

/** A block whose hash differs from the stored one was replaced: that is a reorganisation, not a mismatch. */
async function expectStoredHashes(s: Syncer, blocks: Array<{ number: bigint; hash: string }>) {
  const stored = await storedHashes(
    s.ctx.pool,
    blocks.map((b) => b.number),
  )
  for (const b of blocks) {
    const hash = stored.get(b.number)
    if (hash !== undefined && hash !== b.hash.toLowerCase()) throw new ReorgDetectedError(b.number)
  }
}

function logBlocks(logs: RawLog[]) {
  const out = new Map<bigint, { number: bigint; hash: string }>()
  for (const l of logs) out.set(BigInt(l.blockNumber), { number: BigInt(l.blockNumber), hash: l.blockHash })
  return [...out.values()]
}

async function keysOf(s: Syncer, logs: RawLog[]): Promise<string[]> {
  const decoded = await decodeLogs(s.ctx, logs)
  return [...decoded.transfers.map(transferKey), ...uriKeysOf(decoded.metadataUpdates)].sort()
}

const sameKeys = (a: string[], b: string[]) => a.length === b.length && a.every((v, i) => v === b[i])

/** Stores and logs a disagreement (the counters the status endpoint shows). */
export function mismatchRecorder(s: Pick<Syncer, 'ctx' | 'options'>) {
  return (m: LogMismatch) => {
    s.ctx.logger.warn(
      {
        fromBlock: m.fromBlock.toString(),
        toBlock: m.toBlock.toString(),
        missing: m.missing,
        extra: m.extra,
      },
      `verification: two reads of blocks ${m.fromBlock}..${m.toBlock} disagree (${m.missing} logs missing, ${m.extra} extra)${m.repaired ? '; repairing stored rows' : ''}`,
    )
    countVerificationMismatch(s.ctx.pool, s.options.network, m.repaired).catch((err) =>
      s.ctx.logger.warn({ err }, 'could not count a verification mismatch'),
    )
  }
}
