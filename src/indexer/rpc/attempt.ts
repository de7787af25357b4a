import type { Endpoint } from './endpoint'
import { RpcRequestError } from './transport'
import type { RequestContext, RequestOptions } from './types'

/** How one attempt ended: the answer, or the failure (newFault: not booked on the endpoint before). */
export type Attempt<T> =
  | { endpoint: Endpoint; value: T }
  | { endpoint: Endpoint; error: unknown; newFault: boolean }

/** Requests alike in answer time: a range's logs (alone) take far longer than a block's. */
export const hedgeKind = (method: string, opts: RequestOptions) => (opts.alone ? `${method} alone` : method)

/**
 * Sends one attempt to `endpoint` and books its outcome there (health,
 * latency, metrics). `abort` ends an attempt whose hedge answered first:
 * that is booked as slowness, not as a fault. `sent` is told when the
 * request goes out, after any wait for one of the endpoint's slots.
 */
export async function sendAttempt<T>(
  ctx: RequestContext,
  endpoint: Endpoint,
  method: string,
  params: unknown[],
  opts: RequestOptions,
  hedge: { abort?: AbortSignal; sent: () => void },
): Promise<Attempt<T>> {
  const { pool, lane, signal } = ctx
  const started = performance.now()
  let sentAt = started
  try {
    const wire = lane === 'background' ? endpoint.backgroundWire : endpoint.wire
    const value = (await wire.call(method, params, {
      signal: hedge.abort ?? signal,
      block: opts.minBlock === undefined ? -1 : Number(opts.minBlock),
      alone: opts.alone,
      twin: opts.twin,
      sent: () => {
        sentAt = performance.now()
        hedge.sent()
      },
    })) as T
    const answered = performance.now()
    endpoint.succeeded(answered - started)
    pool.hedging.answered(hedgeKind(method, opts), answered - sentAt)
    pool.observer?.rpcAttempt(method, endpoint.index)
    return { endpoint, value }
  } catch (err) {
    if (signal?.aborted) throw signal.reason ?? err
    if (hedge.abort?.aborted) {
      endpoint.outpaced(performance.now() - started)
      pool.observer?.rpcAttempt(method, endpoint.index)
      return { endpoint, error: err, newFault: false }
    }
    const newFault = endpoint.failed(err, lane)
    pool.observer?.rpcAttempt(method, endpoint.index, err instanceof RpcRequestError ? err.kind : 'network')
    return { endpoint, error: err, newFault }
  }
}
