/**
 * The one error the client throws for an answer that is not a success: the
 * HTTP status and the specification's error envelope, whatever the
 * endpoint. A body that is not the envelope (a proxy's HTML page) still
 * gives an envelope, with the code of its status.
 */
import type { components } from './schema'

export type ErrorEnvelope = components['schemas']['ErrorEnvelope']
export type ErrorCode = ErrorEnvelope['error']['code']

/** The specification allows two spellings of two codes; the client reads both as the first. */
const CANONICAL: Partial<Record<ErrorCode, ErrorCode>> = {
  INVALID_REQUEST: 'INVALID_ARGUMENT',
  UNAVAILABLE: 'SERVICE_UNAVAILABLE',
}

const CODE_OF_STATUS: Record<number, ErrorCode> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  413: 'PAYLOAD_TOO_LARGE',
  416: 'RANGE_NOT_SATISFIABLE',
  429: 'RATE_LIMITED',
  503: 'SERVICE_UNAVAILABLE',
}

export class NftDataApiError extends Error {
  override readonly name = 'NftDataApiError'
  /** The code as sent, in either spelling the specification allows. */
  readonly code: ErrorCode
  readonly requestId: string | undefined

  constructor(
    readonly status: number,
    readonly envelope: ErrorEnvelope,
    readonly headers: Headers,
  ) {
    super(`${status} ${envelope.error.code}: ${envelope.error.message}`)
    this.code = envelope.error.code
    this.requestId = envelope.error.request_id ?? headers.get('X-Request-Id') ?? undefined
  }

  /** `INVALID_ARGUMENT` for `INVALID_REQUEST`, `SERVICE_UNAVAILABLE` for `UNAVAILABLE`, else the code. */
  get canonicalCode(): ErrorCode {
    return CANONICAL[this.code] ?? this.code
  }

  /** 429 and 503 are retried with backoff; 400, 401, 403 and 404 are not retried unchanged. */
  get retryable(): boolean {
    return this.status === 429 || this.status === 503
  }

  /** From a response that is not a success; its body is read. */
  static async from(response: Response, body?: unknown): Promise<NftDataApiError> {
    const parsed = body === undefined ? await response.text().then(parseJson, () => undefined) : body
    const envelope = isEnvelope(parsed)
      ? parsed
      : {
          error: {
            code: CODE_OF_STATUS[response.status] ?? 'INTERNAL_ERROR',
            message: `HTTP ${response.status} ${response.statusText}`.trim(),
          },
        }
    return new NftDataApiError(response.status, envelope, response.headers)
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

function isEnvelope(body: unknown): body is ErrorEnvelope {
  const error = (body as { error?: { code?: unknown; message?: unknown } } | undefined)?.error
  return typeof error?.code === 'string' && typeof error.message === 'string'
}
