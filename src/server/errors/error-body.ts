/**
 * The body of every error response of the web process — /v1, the media path,
 * the web server's own refusals and the portal's Next.js routes: the
 * specification's envelope { error: { code, message, request_id } }, as JSON.
 * errorBody is the only function that writes one.
 */
import type { ApiError } from './api-error'

export function errorBody(error: ApiError, requestId?: string): string {
  return JSON.stringify({
    error: { code: error.code, message: error.message, ...(requestId ? { request_id: requestId } : {}) },
  })
}

/** An error as a fetch-API Response (the portal's Next.js routes): never cached. */
export function errorResponse(error: ApiError, headers: Record<string, string> = {}): Response {
  return new Response(errorBody(error), {
    status: error.status,
    headers: {
      'Content-Type': 'application/json',
      'Cache-Control': 'no-store',
      'X-Content-Type-Options': 'nosniff',
      ...error.headers,
      ...headers,
    },
  })
}
