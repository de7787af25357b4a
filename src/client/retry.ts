/**
 * A fetch that retries what may succeed later: 429 and 503, as the
 * specification says, and for reads (GET, HEAD) also a gateway's 502 and 504,
 * a connection that fails or breaks off mid-body, and an attempt that gets no
 * answer within `timeoutMs`. Waits are exponential backoff with full jitter,
 * added to the response's `Retry-After` when it sends one. Attempts are
 * bounded, and the wait ends at once when the request's AbortSignal fires.
 * The body is read inside the attempt, so a body cut short is retried like a
 * failed connection; any other answer is returned as it is. A failure without
 * an answer is thrown as NftDataApiError (NETWORK_ERROR or TIMEOUT).
 */
import { NftDataApiError, RETRYABLE_STATUSES } from './errors.js'

export interface RetryOptions {
  /** Attempts in all, the first included (1 = no retry). Default 5. */
  attempts?: number
  /** The first backoff's upper bound; each retry doubles it. Default 500 ms. */
  baseDelayMs?: number
  /** The largest backoff (a longer Retry-After is still honoured). Default 30 s. */
  maxDelayMs?: number
  /** Statuses retried. Default 429, 502, 503 and 504 (502 and 504 for GET and HEAD only). */
  statuses?: number[]
  /** One attempt's time limit, its body included; past it the attempt counts as failed. Default 30 s. */
  timeoutMs?: number
  /**
   * Called before each wait: the status (0 when no answer came), the attempt
   * that got it (from 1), and the wait.
   */
  onRetry?: (event: { status: number; attempt: number; delayMs: number }) => void
}

export type Fetch = (request: Request) => Promise<Response>

/** setTimeout's largest delay; a longer one would fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1

/**
 * The wait before the next attempt: full jitter over an exponential bound,
 * after the Retry-After the answer asked for, so that clients refused together
 * do not all come back at the same moment.
 */
export function retryDelayMs(
  attempt: number,
  retryAfter: string | null,
  options: Pick<RetryOptions, 'baseDelayMs' | 'maxDelayMs'> = {},
  random: () => number = Math.random,
): number {
  const base = options.baseDelayMs ?? 500
  const max = options.maxDelayMs ?? 30_000
  const backoff = random() * Math.min(max, base * 2 ** (attempt - 1))
  return Math.min(MAX_TIMER_MS, (retryAfterMs(retryAfter) ?? 0) + backoff)
}

/** Retry-After as delta-seconds or an HTTP date (RFC 9110), in milliseconds from now. */
export function retryAfterMs(value: string | null): number | undefined {
  if (value === null || value.trim() === '') return undefined
  if (/^\s*\d+\s*$/.test(value)) return Math.min(MAX_TIMER_MS, Number(value) * 1000)
  // An HTTP date names its weekday and month; Date.parse alone would take "1.5" for a year.
  if (!/[a-z]{3}/i.test(value)) return undefined
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.min(MAX_TIMER_MS, Math.max(0, date - Date.now()))
}

/** Responses whose body must be null (the Fetch standard's null body statuses). */
const NULL_BODY = [101, 103, 204, 205, 304]

export function retryingFetch(options: RetryOptions = {}, fetchImpl: Fetch = (r) => fetch(r)): Fetch {
  const attempts = Math.max(1, options.attempts ?? 5)
  const statuses = options.statuses ?? RETRYABLE_STATUSES
  const timeoutMs = options.timeoutMs ?? 30_000
  return async (request) => {
    // Only reads are sent again after a failure that may have reached the server.
    const read = request.method === 'GET' || request.method === 'HEAD'
    const retried = (status: number) =>
      statuses.includes(status) && (read || status === 429 || status === 503)
    for (let attempt = 1; ; attempt++) {
      const last = attempt >= attempts
      let answer: Response
      try {
        // Each attempt sends a copy: a Request's body can be read once.
        answer = await attemptOnce(last ? request : request.clone(), timeoutMs, fetchImpl)
      } catch (err) {
        if (request.signal?.aborted || !(err instanceof NftDataApiError) || !read || last) throw err
        const delayMs = retryDelayMs(attempt, null, options)
        options.onRetry?.({ status: 0, attempt, delayMs })
        await sleep(delayMs, request.signal)
        continue
      }
      if (!retried(answer.status) || last) return answer
      const delayMs = retryDelayMs(attempt, answer.headers.get('Retry-After'), options)
      options.onRetry?.({ status: answer.status, attempt, delayMs })
      await sleep(delayMs, request.signal)
    }
  }
}

/** One exchange, its body read whole within the time limit; no answer is NftDataApiError. */
async function attemptOnce(request: Request, timeoutMs: number, fetchImpl: Fetch): Promise<Response> {
  const controller = new AbortController()
  const timeout = new Error(`no answer within ${timeoutMs} ms`)
  const timer = setTimeout(() => controller.abort(timeout), timeoutMs)
  const onAbort = () => controller.abort(request.signal.reason)
  request.signal?.addEventListener('abort', onAbort, { once: true })
  try {
    const response = await fetchImpl(new Request(request, { signal: controller.signal }))
    const body = NULL_BODY.includes(response.status) ? null : await response.arrayBuffer()
    return new Response(body, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    })
  } catch (err) {
    if (request.signal?.aborted) throw request.signal.reason
    if (controller.signal.aborted)
      throw NftDataApiError.noAnswer('TIMEOUT', `${request.method} ${request.url}: ${timeout.message}`, err)
    throw NftDataApiError.noAnswer(
      'NETWORK_ERROR',
      `${request.method} ${request.url}: the connection failed or broke off`,
      err,
    )
  } finally {
    clearTimeout(timer)
    request.signal?.removeEventListener('abort', onAbort)
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
