import type { Logger } from 'pino'
import type { Hex } from 'viem'
import type { RawLog, RpcBlock } from '../chain'
import { IndexerError } from '../errors'
import type { Endpoint } from './endpoint'
import type { EndpointPool } from './endpoint-pool'
import { isLogsBloom } from './logs-bloom'
import { isTransientRpcError } from './transient'
import { RpcRequestError } from './transport'
import type { LogFilter, RequestOptions, Rpc } from './types'

/** The typed reads of an Rpc, over its `request`. */
type Request = Rpc['request']

const toHex = (n: bigint): Hex => `0x${n.toString(16)}`

export const readChainId = async (request: Request) => Number(BigInt(await request<Hex>('eth_chainId', [])))

/** The head one endpoint reports, booked as its head; never lower than the best head heard. */
export async function readBlockNumber(request: Request, pool: EndpointPool): Promise<bigint> {
  let served: Endpoint | undefined
  const head = BigInt(
    await request<Hex>('eth_blockNumber', [], {
      onServed: (e) => {
        served = e
      },
    }),
  )
  served?.observeHead(head)
  return pool.head > head ? pool.head : head
}

export async function readBlock(
  request: Request,
  block: bigint | 'latest' | 'finalized' | 'safe',
  opts: RequestOptions = {},
): Promise<RpcBlock | null> {
  const tag = typeof block === 'bigint' ? toHex(block) : block
  let raw: Record<string, unknown> | null
  try {
    raw = await request('eth_getBlockByNumber', [tag, false], {
      ...opts,
      minBlock: typeof block === 'bigint' ? block : undefined,
    })
  } catch (err) {
    // Nodes without the tag answer with an error rather than null.
    if (typeof block === 'string' && block !== 'latest' && !isTransientRpcError(err)) return null
    throw err
  }
  return parseBlock(raw, block)
}

/** A header, checked: a broken cache or load balancer may answer another block, or half of one. */
function parseBlock(raw: Record<string, unknown> | null, asked: bigint | string): RpcBlock | null {
  if (raw === null) return null
  const { number, hash, parentHash, timestamp, logsBloom } = raw
  const valid =
    isQuantity(number) &&
    isHash(hash) &&
    isHash(parentHash) &&
    isQuantity(timestamp) &&
    (typeof asked !== 'bigint' || BigInt(number) === asked)
  if (!valid)
    throw new IndexerError(`RPC eth_getBlockByNumber(${asked}) answered another block or an incomplete one`, {
      cause: new RpcRequestError('bad_body', `block ${String(number)} (${String(hash)})`),
    })
  const block: RpcBlock = { number: BigInt(number), hash, parentHash, timestamp: BigInt(timestamp) }
  if (isLogsBloom(logsBloom)) block.logsBloom = logsBloom
  return block
}

const isQuantity = (v: unknown): v is Hex => typeof v === 'string' && /^0x[0-9a-fA-F]{1,64}$/.test(v)
const isHash = (v: unknown): v is Hex => typeof v === 'string' && /^0x[0-9a-fA-F]{64}$/.test(v)

export function readLogs(
  request: Request,
  logger: Logger,
  filter: LogFilter,
  topics: Hex[][],
  opts: RequestOptions = {},
): Promise<RawLog[]> {
  const params =
    'blockHash' in filter
      ? { blockHash: filter.blockHash, topics }
      : { fromBlock: toHex(filter.fromBlock), toBlock: toHex(filter.toBlock), topics }
  // Range errors are not retried here: the range helper shrinks the range instead.
  // A range's answer (up to a provider's cap, 10,000 logs) goes alone: batched with others it
  // would wait for the slowest, fail with them on one 429, and arrive with them in memory at once.
  return request<RawLog[]>('eth_getLogs', [params], {
    retry: 'blockHash' in filter,
    alone: 'toBlock' in filter,
    ...opts,
    minBlock: 'toBlock' in filter ? filter.toBlock : opts.minBlock,
  }).then((logs) => {
    if (!Array.isArray(logs))
      throw new IndexerError('RPC eth_getLogs returned no log list', {
        cause: new RpcRequestError('bad_body', 'eth_getLogs answered without a list'),
      })
    // The common answer holds only what was asked: one pass, nothing allocated.
    const asked = askedBy(filter)
    if (logs.every(asked)) return logs
    const inside = logs.filter(asked)
    logger.warn(
      { filter: describeFilter(filter), strays: logs.length - inside.length },
      `eth_getLogs answered ${logs.length - inside.length} log(s) of blocks it was not asked for: left out`,
    )
    return inside
  })
}

/**
 * Whether a log is of the blocks the filter asked for. Nodes with a broken
 * range filter answer logs of other blocks too (docs/indexer.md, "Providers");
 * taken, such a log would be stored before the blocks between, out of chain order.
 */
function askedBy(filter: LogFilter): (log: RawLog) => boolean {
  if ('blockHash' in filter) {
    const hash = filter.blockHash.toLowerCase()
    return (log) => typeof log.blockHash === 'string' && log.blockHash.toLowerCase() === hash
  }
  const from = Number(filter.fromBlock)
  const to = Number(filter.toBlock)
  return (log) => {
    const n = typeof log.blockNumber === 'string' ? Number(log.blockNumber) : Number.NaN
    return n >= from && n <= to
  }
}

const describeFilter = (filter: LogFilter) =>
  'blockHash' in filter
    ? { blockHash: filter.blockHash }
    : { fromBlock: filter.fromBlock.toString(), toBlock: filter.toBlock.toString() }

export const readCode = (request: Request, address: Hex, block?: bigint) =>
  request<Hex>('eth_getCode', [address, block === undefined ? 'latest' : toHex(block)])
