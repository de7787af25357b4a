/**
 * The responses of the OpenAPI document as the REST layer (handler.ts) and
 * the media handler really send them: the error envelope with one example
 * per status, 304 where an ETag applies, and every header those handlers
 * set, declared once under components.headers and referenced by name.
 */
import type { HeaderObject, ResponseObject, SchemaObject } from 'openapi3-ts/oas31'
import { API_ERROR_STATUS } from '@/server/errors/api-error'

/** The second spelling the specification allows for two codes ("a client accepts either spelling"). */
export const ALTERNATE_CODE_SPELLINGS = {
  INVALID_REQUEST: 'INVALID_ARGUMENT',
  UNAVAILABLE: 'SERVICE_UNAVAILABLE',
}

export const errorEnvelopeSchema: SchemaObject = {
  type: 'object',
  required: ['error'],
  additionalProperties: false,
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      additionalProperties: false,
      properties: {
        code: {
          type: 'string',
          enum: [...Object.keys(API_ERROR_STATUS), ...Object.keys(ALTERNATE_CODE_SPELLINGS)],
          description:
            'What went wrong, by HTTP status: 400 `INVALID_ARGUMENT`, 401 `UNAUTHORIZED`, 403 `FORBIDDEN`, 404 `NOT_FOUND`, 405 `METHOD_NOT_ALLOWED`, 413 `PAYLOAD_TOO_LARGE`, 416 `RANGE_NOT_SATISFIABLE` (media only), 429 `RATE_LIMITED`, 500 `INTERNAL_ERROR`, 503 `SERVICE_UNAVAILABLE` or `RATE_LIMITER_UNAVAILABLE`. This service sends the spellings `INVALID_ARGUMENT` and `SERVICE_UNAVAILABLE`; the specification also allows `INVALID_REQUEST` (400) and `UNAVAILABLE` (503), so a client accepts either spelling of those two.',
        },
        message: {
          type: 'string',
          description: 'A readable sentence; names the offending parameter on a 400.',
        },
        request_id: {
          type: 'string',
          format: 'uuid',
          description: 'Unique id of the request, also sent as X-Request-Id.',
        },
      },
    },
  },
  example: {
    error: {
      code: 'INVALID_ARGUMENT',
      message: 'limit: must be at most 100',
      request_id: '0b7e6f3c-2d4a-4c61-9a8e-5f1d2c3b4a59',
    },
  },
}

const decimal = { type: 'string', pattern: '^[0-9]+$' } as const
const text = { type: 'string' } as const

/** Every header the /v1 handlers send that a client may read, by name. */
export const headerComponents: Record<string, HeaderObject> = {
  'X-Request-Id': {
    description: 'Unique id of this request (also `error.request_id`); quote it when reporting a problem.',
    schema: { type: 'string', format: 'uuid' },
  },
  ETag: {
    description:
      'Strong validator of the response body. Send it back as `If-None-Match` to get 304 without a body while nothing changed.',
    schema: { type: 'string', pattern: '^"[A-Za-z0-9_-]+"$' },
  },
  'Cache-Control': {
    description:
      '`private, no-cache` on data responses (cache, but revalidate with If-None-Match); `no-store` on the demo token and on every error.',
    schema: { type: 'string', enum: ['private, no-cache', 'no-store'] },
  },
  RateLimit: {
    description:
      'The policy closest to exhaustion: `"<policy>";r=<requests left>;t=<seconds until one more comes back>` (draft-ietf-httpapi-ratelimit-headers). On every limited response; absent when the rate limiter itself is unavailable.',
    schema: text,
    example: '"min";r=297;t=42',
  },
  'RateLimit-Policy': {
    description:
      'Every window that applies to this request: `"<name>";q=<quota>;w=<window seconds>`, comma-separated. A window of the client address that differs from the credential’s is named `ip-<name>`.',
    schema: text,
    example: '"sec";q=5;w=1, "min";q=300;w=60',
  },
  'Retry-After': {
    description: 'Whole seconds (at least 1) to wait before the request can succeed.',
    schema: { type: 'string', pattern: '^[1-9][0-9]*$' },
    example: '2',
  },
  'RateLimit-Reset': {
    description: 'Whole seconds until the refused request can succeed; the same value as Retry-After.',
    schema: { type: 'string', pattern: '^[1-9][0-9]*$' },
    example: '2',
  },
  'X-Chain-Head': {
    description:
      'Extension: the chain head the indexer has observed (`last_seen_block`) when the response was made.',
    schema: decimal,
    example: '1048576',
  },
  'X-Confirmed-Block': {
    description: 'Extension: the highest confirmed, fully indexed block (`last_confirmed_block`).',
    schema: decimal,
    example: '1048564',
  },
  Allow: {
    description: 'The methods this path answers.',
    schema: text,
    example: 'GET, HEAD',
  },
  Vary: {
    description: '`Accept-Encoding`, and `Origin` when the request came from an allowed browser origin.',
    schema: text,
  },
  'Content-Encoding': {
    description: '`br` or `gzip` for a body of 1 KiB or more when the request accepts it; absent otherwise.',
    schema: { type: 'string', enum: ['br', 'gzip'] },
  },
  'X-Content-Type-Options': {
    description: 'Always `nosniff`.',
    schema: { type: 'string', const: 'nosniff' },
  },
  'Access-Control-Allow-Origin': {
    description:
      'The request’s `Origin`, when it is allowed (this site, or an origin some active key allows); absent otherwise.',
    schema: text,
  },
  'Access-Control-Expose-Headers': {
    description: 'With Access-Control-Allow-Origin: the headers above that a browser script may read.',
    schema: text,
  },
}

