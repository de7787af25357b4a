import { minBig } from '../rpc/get-logs'
import { type FetchedRange, fetchHistoricalRange } from './fetch'
import { commitFetched, cursorOf, type Syncer } from './syncer'

interface Pending {
  promise: Promise<FetchedRange>
  settled: boolean
  failed: boolean
}

/** A step ends after this long so the loop re-reads the head and the confirmed block. */
const STEP_BUDGET_MS = 20_000

/**
 * Backfill of confirmed blocks up to `target`: several eth_getLogs ranges in
 * flight at once, committed strictly in block order (so transfer ids follow
 * the chain), small ranges merged into one commit.
 */
export async function syncHistorical(s: Syncer, target: bigint): Promise<void> {
  const started = performance.now()
  let next = cursorOf(s)
  const inflight: Pending[] = []
  const schedule = () => {
    while (
      inflight.length < s.options.historicalConcurrency &&
      next <= target &&
      performance.now() - started < STEP_BUDGET_MS
    ) {
      const to = minBig(target, next + s.ctx.range.size - 1n)
      inflight.push(track(fetchHistoricalRange(s.ctx, next, to)))
      next = to + 1n
    }
  }
  schedule()
  while (inflight.length > 0) {
    const first = await inflight.shift()!.promise
    // A gap fill joined the range above it: ranges already inside it are done.
    if (s.tip && first.toBlock <= s.tip.number) continue
    const batch = [first]
    let events = batch[0]!.transfers.length
    while (inflight[0]?.settled && !inflight[0].failed && events < s.options.maxEventsPerCommit) {
      const ready = await inflight.shift()!.promise
      batch.push(ready)
      events += ready.transfers.length
    }
    schedule()
    await commitFetched(s, batch)
    if (cursorOf(s) > next) next = cursorOf(s)
    const from = batch[0]!.fromBlock
    const to = batch[batch.length - 1]!.toBlock
    s.progress.record(to - from + 1n, events, to, target)
  }
}

function track(promise: Promise<FetchedRange>): Pending {
  const pending: Pending = { promise, settled: false, failed: false }
  promise.then(
    () => {
      pending.settled = true
    },
    () => {
      pending.settled = true
      pending.failed = true
    },
  )
  return pending
}
