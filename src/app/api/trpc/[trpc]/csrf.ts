/**
 * CSRF protection of the portal's internal tRPC endpoint (see route.ts).
 */
import { ApiError, type ErrorCode } from '@/server/errors/api-error'
import { errorResponse } from '@/server/errors/error-body'

const refuse = (code: ErrorCode, message: string): Response => errorResponse(new ApiError(code, message))

/** Same-origin check: null when the request may proceed, else the refusal. */
export function csrfRefusal(req: Request, publicOrigin: string): Response | null {
  const site = req.headers.get('sec-fetch-site')
  if (site === 'cross-site' || site === 'same-site') {
    return refuse('FORBIDDEN', 'Cross-site requests are not accepted.')
  }
  if (req.method === 'GET') return null
  const origin = req.headers.get('origin')
  if (origin !== null ? origin !== publicOrigin : site !== 'same-origin') {
    return refuse('FORBIDDEN', 'This request must come from the portal itself.')
  }
  const type = req.headers.get('content-type') ?? ''
  if (!type.toLowerCase().startsWith('application/json')) {
    return refuse('UNSUPPORTED_MEDIA_TYPE', 'Send a JSON body.')
  }
  return null
}
