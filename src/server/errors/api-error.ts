/**
 * Errors of the public API. Every /v1 response that is not a success carries
 * the specification's envelope: { error: { code, message, request_id } }.
 * Internal details (queries, stack traces, causes) never reach the client.
 */
import { TRPCError } from '@trpc/server'
import type { TRPC_ERROR_CODE_KEY } from '@trpc/server/rpc'

export const API_ERROR_STATUS = {
  INVALID_ARGUMENT: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  PAYLOAD_TOO_LARGE: 413,
  /** Only GET /v1/media: a byte range beyond the stored media. */
  RANGE_NOT_SATISFIABLE: 416,
  RATE_LIMITED: 429,
  INTERNAL_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
  RATE_LIMITER_UNAVAILABLE: 503,
} as const

export type ApiErrorCode = keyof typeof API_ERROR_STATUS

const TRPC_CODE: Record<ApiErrorCode, TRPC_ERROR_CODE_KEY> = {
  INVALID_ARGUMENT: 'BAD_REQUEST',
  UNAUTHORIZED: 'UNAUTHORIZED',
  FORBIDDEN: 'FORBIDDEN',
  NOT_FOUND: 'NOT_FOUND',
  METHOD_NOT_ALLOWED: 'METHOD_NOT_SUPPORTED',
  PAYLOAD_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  RANGE_NOT_SATISFIABLE: 'BAD_REQUEST',
  RATE_LIMITED: 'TOO_MANY_REQUESTS',
  INTERNAL_ERROR: 'INTERNAL_SERVER_ERROR',
  SERVICE_UNAVAILABLE: 'SERVICE_UNAVAILABLE',
  RATE_LIMITER_UNAVAILABLE: 'SERVICE_UNAVAILABLE',
}

/** An error whose code and message are safe to show to API clients. */
export class ApiError extends TRPCError {
  readonly apiCode: ApiErrorCode
  readonly status: number
  /** Extra response headers (Retry-After on 429, Allow on 405, …). */
  readonly headers: Record<string, string>

  constructor(
    apiCode: ApiErrorCode,
    message: string,
    options: { headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    super({ code: TRPC_CODE[apiCode], message, cause: options.cause })
    this.name = 'ApiError'
    this.apiCode = apiCode
    this.status = API_ERROR_STATUS[apiCode]
    this.headers = options.headers ?? {}
  }
}

export interface ErrorEnvelope {
  error: { code: ApiErrorCode; message: string; request_id?: string }
}

export function errorEnvelope(code: ApiErrorCode, message: string, requestId?: string): ErrorEnvelope {
  return { error: { code, message, ...(requestId ? { request_id: requestId } : {}) } }
}