const ref = (name: string) => ({ $ref: `#/components/headers/${name}` })
const headersOf = (names: string[]) => Object.fromEntries(names.map((name) => [name, ref(name)]))

/** Sent on every JSON answer of /v1 (handler.ts), success or error. */
const EVERY_JSON_RESPONSE = [
  'X-Request-Id',
  'Cache-Control',
  'RateLimit',
  'RateLimit-Policy',
  'Vary',
  'X-Content-Type-Options',
  'Content-Encoding',
  'Access-Control-Allow-Origin',
  'Access-Control-Expose-Headers',
]
/** A read with a credential also reports the index's freshness (one read of indexer_state, ≤ 250 ms old). */
const FRESHNESS = ['X-Chain-Head', 'X-Confirmed-Block']

export function successHeaders(scoped: boolean) {
  return headersOf([...EVERY_JSON_RESPONSE, 'ETag', ...(scoped ? FRESHNESS : [])])
}

/** 304: the same headers as the 200 it stands for, without a body (and without Content-Encoding). */
export function notModifiedResponse(scoped: boolean): ResponseObject {
  const names = [...EVERY_JSON_RESPONSE, 'ETag', ...(scoped ? FRESHNESS : [])]
  return {
    description: 'Not modified: `If-None-Match` matched the current ETag. No body.',
    headers: headersOf(names.filter((n) => n !== 'Content-Encoding')),
  }
}

/** The live stream's 200: the common headers but no compression, no ETag, no freshness. */
export function streamHeaders() {
  return headersOf(EVERY_JSON_RESPONSE.filter((n) => n !== 'Content-Encoding' && n !== 'Cache-Control'))
}

/** The media path's bytes (200, 206, 304) also carry the per-IP limit and may be embedded anywhere. */
export function mediaSuccessHeaders(): Record<string, HeaderObject | { $ref: string }> {
  return {
    ...headersOf(['RateLimit', 'RateLimit-Policy']),
    'Access-Control-Allow-Origin': { schema: { type: 'string', const: '*' } },
    'Cross-Origin-Resource-Policy': { schema: { type: 'string', const: 'cross-origin' } },
  }
}

export const ifNoneMatchParameter = {
  in: 'header',
  name: 'If-None-Match',
  required: false,
  description: 'An ETag of an earlier response: answers 304 without a body while the response is the same.',
  schema: { type: 'string' },
}

const DESCRIPTIONS: Record<number, string> = {
  400: 'Malformed parameter, cursor or filter (`INVALID_ARGUMENT`). Not retried unchanged.',
  401: 'Missing, malformed, expired or revoked credential (`UNAUTHORIZED`). Not retried unchanged.',
  403: 'The credential lacks the scope, or the origin is not allowed (`FORBIDDEN`). Not retried unchanged.',
  404: 'Unknown resource (`NOT_FOUND`). Not retried unchanged.',
  405: 'Method not allowed on this path (`METHOD_NOT_ALLOWED`); `Allow` lists the methods.',
  416: 'The range lies beyond the stored bytes (`RANGE_NOT_SATISFIABLE`).',
  429: 'A rate limit is exceeded (`RATE_LIMITED`); retry after `Retry-After` seconds.',
  500: 'Unexpected failure (`INTERNAL_ERROR`); no internals are disclosed.',
  503: 'A dependency is unavailable (`SERVICE_UNAVAILABLE`, or `RATE_LIMITER_UNAVAILABLE` with `Retry-After`); retry with exponential backoff and jitter.',
}

