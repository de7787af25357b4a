import { describeLimits } from './format'
import type { ApiResponse, DemoToken } from './types'

/** What a refusal means and what to do about it; nothing for a success. */
export function StatusExplanation({
  response,
  retryIn,
  limits,
}: {
  response: ApiResponse
  retryIn: number
  limits: DemoToken['limits'] | undefined
}) {
  const error = (response.body as { error?: { code?: string; message?: string } } | null)?.error
  if (response.status === 429) {
    return (
      <div className="alert warn" role="alert">
        <strong>429 Rate limited.</strong> Demo tokens allow{' '}
        {limits ? describeLimits(limits) : 'only a few requests per second'} (per token and per address). The
        request was not counted. Wait for <code>Retry-After</code> seconds —{' '}
        {retryIn > 0 ? `${Math.ceil(retryIn / 1000)} s from now` : 'you can send again now'} — then retry. In
        code, retry 429 and 503 with exponential backoff plus jitter; never retry 400, 401, 403 or 404
        unchanged.
      </div>
    )
  }
  if (response.status === 401) {
    return (
      <div className="alert error" role="alert">
        <strong>401 Unauthorized.</strong> {error?.message ?? ''} The demo token may have expired: get a new
        one.
      </div>
    )
  }
  if (response.status === 400) {
    return (
      <div className="alert error" role="alert">
        <strong>400 Invalid argument.</strong> {error?.message ?? ''}
      </div>
    )
  }
  if (response.status === 404) {
    return (
      <div className="alert info" role="status">
        <strong>404 Not found.</strong> {error?.message ?? 'No such resource.'}
      </div>
    )
  }
  if (response.status >= 500) {
    return (
      <div className="alert error" role="alert">
        <strong>{response.status}.</strong> {error?.message ?? ''} Retry with backoff; quote the request id if
        it persists.
      </div>
    )
  }
  return null
}
