import type { OpenCommit } from '../store/commit'
import { startCommit } from '../store/commit'
import { minBig } from '../util/bigint'
import { type FetchedRange, fetchHistoricalRange } from './fetch'
import { cursorOf, finishFetched, type Syncer, transfersOf } from './syncer'

interface Pending {
  promise: Promise<FetchedRange>
  settled: boolean
  failed: boolean
}

/** A commit whose transfers are inserted, waiting to be finished. */
interface Started {
  ranges: FetchedRange[]
  open: OpenCommit
}

/** A step ends after this long so the loop re-reads the head and the confirmed block. */
const STEP_BUDGET_MS = 20_000

/**
 * Backfill of confirmed blocks up to `target`: several eth_getLogs ranges in
 * flight at once (as many reading as the endpoints' adaptive limits take,
 * SyncOptions.rangesInFlight), committed strictly in block order (so transfer
 * ids follow the chain), small ranges merged into one commit.
 *
 * Commits overlap by half: the transfers of batch N+1 are inserted (on a
 * second connection, invisible until committed) while batch N writes its
 * derived state and commits; N+1 is finished only after N has committed.
 * The database thus works on two batches at once, and the inserts (the larger
 * half of a commit) no longer wait for the derived state of the batch before.
 */
export async function syncHistorical(s: Syncer, target: bigint): Promise<void> {
  const started = performance.now()
  let next = cursorOf(s)
  const inflight: Pending[] = []
  const { min, max } = s.options.rangesInFlight
  /** Ranges still reading: one per request slot the endpoints grant now, so the limiter governs the pace. */
  const reading = () => inflight.reduce((n, p) => n + (p.settled ? 0 : 1), 0)
  let stopped = false
  const schedule = () => {
    while (
      !stopped &&
      inflight.length < max &&
      reading() < Math.min(max, Math.max(min, s.ctx.rpc.pool.capacity)) &&
      next <= target &&
      performance.now() - started < STEP_BUDGET_MS
    ) {
      const to = minBig(target, next + s.ctx.range.size - 1n)
      // A range that settles frees its request slot for the next one.
      inflight.push(track(fetchHistoricalRange(s.ctx, next, to), schedule))
      next = to + 1n
    }
  }
  /** The previous batch, finishing. */
  let finishing: Promise<void> = Promise.resolve()
  const finish = async ({ ranges, open }: Started) => {
    // A gap fill joined the range above it: ranges already inside it are done.
    if (s.tip && ranges[ranges.length - 1]!.toBlock <= s.tip.number) return open.abort()
    const events = transfersOf(ranges).length
    await finishFetched(s, ranges, open)
    if (cursorOf(s) > next) next = cursorOf(s)
    const to = ranges[ranges.length - 1]!.toBlock
    s.progress.record(to - ranges[0]!.fromBlock + 1n, events, to, target)
  }

  schedule()
  try {
    while (inflight.length > 0) {
      const batch = [await inflight.shift()!.promise]
      let events = batch[0]!.transfers.length
      while (inflight[0]?.settled && !inflight[0].failed && events < s.options.maxEventsPerCommit) {
        const ready = await inflight.shift()!.promise
        batch.push(ready)
        events += ready.transfers.length
      }
      schedule()
      const open = await startCommit(s.ctx.pool, transfersOf(batch))
      try {
        await finishing
      } catch (err) {
        await open.abort()
        throw err
      }
      finishing = finish({ ranges: batch, open })
      // Handled when awaited above or below; this only keeps an early failure from counting as unhandled.
      finishing.catch(() => undefined)
    }
  } finally {
    stopped = true
    // Never leave a commit behind (a reorg rollback may follow): wait for the last one.
    await finishing.catch(() => undefined)
    inflight.length = 0
  }
  await finishing
}

function track(promise: Promise<FetchedRange>, onSettled: () => void): Pending {
  const pending: Pending = { promise, settled: false, failed: false }
  promise.then(
    () => {
      pending.settled = true
      onSettled()
    },
    () => {
      pending.settled = true
      pending.failed = true
    },
  )
  return pending
}
