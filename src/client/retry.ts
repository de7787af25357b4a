/**
 * A fetch that retries the answers the specification says to retry — 429
 * and 503 — with exponential backoff and full jitter, never sooner than the
 * response's `Retry-After` asks. Attempts are bounded, and the wait ends at
 * once when the request's AbortSignal fires. Any other answer is returned as
 * it is.
 */

export interface RetryOptions {
  /** Attempts in all, the first included (1 = no retry). Default 5. */
  attempts?: number
  /** The first backoff's upper bound; each retry doubles it. Default 500 ms. */
  baseDelayMs?: number
  /** The largest backoff (a longer Retry-After is still honoured). Default 30 s. */
  maxDelayMs?: number
  /** Statuses retried. Default [429, 503]. */
  statuses?: number[]
  /** Called before each wait: the status, the attempt that got it (from 1), and the wait. */
  onRetry?: (event: { status: number; attempt: number; delayMs: number }) => void
}

export type Fetch = (request: Request) => Promise<Response>

/** The wait before the next attempt: full jitter over an exponential bound, at least Retry-After. */
export function retryDelayMs(
  attempt: number,
  retryAfter: string | null,
  options: Pick<RetryOptions, 'baseDelayMs' | 'maxDelayMs'> = {},
  random: () => number = Math.random,
): number {
  const base = options.baseDelayMs ?? 500
  const max = options.maxDelayMs ?? 30_000
  const backoff = random() * Math.min(max, base * 2 ** (attempt - 1))
  return Math.max(backoff, retryAfterMs(retryAfter) ?? 0)
}

/** Retry-After as delta-seconds or an HTTP date, in milliseconds from now. */
export function retryAfterMs(value: string | null): number | undefined {
  if (value === null || value.trim() === '') return undefined
  if (/^\s*\d+\s*$/.test(value)) return Number(value) * 1000
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now())
}

export function retryingFetch(options: RetryOptions = {}, fetchImpl: Fetch = (r) => fetch(r)): Fetch {
  const attempts = Math.max(1, options.attempts ?? 5)
  const statuses = options.statuses ?? [429, 503]
  return async (request) => {
    for (let attempt = 1; ; attempt++) {
      // Each attempt sends a copy: a Request's body can be read once.
      const response = await fetchImpl(attempt < attempts ? request.clone() : request)
      if (!statuses.includes(response.status) || attempt >= attempts) return response
      const delayMs = retryDelayMs(attempt, response.headers.get('Retry-After'), options)
      options.onRetry?.({ status: response.status, attempt, delayMs })
      await response.body?.cancel()
      await sleep(delayMs, request.signal)
    }
  }
}

/** Waits, or rejects with the signal's reason as soon as it aborts. */
function sleep(ms: number, signal: AbortSignal | null): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal?.reason)
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}
