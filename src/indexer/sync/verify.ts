/**
 * Confirmed means verified (docs/indexer.md, "Verification"). Providers
 * sometimes answer eth_getLogs with HTTP 200 and one log missing; nothing in
 * the answer shows it. So no block counts as confirmed until a second,
 * independent read of its logs (from another endpoint when RPC_URL names
 * several) agreed with the first on every log's full identity:
 *
 * - backfill ranges are read twice before they are committed;
 * - blocks followed at the head are committed on one read (by block hash)
 *   and read again by range once they reach the confirmation depth, compared
 *   with the stored rows.
 *
 * When two reads disagree, reads go on until two agree; if the stored rows
 * differ from the agreed answer, the blocks are repaired in one transaction
 * through the reorg rollback path (rollback to the block before, commit of
 * the agreed logs). Every disagreement is counted in indexer_state and logged.
 */
import { IndexerError } from '../errors'
import type { RawLog } from '../rpc/client'
import type { Endpoint } from '../rpc/endpoint'
import { logIdentity, minBig, sameLogs } from '../rpc/get-logs'
import { commitWithin } from '../store/commit'
import { withWriteTransaction } from '../store/db'
import { rollbackWithin } from '../store/rollback'
import { countVerificationMismatch, updateProgress } from '../store/state'
import { decodeLogs, type FetchContext, getHeaders, rangeFromLogs, readLogs } from './fetch'
import { ReorgDetectedError, type Syncer } from './syncer'

/** Reads of one range before giving up for this step (the step is retried). */
const MAX_READS = 6
/** Blocks verified per step while following the head. */
const VERIFY_SPAN = 2_000n

export interface LogMismatch {
  fromBlock: bigint
  toBlock: bigint
  /** Logs one read had and the other did not, both ways. */
  missing: number
  extra: number
  /** Whether stored rows had to be repaired. */
  repaired: boolean
}

export class VerificationError extends IndexerError {
  constructor(fromBlock: bigint, toBlock: bigint) {
    super(`No two of ${MAX_READS} reads of blocks ${fromBlock}..${toBlock} agreed`)
    this.name = 'VerificationError'
  }
}

/**
 * Reads [from, to] until two reads agree; each read prefers endpoints other
 * than the previous read's. Returns the agreed logs (normalised).
 */
export async function readAgreedLogs(
  ctx: FetchContext,
  fromBlock: bigint,
  toBlock: bigint,
  firstAvoid: ReadonlySet<Endpoint> = new Set(),
): Promise<RawLog[]> {
  const reads: RawLog[][] = []
  let avoid = firstAvoid
  for (let i = 0; i < MAX_READS; i++) {
    const servedBy = new Set<Endpoint>()
    const logs = await readLogs(ctx, fromBlock, toBlock, { avoid, onServed: (e) => servedBy.add(e) })
    if (reads.some((earlier) => sameLogs(earlier, logs))) return logs
    if (reads.length > 0) reportMismatch(ctx, fromBlock, toBlock, reads[reads.length - 1]!, logs, false)
    reads.push(logs)
    avoid = servedBy
  }
  throw new VerificationError(fromBlock, toBlock)
}

function reportMismatch(
  ctx: FetchContext,
  fromBlock: bigint,
  toBlock: bigint,
  a: RawLog[],
  b: RawLog[],
  repaired: boolean,
) {
  const left = new Set(a.map(logIdentity))
  const right = new Set(b.map(logIdentity))
  const missing = [...left].filter((id) => !right.has(id)).length
  const extra = [...right].filter((id) => !left.has(id)).length
  ctx.onMismatch?.({ fromBlock, toBlock, missing, extra, repaired })
}

/**
 * The verification step of the sync loop: the next blocks that reached the
 * confirmation depth without being verified (followed at the head) are read
 * again and compared with the stored rows.
 */
