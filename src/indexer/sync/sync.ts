import { describeError, isAbortError } from '../errors'
import { backoffDelay, sleep } from '../rpc/retry'
import { StaleStateError } from '../store/commit'
import { updateHead } from '../store/state'
import { ChainChangedError } from './fetch'
import { syncHistorical } from './historical'
import { syncRealtime } from './realtime'
import { handleReorg } from './reorg'
import { cursorOf, ReorgDetectedError, type Syncer } from './syncer'

/**
 * The sync loop: backfill confirmed blocks by range, follow unconfirmed
 * blocks header by header, roll back on a reorganisation, and keep going
 * through provider faults (one log line each, exponential backoff).
 */
export async function runSyncLoop(s: Syncer, signal: AbortSignal): Promise<void> {
  let failures = 0
  let supportsFinalized = true
  while (!signal.aborted) {
    try {
      // One JSON-RPC batch: the head and the node's finalized block.
      const [head, finalizedBlock] = await Promise.all([
        s.ctx.rpc.blockNumber(),
        supportsFinalized ? s.ctx.rpc.getBlock('finalized') : null,
      ])
      let finalized = -1n
      if (finalizedBlock) finalized = finalizedBlock.number
      else supportsFinalized = false
      const deep = head - s.options.confirmations
      // Confirmed = CONFIRMATIONS deep, or finalized by the node if that comes sooner.
      const confirmed = finalized > deep ? (finalized > head ? head : finalized) : deep
      const headMoved = head !== s.head.lastSeenBlock
      s.head = { lastSeenBlock: head, chainConfirmedBlock: confirmed }

      if (s.tip && s.tip.number > head) throw new ReorgDetectedError(head + 1n)
      const cursor = cursorOf(s)
      s.backfilling = cursor <= confirmed
      if (cursor <= confirmed) {
        await syncHistorical(s, confirmed)
      } else if (cursor <= head) {
        await syncRealtime(s, head)
      } else {
        await verifyTip(s)
        if (headMoved) await updateHead(s.ctx.pool, s.options.network, head)
        await sleep(s.options.pollIntervalMs, signal)
      }
      failures = 0
    } catch (caught) {
      let err = caught
      if (signal.aborted || isAbortError(err)) break
      if (err instanceof ReorgDetectedError) {
        try {
          await handleReorg(
            { ...s.ctx, network: s.options.network, startBlock: s.options.startBlock },
            err.atBlock,
            s.head,
          )
          s.tip = await loadTip(s)
          continue
        } catch (rollbackErr) {
          if (signal.aborted) break
          err = rollbackErr
        }
      }
      if (err instanceof StaleStateError) s.tip = await loadTip(s).catch(() => s.tip)
      const delay = err instanceof ChainChangedError ? 200 : backoffDelay(failures++, 500, 30_000)
      s.ctx.logger.warn({ retryInMs: Math.round(delay) }, `sync step failed: ${describeError(err)}`)
      await sleep(delay, signal).catch(() => undefined)
    }
  }
}

/** While idle, the stored tip must still be on the chain (a same-height reorg changes no block number). */
async function verifyTip(s: Syncer): Promise<void> {
  if (!s.tip?.hash) return
  const block = await s.ctx.rpc.getBlock(s.tip.number)
  if (!block || block.hash.toLowerCase() !== s.tip.hash) throw new ReorgDetectedError(s.tip.number)
}

export async function loadTip(s: Syncer): Promise<Syncer['tip']> {
  const { rows } = await s.ctx.pool.query(
    `SELECT st.last_indexed_block::text AS number, b.hash
       FROM indexer_state st LEFT JOIN blocks b ON b.number = st.last_indexed_block
      WHERE st.network = $1`,
    [s.options.network],
  )
  const row = rows[0]
  if (!row?.number) return null
  return { number: BigInt(row.number), hash: row.hash ?? null }
}
