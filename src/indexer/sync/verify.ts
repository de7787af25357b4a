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

import type { Hex } from 'viem'
import { IndexerError } from '../errors'
import { INDEXED_TOPICS } from '../events/topics'
import type { RawLog } from '../rpc/client'
import type { Endpoint } from '../rpc/endpoint'
import { logIdentity, minBig, normaliseLogs, sameLogs } from '../rpc/get-logs'
import { RpcRequestError } from '../rpc/transport'
import { commitWithin } from '../store/commit'
import { withWriteTransaction } from '../store/db'
import { rollbackWithin } from '../store/rollback'
import { countVerificationMismatch, updateProgress } from '../store/state'
import { provenLogs, ReceiptsProofError, type RpcReceipt } from '../verify/receipts-proof'
import { decodeLogs, type FetchContext, getHeaders, rangeFromLogs, readLogs, toHex } from './fetch'
import { ReorgDetectedError, type Syncer } from './syncer'

/** Reads of one range before giving up for this step (the step is retried). */
const MAX_READS = 6
/** Below this many logs in a range, three reads must agree instead of two. */
const FEW_LOGS = 16
/** Blocks verified per step while following the head: by re-read, and by receipts proof (one request per block). */
const VERIFY_SPAN = 2_000n
const PROVEN_SPAN = 50n

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
 * The verified logs of a backfill range. A range with few logs and few
 * blocks is proven by receipts where the node offers them (the cheap and
 * certain way when there is little to prove); any other range is read until
 * two reads agree.
 */
export async function readVerifiedLogs(
  ctx: FetchContext,
  fromBlock: bigint,
  toBlock: bigint,
): Promise<RawLog[]> {
  const servedBy = new Set<Endpoint>()
  const first = await readLogs(ctx, fromBlock, toBlock, { onServed: (e) => servedBy.add(e) })
  if (first.length < FEW_LOGS && toBlock - fromBlock < PROVEN_SPAN && !withoutReceipts.has(ctx.rpc.pool)) {
    const proven = await provenRange(ctx, fromBlock, toBlock)
    if (proven) {
      if (!sameLogs(first, proven)) reportMismatch(ctx, fromBlock, toBlock, first, proven, false)
      return proven
    }
  }
  return readAgreedLogs(ctx, fromBlock, toBlock, [first], servedBy)
}

/**
 * Reads [from, to] until two reads agree; each read prefers endpoints other
 * than the previous read's. When two reads disagree and the node offers
 * eth_getBlockReceipts, the blocks they disagree on are settled by proof
 * instead: their receipts must rebuild the header's receiptsRoot, and the
 * logs inside them are then the block's logs with certainty.
 */
export async function readAgreedLogs(
  ctx: FetchContext,
  fromBlock: bigint,
  toBlock: bigint,
  earlier: RawLog[][] = [],
  firstAvoid: ReadonlySet<Endpoint> = new Set(),
): Promise<RawLog[]> {
  const reads = [...earlier]
  let avoid = firstAvoid
  while (reads.length < MAX_READS) {
    const servedBy = new Set<Endpoint>()
    const logs = await readLogs(ctx, fromBlock, toBlock, { avoid, onServed: (e) => servedBy.add(e) })
    // Two reads leaving out the same log agree wrongly with a chance of about p²/k (k logs, p
    // the omission rate per answer): with few logs a third agreeing read is required (p³).
    const agreeing = reads.filter((read) => sameLogs(read, logs)).length + 1
    if (agreeing >= (logs.length < FEW_LOGS ? 3 : 2)) return logs
    const previous = reads[reads.length - 1]
    reads.push(logs)
    avoid = servedBy
    if (!previous || sameLogs(previous, logs)) continue
    reportMismatch(ctx, fromBlock, toBlock, previous, logs, false)
    const proven = await settleByReceipts(ctx, previous, logs)
    if (proven) return proven
  }
  throw new VerificationError(fromBlock, toBlock)
}

/** Endpoint lists that do not answer eth_getBlockReceipts (asked once). */
const withoutReceipts = new WeakSet<object>()

/**
 * The logs of two disagreeing reads with every disputed block replaced by
 * its proven logs; null when a proof is not available (the caller reads again).
 */
