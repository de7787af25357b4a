/**
 * Logs proven by a block's receipts (docs/indexer.md, "Verification"): the
 * receipts from eth_getBlockReceipts must rebuild the header's receiptsRoot
 * (receipts-proof.ts); the indexed logs inside them are then the block's
 * logs with certainty.
 */
import type { Logger } from 'pino'
import type { Hex } from 'viem'
import type { RawLog } from '../chain'
import { errorChain } from '../errors'
import { INDEXED_TOPICS } from '../events/topics'
import type { Rpc } from '../rpc/client'
import { readWhileBehind } from '../rpc/retry'
import { RpcRequestError } from '../rpc/transport'
import { normaliseLogs } from './log-set'
import { provenLogs, ReceiptsProofError, type RpcReceipt } from './receipts-proof'

export interface ProofContext {
  rpc: Rpc
  logger: Logger
  signal?: AbortSignal
}

/** Endpoint lists whose nodes do not answer eth_getBlockReceipts (found out once). */
const withoutReceipts = new WeakSet<object>()

/** Whether proofs are worth asking for: false once the endpoints said they lack eth_getBlockReceipts. */
export const canProve = (rpc: Rpc) => !withoutReceipts.has(rpc.pool)

const INDEXED_TOPIC0 = new Set(INDEXED_TOPICS[0]!.map((t) => t.toLowerCase()))
const toHex = (n: bigint): Hex => `0x${n.toString(16)}`

/**
 * Blocks proven at once: their headers and receipts are asked in the same
 * tick, so they go out as one JSON-RPC batch (one round trip, not one per
 * block: a backfill's commits wait for its oldest range), while the receipts
 * held in memory stay bounded (a busy block's receipts are megabytes).
 */
const BLOCKS_AT_ONCE = 8

/** The indexed logs of blocks [from, to], each block proven; null when a block cannot be proven. */
export async function provenRange(ctx: ProofContext, from: bigint, to: bigint): Promise<RawLog[] | null> {
  const numbers: bigint[] = []
  for (let n = from; n <= to; n++) numbers.push(n)
  const proven = await provenBlocks(ctx, numbers)
  return proven && normaliseLogs([...proven.values()].flat())
}

/** Each block's indexed logs, proven, by number; null when a block cannot be proven. */
export async function provenBlocks(
  ctx: ProofContext,
  numbers: bigint[],
): Promise<Map<bigint, RawLog[]> | null> {
  const out = new Map<bigint, RawLog[]>()
  for (let first = 0; first < numbers.length; first += BLOCKS_AT_ONCE) {
    const some = numbers.slice(first, first + BLOCKS_AT_ONCE)
    const blocks = await Promise.all(some.map((n) => provenBlock(ctx, n)))
    for (const [i, logs] of blocks.entries()) {
      if (!logs) return null
      out.set(some[i]!, logs)
    }
  }
  return out
}

/**
 * One block's indexed logs, proven; null when the node cannot prove them
 * (no eth_getBlockReceipts, a block it does not have yet, another block than
 * `expectedHash` at this height, or receipts that do not match their header).
 */
export async function provenBlock(
  ctx: ProofContext,
  number: bigint,
  expectedHash?: Hex,
): Promise<RawLog[] | null> {
  if (!canProve(ctx.rpc)) return null
  try {
    // A node behind the others answers null for the newest block: asked again briefly.
    const [header, receipts] = await readWhileBehind(
      () =>
        Promise.all([
          ctx.rpc.request<{ hash: Hex; receiptsRoot: Hex } | null>(
            'eth_getBlockByNumber',
            [toHex(number), false],
            {
              minBlock: number,
            },
          ),
          ctx.rpc.request<RpcReceipt[] | null>('eth_getBlockReceipts', [toHex(number)], { minBlock: number }),
        ]),
      ([h, r]) => h !== null && r !== null,
      ctx.signal,
    )
    if (!header || !receipts) return null
    // The block at this height is not the one the caller read (a reorganisation in between).
    if (expectedHash && header.hash.toLowerCase() !== expectedHash.toLowerCase()) return null
    const logs = provenLogs({ hash: header.hash, number, receiptsRoot: header.receiptsRoot }, receipts)
    return normaliseLogs(logs.filter((l) => INDEXED_TOPIC0.has(l.topics[0]?.toLowerCase() ?? '')) as RawLog[])
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

function isMethodMissing(err: unknown): boolean {
  for (const e of errorChain(err)) {
    if (
      e instanceof RpcRequestError &&
      e.kind === 'rpc' &&
      (e.code === -32601 || /not (found|supported|available)|unsupported/i.test(e.message))
    )
      return true
  }
  return false
}