/** Headers an error of this status adds to the common ones. */
const EXTRA_ERROR_HEADERS: Record<number, string[]> = {
  405: ['Allow'],
  429: ['Retry-After', 'RateLimit-Reset'],
  503: ['Retry-After'],
}

/** What one operation's error examples are made of. */
export interface ErrorContext {
  path: string
  scope: string | undefined
  network: string
  parameterNames: string[]
}

/** The message this service answers for each status on this operation (the handlers' own wording). */
function exampleMessage(status: number, c: ErrorContext): string {
  const address = '0x5fbdb2315678afecb367f032d93f642f64180aa3'
  switch (status) {
    case 400:
      if (c.path === '/v1/media') return 'url: required'
      if (c.path === '/v1/activity/stream') return 'Last-Event-ID: must be a positive integer (an event id)'
      if (c.parameterNames.includes('limit')) return 'limit: must be at most 100'
      if (c.parameterNames.includes('address'))
        return 'address: must be a lowercase 0x-prefixed 40-hex-digit address'
      return "unknown parameter 'netwrok'"
    case 401:
      return 'A bearer credential is required. Send Authorization: Bearer <API key or demo token>.'
    case 403:
      return `This credential lacks the scope '${c.scope}' that this endpoint needs.`
    case 404:
      if (c.path === '/v1/indexer/status') {
        const other = c.network === 'mainnet' ? 'sepolia' : 'mainnet'
        return `Network '${other}' is not indexed here; this service indexes '${c.network}'.`
      }
      if (c.path === '/v1/collections/{address}')
        return `No collection ${address} is indexed on ${c.network}.`
      if (c.path === '/v1/nfts/{address}/{tokenId}') return `No token 17 of collection ${address} is indexed.`
      if (c.path === '/v1/media') return 'No stored media for this url.'
      return `There is no endpoint at ${c.path}.`
    case 405:
      return 'POST is not allowed here; use GET or HEAD.'
    case 410:
      return 'Last-Event-ID: events after 1200 are no longer kept (24 h); the oldest available event id is 48001. Resume from 48000 or later, or reconnect without a resume point for new events only.'
    case 416:
      return 'The range cannot be satisfied: the media has 48213 bytes.'
    case 429:
      if (c.path === '/v1/activity/stream')
        return 'At most 5 live streams per API key are open at once; close one first. Retry after 1 s.'
      return c.scope
        ? 'Rate limit exceeded for this API key: at most 5 requests per second. Retry after 1 s.'
        : c.path === '/v1/demo-token'
          ? 'Rate limit exceeded for this client address: at most 5 requests per minute. Retry after 12 s.'
          : 'Rate limit exceeded for this client address: at most 50 requests per second. Retry after 1 s.'
    case 503:
      return 'The database is unavailable; retry with backoff.'
    default:
      return 'An unexpected error occurred.'
  }
}

/** The code of a status (the first listed: SERVICE_UNAVAILABLE for 503). */
const codeOf = (status: number) =>
  Object.entries(API_ERROR_STATUS).find(([, s]) => s === status)?.[0] ?? 'INTERNAL_ERROR'

/**
 * One error response: the envelope, an example with this status's code and
 * the handler's wording, and the headers sent with it. `extraHeaders` keeps
 * headers an operation declares itself (Content-Range on the media path's 416).
 */
export function errorResponse(
  status: number,
  context: ErrorContext,
  extraHeaders: ResponseObject['headers'] = {},
  description = DESCRIPTIONS[status] ?? 'Error.',
): ResponseObject {
  return {
    description,
    headers: {
      ...headersOf([...EVERY_JSON_RESPONSE, ...(EXTRA_ERROR_HEADERS[status] ?? [])]),
      ...extraHeaders,
    },
    content: {
      'application/json': {
        schema: { $ref: '#/components/schemas/ErrorEnvelope' },
        example: {
          error: {
            code: codeOf(status),
            message: exampleMessage(status, context),
            request_id: '0b7e6f3c-2d4a-4c61-9a8e-5f1d2c3b4a59',
          },
        },
      },
    },
  }
}