async function settleByReceipts(ctx: FetchContext, a: RawLog[], b: RawLog[]): Promise<RawLog[] | null> {
  if (withoutReceipts.has(ctx.rpc.pool)) return null
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

const INDEXED_TOPIC0 = new Set(INDEXED_TOPICS[0]!.map((t) => t.toLowerCase()))

function isMethodMissing(err: unknown): boolean {
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    if (
      e instanceof RpcRequestError &&
      e.kind === 'rpc' &&
      (e.code === -32601 || /not (found|supported|available)|unsupported/i.test(e.message))
    )
      return true
  }
  return false
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
  const withProof = !withoutReceipts.has(s.ctx.rpc.pool)
  const span = withProof ? PROVEN_SPAN : VERIFY_SPAN
  const to = minBig(minBig(s.tip.number, s.head.chainConfirmedBlock), from + span - 1n)
  if (to < from) return
  const headers = await getHeaders(s.ctx.rpc, [from, to])
  await expectStoredHashes(s, [...headers.values()])
  // The second read: a proof by receipts where the node offers them, else a re-read by range.
  const proven = withProof ? await provenRange(s.ctx, from, to) : null
  const servedBy = new Set<Endpoint>()
  const reread = () =>
    readLogs(s.ctx, from, to, {
      avoid: servedBy.size > 0 ? new Set(servedBy) : firstReaders(s, from, to),
      onServed: (e) => servedBy.add(e),
    })
  const second = proven ?? (await reread())
  await expectStoredHashes(s, logBlocks(second))
  const stored = await storedRows(s, headers.get(from)!.timestamp, headers.get(to)!.timestamp, from, to)
  const secondRows = await rowsOf(s, second)
  // The stored rows are the first read. A proof settles it; reads must agree with them as in
  // readAgreedLogs: once, or twice when there are few logs.
  const reads = [second]
  let agrees = sameRows(stored, secondRows)
  if (!proven && agrees && second.length < FEW_LOGS) {
    const third = await reread()
    reads.push(third)
    agrees = sameRows(stored, await rowsOf(s, third))
  }
  if (!agrees) {
    const agreed = proven ?? (await readAgreedLogs(s.ctx, from, to, reads, servedBy))
    await expectStoredHashes(s, logBlocks(agreed))
    const repaired = !sameRows(stored, await rowsOf(s, agreed))
    s.ctx.onMismatch?.({ fromBlock: from, toBlock: to, ...rowDifference(stored, secondRows), repaired })
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

/** The endpoints that read these blocks first: a verification read prefers another. */
function firstReaders(s: Syncer, from: bigint, to: bigint): Set<Endpoint> {
  const avoid = new Set<Endpoint>()
  for (let n = from; n <= to; n++) {
    const endpoint = s.ctx.readBy.get(n)
    if (endpoint) avoid.add(endpoint)
  }
  return avoid
}

/**
 * The indexed logs of blocks [from, to], each block proven by its receipts
 * (receiptsRoot); null when the node cannot prove them (no
 * eth_getBlockReceipts, or receipts that do not match their header).
 */
async function provenRange(ctx: FetchContext, from: bigint, to: bigint): Promise<RawLog[] | null> {
  const out: RawLog[] = []
  for (let n = from; n <= to; n++) {
    const logs = await provenBlock(ctx, n)
    if (!logs) return null
    for (const l of logs) out.push(l)
  }
  return normaliseLogs(out)
}

async function provenBlock(ctx: FetchContext, number: bigint): Promise<RawLog[] | null> {
  try {
    const [header, receipts] = await Promise.all([
      ctx.rpc.request<{ hash: Hex; receiptsRoot: Hex } | null>(
        'eth_getBlockByNumber',
        [toHex(number), false],
        {
          minBlock: number,
        },
      ),
      ctx.rpc.request<RpcReceipt[] | null>('eth_getBlockReceipts', [toHex(number)], { minBlock: number }),
    ])
    if (!header || !receipts) return null
    const logs = provenLogs({ hash: header.hash, number, receiptsRoot: header.receiptsRoot }, receipts)
    return logs.filter((l) => INDEXED_TOPIC0.has(l.topics[0]?.toLowerCase() ?? '')) as RawLog[]
  } catch (err) {
    if (err instanceof ReceiptsProofError) {
      ctx.logger.warn(
        { block: number.toString() },
        `receipts of block ${number} do not prove it: ${err.message}`,
      )
      return null
    }
    if (isMethodMissing(err)) {
      withoutReceipts.add(ctx.rpc.pool)
      return null
    }
    throw err
  }
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
