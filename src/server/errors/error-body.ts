/**
 * The body of every error response of the web process — /v1, the media path,
 * the web server's own refusals and the portal's CSRF refusals: the
 * specification's envelope { error: { code, message, request_id } }, as JSON.
 * This is the only place that writes one.
 */
import type { ApiError } from './api-error'

export function errorBody(error: ApiError, requestId?: string): string {
  return JSON.stringify({
    error: { code: error.code, message: error.message, ...(requestId ? { request_id: requestId } : {}) },
  })
}
