/**
 * The OpenAPI 3.1 document, generated from the procedures (served at
 * /openapi.json and rendered at /docs). trpc-to-openapi describes errors in
 * its own shape; the API answers with the specification's envelope, so every
 * error response is rewritten to point at ErrorEnvelope, and the headers each
 * /v1 response carries are declared.
 */

import type { SchemaObject } from 'openapi3-ts/oas31'
import { generateOpenApiDocument, type OpenAPIObject } from 'trpc-to-openapi'
import type { Config } from '@/config/env'
import { mediaPathItem } from '@/server/api/routers/media/media.openapi'
import { v1Router } from '@/server/api/v1/router'
import { API_ERROR_STATUS } from '@/server/errors/api-error'

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Malformed parameter, cursor or filter (INVALID_ARGUMENT). Not retried unchanged.',
  401: 'Missing, malformed, expired or revoked credential (UNAUTHORIZED).',
  403: 'Missing scope, or origin not allowed (FORBIDDEN).',
  404: 'Unknown resource (NOT_FOUND).',
  405: 'Method not allowed on this path (METHOD_NOT_ALLOWED).',
  429: 'A rate limit is exceeded (RATE_LIMITED); retry after `Retry-After` seconds.',
  500: 'Unexpected failure (INTERNAL_ERROR); no internals are disclosed.',
  503: 'A dependency is unavailable (SERVICE_UNAVAILABLE or RATE_LIMITER_UNAVAILABLE); retry with backoff.',
}

const errorEnvelopeSchema: SchemaObject = {
  type: 'object',
  required: ['error'],
  additionalProperties: false,
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      additionalProperties: false,
      properties: {
        code: { type: 'string', enum: Object.keys(API_ERROR_STATUS) },
        message: { type: 'string' },
        request_id: { type: 'string', description: 'Unique id of the request, also sent as X-Request-Id.' },
      },
    },
  },
  example: {
    error: { code: 'INVALID_ARGUMENT', message: 'limit: must be at most 100', request_id: '6f1c…' },
  },
}

/** Beyond the specification: the index's freshness on every /v1 data response (one read of indexer_state, ≤ 250 ms old). */
const freshnessHeaders = {
  'X-Chain-Head': {
    description:
      'Extension: the chain head the indexer has observed (last_seen_block) when the response was made.',
    schema: { type: 'string', pattern: '^[0-9]+$' },
  },
  'X-Confirmed-Block': {
    description: 'Extension: the highest confirmed, fully indexed block (last_confirmed_block).',
    schema: { type: 'string', pattern: '^[0-9]+$' },
  },
}

const requestIdHeader = {
  description: 'Unique id of this request; quote it when reporting a problem.',
  schema: { type: 'string' },
}

let cached: { key: string; doc: OpenAPIObject } | undefined

export function openApiDocument(config: Pick<Config, 'PUBLIC_URL' | 'NETWORK'>): OpenAPIObject {
  const key = `${config.PUBLIC_URL}|${config.NETWORK}`
  if (cached?.key === key) return cached.doc
  const doc = generateOpenApiDocument(v1Router, {
    title: 'NFT Data API',
    version: '1.0.0',
    description: `Read-only access to the indexed ERC-721 data of the \`${config.NETWORK}\` network: collections, NFTs, owners, transfers and activity, with the index's freshness and coverage. See ${config.PUBLIC_URL}/docs for the guide.`,
    baseUrl: config.PUBLIC_URL,
    securitySchemes: {
      bearer: {
        type: 'http',
        scheme: 'bearer',
        description: 'A portal API key or a demo token from POST /v1/demo-token.',
      },
    },
  })
  doc.components ??= {}
  doc.components.schemas = { ...doc.components.schemas, ErrorEnvelope: errorEnvelopeSchema }
  for (const pathItem of Object.values(doc.paths ?? {})) {
    for (const operation of Object.values(
      pathItem as Record<string, { responses?: Record<string, unknown>; security?: unknown[] }>,
    )) {
      if (!operation?.responses) continue
      for (const [status, response] of Object.entries(operation.responses)) {
        const code = Number(status)
        if (code >= 400) {
          operation.responses[status] = {
            description: ERROR_DESCRIPTIONS[code] ?? 'Error',
            headers: { 'X-Request-Id': requestIdHeader },
            content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } },
          }
        } else if (response && typeof response === 'object') {
          const r = response as { headers?: Record<string, unknown> }
          r.headers = {
            ...r.headers,
            'X-Request-Id': requestIdHeader,
            ...(scoped(operation) ? freshnessHeaders : {}),
          }
        }
      }
    }
  }
  doc.paths = { ...doc.paths, '/v1/media': mediaPathItem } as OpenAPIObject['paths']
  addHeadOperation(doc, '/v1/collections')
  cached = { key, doc }
  return doc
}

/** /v1 read procedures (those with a bearer credential) carry the freshness headers. */
function scoped(operation: { security?: unknown[] }): boolean {
  return Array.isArray(operation.security) && operation.security.length > 0
}

/**
 * The specification lists HEAD /v1/collections as an endpoint of its own:
 * the same parameters, statuses and headers as GET, without a body.
 */
function addHeadOperation(doc: OpenAPIObject, path: string) {
  type Operation = {
    operationId?: string
    responses?: Record<string, Record<string, unknown>>
    [k: string]: unknown
  }
  const item = doc.paths?.[path] as Record<string, Operation> | undefined
  const get = item?.get
  if (!item || !get?.responses) return
  const responses = Object.fromEntries(
    Object.entries(get.responses).map(([status, response]) => {
      const { content: _content, ...rest } = response
      return [status, { ...rest, description: `${String(response.description ?? '')} (no body)`.trim() }]
    }),
  )
  item.head = {
    ...get,
    operationId: `${get.operationId ?? 'operation'}-head`,
    summary: 'Check the collection list (HEAD)',
    description:
      'Answers 200 with no body when the collection list is available; same parameters, checks and error statuses as GET.',
    responses,
  }
}