export async function verifyConfirmedBlocks(s: Syncer): Promise<void> {
  if (!s.ctx.verify || !s.tip) return
  const from = (s.verifiedThrough ?? s.options.startBlock - 1n) + 1n
  const to = minBig(minBig(s.tip.number, s.head.chainConfirmedBlock), from + VERIFY_SPAN - 1n)
  if (to < from) return
  const avoid = new Set<Endpoint>()
  for (let n = from; n <= to; n++) {
    const endpoint = s.ctx.readBy.get(n)
    if (endpoint) avoid.add(endpoint)
  }
  const headers = await getHeaders(s.ctx.rpc, [from, to])
  await expectStoredHashes(s, [...headers.values()])
  const servedBy = new Set<Endpoint>()
  const reread = await readLogs(s.ctx, from, to, { avoid, onServed: (e) => servedBy.add(e) })
  await expectStoredHashes(s, logBlocks(reread))
  const stored = await storedRows(s, headers.get(from)!.timestamp, headers.get(to)!.timestamp, from, to)
  let agreed = reread
  if (!sameRows(stored, await rowsOf(s, reread))) {
    // The stored first read or this read is wrong: read until two reads agree.
    agreed = await readAgreedLogs(s.ctx, from, to, servedBy)
    await expectStoredHashes(s, logBlocks(agreed))
    const repaired = !sameRows(stored, await rowsOf(s, agreed))
    s.ctx.onMismatch?.({
      fromBlock: from,
      toBlock: to,
      ...rowDifference(stored, await rowsOf(s, reread)),
      repaired,
    })
    if (repaired) {
      await repair(s, from, to, agreed)
      return
    }
  }
  const progress = await withWriteTransaction(s.ctx.pool, (client) =>
    updateProgress(client, {
      network: s.options.network,
      startBlock: s.options.startBlock,
      ...s.head,
      verified: { from, to },
    }),
  )
  s.verifiedThrough = progress.lastVerifiedBlock
  for (const n of [...s.ctx.readBy.keys()]) if (n <= to) s.ctx.readBy.delete(n)
}

/**
 * Replaces the stored rows of [from, to] with the agreed logs in ONE
 * transaction: the reorg rollback to the block before, then a commit of the
 * range, verified. Blocks above `to` were rolled back too; the loop reads
 * them again.
 */
async function repair(s: Syncer, from: bigint, to: bigint, logs: RawLog[]) {
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
    `verification: repaired blocks ${from}..${to} from the agreed reads`,
  )
  s.tip = { number: to, hash: range.headers[range.headers.length - 1]!.hash.toLowerCase() }
  s.verifiedThrough = result.committed.lastVerifiedBlock
}

/** A block whose hash differs from the stored one was replaced: that is a reorganisation, not a mismatch. */
async function expectStoredHashes(s: Syncer, blocks: Array<{ number: bigint; hash: string }>) {
  if (blocks.length === 0) return
  const { rows } = await s.ctx.pool.query<{ number: string; hash: string }>(
    'SELECT number::text, hash FROM blocks WHERE number = ANY($1::bigint[])',
    [blocks.map((b) => b.number.toString())],
  )
  const stored = new Map(rows.map((r) => [BigInt(r.number), r.hash]))
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

/** A transfer row's identity and content, as stored and as decoded. */
const rowKey = (r: {
  transactionHash: string
  logIndex: number
  batchIndex: number
  collection: string
  tokenId: bigint | string
  from: string
  to: string
  blockNumber: bigint | string
}) =>
  `${r.transactionHash}:${r.logIndex}:${r.batchIndex}:${r.collection}:${r.tokenId}:${r.from}:${r.to}:${r.blockNumber}`

async function rowsOf(s: Syncer, logs: RawLog[]): Promise<string[]> {
  const decoded = await decodeLogs(s.ctx, logs)
  return decoded.transfers.map(rowKey).sort()
}

/**
 * The stored chain transfers of blocks [from, to], found by time through the
 * feed indexes as a rollback finds them (no index leads with the block number).
 */
async function storedRows(s: Syncer, since: bigint, until: bigint, from: bigint, to: bigint) {
  const { rows } = await s.ctx.pool.query(
    `SELECT transaction_hash AS "transactionHash", log_index AS "logIndex", batch_index AS "batchIndex",
            collection_address AS collection, token_id::text AS "tokenId", from_address AS "from",
            to_address AS "to", block_number::text AS "blockNumber"
       FROM transfers
      WHERE event_type = ANY ($1::varchar[]) AND source = 'rpc'
        AND block_timestamp >= to_timestamp($2) AND block_timestamp <= to_timestamp($3)
        AND block_number BETWEEN $4 AND $5`,
    [['mint', 'transfer', 'burn'], since.toString(), until.toString(), from.toString(), to.toString()],
  )
  return rows.map(rowKey).sort()
}

const sameRows = (a: string[], b: string[]) => a.length === b.length && a.every((v, i) => v === b[i])

function rowDifference(stored: string[], read: string[]) {
  const left = new Set(stored)
  const right = new Set(read)
  return {
    missing: stored.filter((r) => !right.has(r)).length,
    extra: read.filter((r) => !left.has(r)).length,
  }
}

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
