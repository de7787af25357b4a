import type pg from 'pg'
import type { Logger } from 'pino'
import type { Rpc } from '../rpc/client'
import { rollbackAfter } from '../store/rollback'
import { lowestIndexedBlock, storedBlocks } from '../store/state'
import { minBig } from '../util/bigint'
import { ChainChangedError } from './fetch'

export interface ReorgContext {
  rpc: Rpc
  pool: pg.Pool
  logger: Logger
  network: string
  startBlock: bigint
}

/**
 * The highest stored block whose hash the chain still has: everything at or
 * below it is proven canonical. When no stored block matches (a deep reorg,
 * or a devnet recreated from scratch), nothing is proven and the answer is
 * the block before the first indexed one, so everything is re-synced.
 */
export async function findCommonAncestor(ctx: ReorgContext): Promise<bigint> {
  const stored = await storedBlocks(ctx.pool)
  // A block the node does not return is unknown, not different: below the
  // reported head that is a lagging backend (asked again later); above it,
  // the chain is shorter and the block is gone.
  const reportedHead = ctx.rpc.pool.latest?.reportedHead ?? -1n
  for (let i = 0; i < stored.length; i += 50) {
    const slice = stored.slice(i, i + 50)
    const onChain = await Promise.all(slice.map((b) => ctx.rpc.getBlock(b.number, { minBlock: b.number })))
    for (let j = 0; j < slice.length; j++) {
      const block = onChain[j]
      if (!block && slice[j]!.number <= reportedHead)
        throw new ChainChangedError(`block ${slice[j]!.number} is not available yet`)
      if (block?.hash.toLowerCase() === slice[j]!.hash) return slice[j]!.number
    }
  }
  const low = (await lowestIndexedBlock(ctx.pool)) ?? ctx.startBlock
  return minBig(low, ctx.startBlock) - 1n
}

/**
 * How a reorg is logged (docs/indexer.md, "Logs"): on the devnet `npm start`'s chain
 * simulates reorgs on purpose, so they are expected news (info, said so); elsewhere a
 * warning.
 */
export function reorgLogging(network: string): { level: 'info' | 'warn'; note: string } {
  return network === 'devnet'
    ? { level: 'info', note: ' (the devnet simulates reorgs now and then: expected)' }
    : { level: 'warn', note: '' }
}

/** Rolls back to the common ancestor in one transaction; returns the new tip. */
export async function handleReorg(
  ctx: ReorgContext,
  detectedAt: bigint,
  head: { lastSeenBlock: bigint; chainConfirmedBlock: bigint },
) {
  const ancestor = await findCommonAncestor(ctx)
  const { level, note } = reorgLogging(ctx.network)
  ctx.logger[level](
    { detectedAt: detectedAt.toString(), ancestor: ancestor.toString() },
    `reorg detected at block ${detectedAt}: rolling back to block ${ancestor}${note}`,
  )
  const result = await rollbackAfter(
    ctx.pool,
    { network: ctx.network, startBlock: ctx.startBlock, ...head },
    ancestor,
  )
  ctx.logger[level](
    {
      detectedAt: detectedAt.toString(),
      ancestor: ancestor.toString(),
      depth: (detectedAt - ancestor).toString(),
      deletedTransfers: result.deletedTransfers,
      affectedTokens: result.affectedTokens,
    },
    `reorg: rolled back to block ${ancestor}, ${result.deletedTransfers} transfers removed${note}`,
  )
  return ancestor
}
