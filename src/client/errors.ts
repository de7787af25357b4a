/**
 * The one error the client throws when a request does not end in a usable
 * success: the HTTP status and the specification's error envelope, whatever
 * the endpoint. A body that is not the envelope (a proxy's HTML page) still
 * gives an envelope, with the code of its status; so does a failure without
 * an answer (status 0: the connection failed, or no answer came in time) and
 * a success whose body is not the JSON the API sends (a captive portal's page).
 */
import type { components } from './schema.js'

export type ErrorEnvelope = components['schemas']['ErrorEnvelope']

/**
 * The codes the API sends, and the client's own for what carries no envelope:
 * BAD_GATEWAY and GATEWAY_TIMEOUT (a proxy's 502 and 504), BAD_RESPONSE (a
 * body that is not the API's JSON), NETWORK_ERROR and TIMEOUT (no answer).
 */
export type ErrorCode =
  | ErrorEnvelope['error']['code']
  | 'BAD_GATEWAY'
  | 'GATEWAY_TIMEOUT'
  | 'BAD_RESPONSE'
  | 'NETWORK_ERROR'
  | 'TIMEOUT'

/** The envelope as the error carries it: the API's, or one the client wrote for a failure without it. */
export interface ClientErrorEnvelope {
  error: { code: ErrorCode; message: string; request_id?: string }
}

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
  502: 'BAD_GATEWAY',
  503: 'SERVICE_UNAVAILABLE',
  504: 'GATEWAY_TIMEOUT',
}

/** Statuses that a later attempt may answer differently: a limit, or a dependency or gateway down. */
export const RETRYABLE_STATUSES: readonly number[] = [429, 502, 503, 504]

export class NftDataApiError extends Error {
  override readonly name = 'NftDataApiError'
  /** The code as sent, in either spelling the specification allows. */
  readonly code: ErrorCode
  readonly requestId: string | undefined

  constructor(
    /** The HTTP status; 0 when no answer came (NETWORK_ERROR, TIMEOUT). */
    readonly status: number,
    readonly envelope: ClientErrorEnvelope,
    readonly headers: Headers,
    options: { cause?: unknown } = {},
  ) {
    super(
      `${status > 0 ? `${status} ` : ''}${envelope.error.code}: ${envelope.error.message}`,
      options.cause === undefined ? undefined : { cause: options.cause },
    )
    this.code = envelope.error.code
    this.requestId = envelope.error.request_id ?? headers.get('X-Request-Id') ?? undefined
  }

  /** `INVALID_ARGUMENT` for `INVALID_REQUEST`, `SERVICE_UNAVAILABLE` for `UNAVAILABLE`, else the code. */
  get canonicalCode(): ErrorCode {
    return CANONICAL[this.code] ?? this.code
  }

  /**
   * 429 and 503 (and a gateway's 502 and 504, and no answer at all) may succeed
   * later, with backoff; 400, 401, 403 and 404 are not retried unchanged.
   */
  get retryable(): boolean {
    return (
      RETRYABLE_STATUSES.includes(this.status) || this.code === 'NETWORK_ERROR' || this.code === 'TIMEOUT'
    )
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

  /** A success whose body is not what the API sends (not JSON, empty, a page without its cursor). */
  static badResponse(status: number, headers: Headers, message: string): NftDataApiError {
    return new NftDataApiError(status, { error: { code: 'BAD_RESPONSE', message } }, headers)
  }

  /** No answer: the connection failed or broke off, or none came within the time limit. */
  static noAnswer(code: 'NETWORK_ERROR' | 'TIMEOUT', message: string, cause?: unknown): NftDataApiError {
    return new NftDataApiError(0, { error: { code, message } }, new Headers(), { cause })
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
