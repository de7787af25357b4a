import type { Logger } from 'pino'
import type { Hex } from 'viem'
import { IndexerError } from '../errors'
import { decodeLog } from '../events/decode'
import { INDEXED_TOPICS } from '../events/topics'
import {
  type MetadataUpdateEvent,
  type PendingTransfer,
  type TransferEvent,
  withBlockTimestamp,
} from '../events/types'
import type { RawLog, Rpc, RpcBlock } from '../rpc/client'
import { type AdaptiveRange, fetchLogs } from '../rpc/get-logs'
import { compareChainOrder } from '../store/transfers'
import type { ContractClassifier } from './classify'

export interface FetchContext {
  rpc: Rpc
  classifier: ContractClassifier
  range: AdaptiveRange
  logger: Logger
  signal?: AbortSignal
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
}

/** The chain changed while a range was being read; the step is retried. */
export class ChainChangedError extends IndexerError {
  constructor(detail: string) {
    super(`Chain changed while reading: ${detail}`)
    this.name = 'ChainChangedError'
  }
}

/** Historical mode (confirmed blocks): logs by block range, headers only where needed. */
export async function fetchHistoricalRange(
  ctx: FetchContext,
  fromBlock: bigint,
  toBlock: bigint,
): Promise<FetchedRange> {
  const started = performance.now()
  const logs = await fetchLogs(ctx.rpc, fromBlock, toBlock, {
    topics: INDEXED_TOPICS,
    range: ctx.range,
    logger: ctx.logger,
    signal: ctx.signal,
  })
  const fetchedAt = performance.now()
  const decoded = await decodeLogs(ctx, logs)
  const needed = new Set<bigint>([fromBlock, toBlock])
  for (const e of decoded.transfers) if (!decoded.timestamps.has(e.blockNumber)) needed.add(e.blockNumber)
  const headers = await getHeaders(ctx.rpc, [...needed])
  for (const e of decoded.transfers) {
    const header = headers.get(e.blockNumber)
    if (header && e.blockHash && header.hash.toLowerCase() !== e.blockHash) {
      throw new ChainChangedError(
        `block ${e.blockNumber} has hash ${header.hash}, its logs say ${e.blockHash}`,
      )
    }
  }
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
  return {
    fromBlock,
    toBlock,
    transfers: withTimestamps(decoded.transfers, decoded.timestamps, headers),
    metadataUpdates: decoded.metadataUpdates,
    first: headers.get(fromBlock)!,
    headers: [headers.get(toBlock)!],
    logCount: logs.length,
  }
}

/** Realtime mode (unconfirmed blocks): headers already linked; logs by block hash (EIP-234). */
export async function fetchRealtimeBlocks(ctx: FetchContext, headers: RpcBlock[]): Promise<FetchedRange> {
  const perBlock = await Promise.all(
    headers.map((h) => ctx.rpc.getLogs({ blockHash: h.hash }, INDEXED_TOPICS)),
  )
  const logs = perBlock.flat()
  const decoded = await decodeLogs(ctx, logs)
  const byNumber = new Map(headers.map((h) => [h.number, h]))
  return {
    fromBlock: headers[0]!.number,
    toBlock: headers[headers.length - 1]!.number,
    transfers: withTimestamps(decoded.transfers, decoded.timestamps, byNumber),
    metadataUpdates: decoded.metadataUpdates,
    first: headers[0]!,
    headers,
    logCount: logs.length,
  }
}

async function decodeLogs(ctx: FetchContext, logs: RawLog[]) {
  const transfers: PendingTransfer[] = []
  const legacy: PendingTransfer[] = []
  const metadataUpdates: MetadataUpdateEvent[] = []
  const timestamps = new Map<bigint, bigint>()
  for (const log of logs) {
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

function withTimestamps(
  pending: PendingTransfer[],
  timestamps: Map<bigint, bigint>,
  headers: Map<bigint, RpcBlock>,
): TransferEvent[] {
  const out = pending.map((e) => {
    const ts = timestamps.get(e.blockNumber) ?? headers.get(e.blockNumber)?.timestamp
    if (ts === undefined) throw new IndexerError(`No timestamp for block ${e.blockNumber}`)
    return withBlockTimestamp(e, ts)
  })
  return out.sort(compareChainOrder)
}

/** Block headers by number, requested together so the transport sends them as JSON-RPC batches. */
export async function getHeaders(rpc: Rpc, numbers: bigint[]): Promise<Map<bigint, RpcBlock>> {
  const blocks = await Promise.all(numbers.map((n) => rpc.getBlock(n)))
  const out = new Map<bigint, RpcBlock>()
  blocks.forEach((b, i) => {
    if (!b) throw new ChainChangedError(`block ${numbers[i]} is not available`)
    out.set(b.number, b)
  })
  return out
}

export const toHex = (n: bigint): Hex => `0x${n.toString(16)}`
