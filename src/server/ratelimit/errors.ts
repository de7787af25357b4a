/** The limiter's 429 RATE_LIMITED (its 503 is LimiterUnavailableError, ./store.ts). */
import { ApiError } from '@/server/errors/api-error'
import { retryHeaders } from './headers'
import type { LimitDecision } from './policy'

const WINDOW_WORDS: Record<string, string> = { sec: 'per second', min: 'per minute' }

export function rateLimitedError(
  decision: LimitDecision,
  who: string,
  headers: Record<string, string>,
): ApiError {
  const wait = Math.max(1, Math.ceil(decision.retryAfterMs / 1000))
  let what: string
  if (decision.exceeded === 'concurrency') {
    what = `at most ${decision.inFlight ?? 0} concurrent requests`
  } else {
    const w = decision.windows.find((x) => x.remaining === 0) ?? decision.windows[0]
    what = w
      ? `at most ${w.limit} requests ${WINDOW_WORDS[w.name] ?? `per ${w.windowMs / 1000} s`}`
      : 'the limit'
  }
  return new ApiError('RATE_LIMITED', `Rate limit exceeded for ${who}: ${what}. Retry after ${wait} s.`, {
    headers: { ...headers, ...retryHeaders(decision.retryAfterMs) },
  })
}
