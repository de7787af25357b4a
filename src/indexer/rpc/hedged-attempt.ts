import { type Attempt, hedgeKind, sendAttempt } from './attempt'
import { Endpoint } from './endpoint'
import type { RequestContext, RequestOptions } from './types'

/**
 * One attempt, hedged (rpc/hedge.ts): when it has no answer after the usual
 * time of its kind, twice over, the same request goes once more — to another
 * endpoint when one can take it, else to the same one on another connection —
 * and the first answer wins. A request alone in its exchange (a range's logs)
 * is cut when the other answers; a batched one runs on, as the batch does.
 * Settles with the first answer, or with a failure of the hedge, or of the
 * first attempt when no hedge runs: the retry loop then takes over.
 */
export const hedgedAttempt = <T>(
  ctx: RequestContext,
  first: Endpoint,
  method: string,
  params: unknown[],
  opts: RequestOptions,
): Promise<Attempt<T>> =>
  new Promise((resolve, reject) => {
    const { pool, lane, logger, signal } = ctx
    const cuttable = opts.alone === true || opts.twin !== undefined
    const cuts: AbortController[] = []
    let running = 0
    let settled = false
    let timer: NodeJS.Timeout | undefined
    const settle = (end: () => void) => {
      settled = true
      clearTimeout(timer)
      for (const cut of cuts) cut.abort()
      end()
    }
    const hedge = () => {
      if (settled) return
      const avoid = new Set(opts.avoid)
      avoid.add(first)
      const next = pool.pick({ minBlock: opts.minBlock, avoid, lane })
      if (!(next instanceof Endpoint) || !pool.hedging.take()) return
      logger.debug(
        { op: opts.label ?? method, endpoint: next.index + 1 },
        `${opts.label ?? method}: no answer from ${first.label} yet, asking ${next === first ? 'it' : next.label} again`,
      )
      pool.observer?.rpcHedge(method, next.index)
      send(next, () => undefined)
    }
    const send = (endpoint: Endpoint, sent: () => void) => {
      const hedged = running > 0
      running++
      const cut = cuttable ? new AbortController() : undefined
      const onAbort = () => cut?.abort(signal?.reason)
      if (cut) {
        cuts.push(cut)
        signal?.addEventListener('abort', onAbort, { once: true })
      }
      sendAttempt<T>(ctx, endpoint, method, params, opts, { abort: cut?.signal, sent }).then(
        (outcome) => {
          signal?.removeEventListener('abort', onAbort)
          running--
          if (settled) return
          // A first attempt that fails while its hedge runs waits for the hedge; a hedge that
          // fails ends the wait (the retry loop takes over) even while the first still hangs.
          if ('value' in outcome || running === 0 || hedged) settle(() => resolve(outcome))
        },
        (err) => {
          signal?.removeEventListener('abort', onAbort)
          if (!settled) settle(() => reject(err))
        },
      )
    }
    // The wait is timed from when the request goes out, not from a wait for a slot before.
    // Reading each endpoint's own head goes to that endpoint only, and nothing waits on the
    // background lane's requests (the metadata queue's): neither is hedged.
    const hedgeable = !opts.only && lane === 'sync'
    send(first, () => {
      if (hedgeable && !settled) timer = setTimeout(hedge, pool.hedging.delayMs(hedgeKind(method, opts)))
    })
  })
