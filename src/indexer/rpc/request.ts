import { describeError, IndexerError } from '../errors'
import { sleep } from '../util/sleep'
import { Endpoint } from './endpoint'
import { hedgedAttempt } from './hedged-attempt'
import { rpcRetryDelay } from './retry'
import { isTransientRpcError, notYet } from './transient'
import type { RequestContext, RequestOptions } from './types'

/**
 * One request, retried on transient failures: at once on another endpoint
 * when one can take it, else after a back-off (at least the Retry-After of a
 * rate-limited endpoint).
 */
export async function sendRequest<T>(
  ctx: RequestContext,
  method: string,
  params: unknown[],
  opts: RequestOptions = {},
): Promise<T> {
  const { pool, lane, logger, signal } = ctx
  const failed = new Set<Endpoint>()
  for (let attempt = 0; ; ) {
    // Not waited out: only the sync loop's head reads find out when one serves it again.
    if (!opts.only && pool.endpoints.every((e) => e.wrongChainId !== null))
      throw new IndexerError(`RPC ${method}: every endpoint now serves another chain`)
    const choice =
      opts.only ?? pool.pick({ minBlock: opts.minBlock, avoid: opts.avoid, exclude: failed, lane })
    if (!(choice instanceof Endpoint)) {
      await sleep(choice.waitMs, signal)
      continue
    }
    const outcome = await hedgedAttempt<T>(ctx, choice, method, params, opts)
    if ('value' in outcome) {
      opts.onServed?.(outcome.endpoint)
      return outcome.value
    }
    const { endpoint, error: err, newFault } = outcome
    const wrapped = new IndexerError(`RPC ${method} failed on ${endpoint.label}`, { cause: err })
    if (opts.retry === false || attempt >= (opts.retries ?? ctx.retries) || !isTransientRpcError(err))
      throw wrapped
    attempt++
    failed.add(endpoint)
    const another =
      !opts.only && pool.endpoints.some((e) => !failed.has(e) && e.restingUntil(lane) <= Date.now())
    // A node that does not have the block yet is behind by a block or two: asked again soon,
    // as a null block is (retry.ts, readWhileBehind), not after a back-off of seconds.
    const delay = another ? 0 : notYet(err) ? 100 * attempt : rpcRetryDelay(attempt - 1)
    // One line per fault: the items of a batch that failed whole share its error.
    if (newFault)
      logger.warn(
        { op: opts.label ?? method, attempt, endpoint: endpoint.index + 1, retryInMs: Math.round(delay) },
        `${opts.label ?? method} failed, retrying${another ? ' on another endpoint' : ''}: ${describeError(err)}`,
      )
    if (!another) {
      failed.clear()
      await sleep(delay, signal)
    }
  }
}
