/**
 * The one error class of the service. Every failure raised on purpose is an
 * ApiError or one of its subclasses (SiweError, LimiterUnavailableError):
 * a code, the HTTP status that goes with it, and a message that is safe to
 * show. Domain code throws these and nothing else; the two edges map them:
 * the REST layer writes them in the specification's envelope
 * (./error-body.ts), the portal's tRPC procedures turn them into tRPC
 * errors (src/server/api/trpc/portal.ts). Internal details (queries, stack
 * traces, causes) stay in `cause`, for the log.
 */

/** The codes of the /v1 envelope (listed in /openapi.json's ErrorEnvelope). */
export const API_ERROR_STATUS = {
  INVALID_ARGUMENT: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  /** Only GET /v1/activity/stream: a resume point older than the events kept (docs/push.md). */
  RESUME_POINT_EXPIRED: 410,
  PAYLOAD_TOO_LARGE: 413,
  /** Only GET /v1/media: a byte range beyond the stored media. */
  RANGE_NOT_SATISFIABLE: 416,
  RATE_LIMITED: 429,
  INTERNAL_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
  RATE_LIMITER_UNAVAILABLE: 503,
} as const

/** Codes only the portal's own endpoints answer (never a /v1 response). */
const PORTAL_ERROR_STATUS = {
  /** A key in a state that forbids the change (rotating a revoked key). */
  CONFLICT: 409,
  /** A portal mutation without a JSON body (src/app/api/trpc). */
  UNSUPPORTED_MEDIA_TYPE: 415,
} as const

export type ApiErrorCode = keyof typeof API_ERROR_STATUS
export type ErrorCode = ApiErrorCode | keyof typeof PORTAL_ERROR_STATUS

const STATUS: Record<ErrorCode, number> = { ...API_ERROR_STATUS, ...PORTAL_ERROR_STATUS }

export interface ApiErrorOptions {
  /** Extra response headers (Retry-After on 429, Allow on 405, …). */
  headers?: Record<string, string>
  cause?: unknown
}

/** An error whose code and message are safe to show to clients. */
export class ApiError extends Error {
  readonly code: ErrorCode
  readonly status: number
  readonly headers: Record<string, string>

  constructor(code: ErrorCode, message: string, options: ApiErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = 'ApiError'
    this.code = code
    this.status = STATUS[code]
    this.headers = options.headers ?? {}
  }
}
