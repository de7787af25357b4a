/**
 * The OpenAPI 3.1 document, generated from the procedures (served at
 * /openapi.json and rendered at /docs), then completed so that it says what
 * the REST layer really does (docs/api.md, "The OpenAPI document"):
 *  - every error response is the specification's envelope, with an example
 *    of its status (trpc-to-openapi describes errors in its own shape);
 *  - every header the handlers send is declared, 304 where an ETag applies;
 *  - each operation names the scope it needs (in `security` and in words);
 *  - HEAD is documented for every GET, as the REST layer answers it;
 *  - formats, the network enum, defaults and examples; no unused component.
 * Redocly (`recommended`) and Spectral (`spectral:oas`) find nothing to
 * report in it (openapi-lint.test.ts).
 */
import type {
  OpenAPIObject,
  OperationObject,
  ParameterObject,
  PathItemObject,
  ResponseObject,
  SchemaObject,
} from 'openapi3-ts/oas31'
import { generateOpenApiDocument } from 'trpc-to-openapi'
import { createSchema } from 'zod-openapi'
import type { Config } from '@/config/env'
import { LICENCE_NAME, LICENCE_SECTION_ID } from '@/lib/licence'
import { routeTable } from '@/server/api/internals/routes'
import { v1Router } from '@/server/api/v1/router'
import { pushEvent } from '@/server/push/activity-event'
import { mediaPathItem } from '@/server/rest/media/media.openapi'
import { STREAM_PATH } from '@/server/rest/stream/stream.handler'
import { pushEventSchema, STREAM_EVENT_SCHEMA, streamPathItem } from '@/server/rest/stream/stream.openapi'
import {
  type ErrorContext,
  errorEnvelopeSchema,
  errorResponse,
  headerComponents,
  ifNoneMatchParameter,
  mediaSuccessHeaders,
  notModifiedResponse,
  streamHeaders,
  successHeaders,
} from './openapi-responses'
import { completeSchemas, networkParameterSchema, removeUnusedComponents } from './openapi-schemas'

const TAGS: Record<string, string> = {
  Authentication: 'Demo tokens for trying the API. Portal keys are created in the portal.',
  Collections: 'ERC-721 contracts seen by the indexer.',
  NFTs: 'Tokens, by collection or one at a time.',
  Owners: 'Tokens currently held by an address.',
  Transfers: 'Canonical transfer records of a collection or a token, newest first.',
  Activity:
    'Every canonical transfer of the network, newest first; poll its first page to follow new events.',
  Indexer: "The index's coverage and freshness.",
  Media: "The service's stored copies of NFT media.",
  Webhooks: 'Signed POSTs to the endpoints created in the portal, per API key.',
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
        description:
          'A portal API key or a demo token from POST /v1/demo-token. The scopes an operation lists in its security requirement are the scopes the credential must carry.',
      },
    },
  }) as OpenAPIObject
  doc.info.contact = { name: 'API documentation', url: `${config.PUBLIC_URL}/docs` }
  doc.info.license = { name: LICENCE_NAME, url: `${config.PUBLIC_URL}/docs#${LICENCE_SECTION_ID}` }
  doc.paths = {
    ...doc.paths,
    '/v1/media': structuredClone(mediaPathItem) as never,
    [STREAM_PATH]: structuredClone(streamPathItem) as never,
  }
  completeOperations(doc, config.NETWORK)
  doc.webhooks = webhookPathItems()
  doc.tags = usedTags(doc).map((name) => ({ name, description: TAGS[name] ?? name }))
  doc.components ??= {}
  doc.components.schemas = {
    ...doc.components.schemas,
    ErrorEnvelope: errorEnvelopeSchema,
    [STREAM_EVENT_SCHEMA]: pushEventSchema() as SchemaObject,
  }
  doc.components.headers = { ...headerComponents }
  doc.components.schemas = { ...doc.components.schemas, ...pushEventSchemas() }
  completeSchemas(doc, config.NETWORK)
  removeUnusedComponents(doc)
  cached = { key, doc }
  return doc
}

type Method = 'get' | 'head' | 'post'

/** ActivityPushEvent (src/server/push/activity-event.ts): the webhook body and the stream's data. */
function pushEventSchemas(): Record<string, SchemaObject> {
  return (createSchema(pushEvent, { io: 'output' }).components ?? {}) as Record<string, SchemaObject>
}

const WEBHOOK_HEADERS: Array<[string, string]> = [
  [
    'webhook-id',
    "The event id (the body's `id`): the same on every attempt and redelivery, for deduplication.",
  ],
  [
    'webhook-timestamp',
    'When this attempt was signed, in Unix seconds. Refuse messages more than 5 minutes off.',
  ],
  [
    'webhook-signature',
    "Standard Webhooks signature: `v1,` + base64 HMAC-SHA256 with the endpoint's secret over `{webhook-id}.{webhook-timestamp}.{body}`.",
  ],
]

/**
 * The webhooks an endpoint created in the portal receives (OpenAPI 3.1
 * `webhooks`; docs/push.md, "Webhooks"): POSTs of ActivityPushEvent, signed
 * the Standard Webhooks way.
 */
function webhookPathItems(): Record<string, PathItemObject> {
  const item = (type: 'activity.added' | 'activity.removed', description: string): PathItemObject => ({
    post: {
      operationId: `webhook-${type.replace('.', '-')}`,
      summary:
        type === 'activity.added' ? 'A transfer became canonical' : 'A reorganisation removed a transfer',
      description: `${description}\n\nSent to each enabled webhook endpoint whose filters match, signed with its secret (Standard Webhooks; verify with \`verifyWebhook\` of the typed client). Delivery is at least once and not ordered: deduplicate by \`webhook-id\`, order by \`id\`. Answer 2xx within 10 seconds; anything else (a redirect included) is retried with backoff for more than a day. Requests to one endpoint run side by side: up to 20 at once per server process once it has answered 2xx, 2 while it is new or its last request failed.`,
      tags: ['Webhooks'],
      security: [],
      parameters: WEBHOOK_HEADERS.map(([name, text]) => ({
        name,
        in: 'header' as const,
        required: true,
        description: text,
        schema: { type: 'string' as const },
      })),
      requestBody: {
        required: true,
        content: { 'application/json': { schema: { $ref: '#/components/schemas/ActivityPushEvent' } } },
      },
      responses: {
        '200': { description: 'Received (any 2xx counts as delivered; the body is ignored).' },
        '400': { description: 'Refused (any status outside 2xx is a failed attempt and is retried).' },
      },
    },
  })
  return {
    'activity.added': item(
      'activity.added',
      'An `activity.added` event: the transfer in `data` became canonical.',
    ),
    'activity.removed': item(
      'activity.removed',
      'An `activity.removed` event: a reorganisation took away the transfer in `data`, which was sent before.',
    ),
  }
}

/** The scope of each /v1 operation, from the procedures' meta (the REST layer checks the same). */
function scopes(): Map<string, string | undefined> {
  const table = new Map(routeTable(v1Router).map((r) => [`${r.method} ${r.path}`, r.meta.scope]))
  // The live stream's access checks are /v1/activity's (rest/stream/stream.handler.ts).
  table.set(`GET ${STREAM_PATH}`, 'read:activity')
  return table
}

function completeOperations(doc: OpenAPIObject, network: string): void {
  const scopeOf = scopes()
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    const operations = item as Partial<Record<Method, OperationObject>>
    for (const method of ['get', 'post'] as const) {
      const operation = operations[method]
      if (!operation?.responses) continue
      const responses = operation.responses as Record<string, ResponseObject>
      const scope = scopeOf.get(`${method.toUpperCase()} ${path}`)
      describeSecurity(operation, scope)
      const parameters = (operation.parameters ?? []) as ParameterObject[]
      for (const parameter of parameters) {
        if (parameter.name === 'network' && parameter.schema) {
          parameter.schema = networkParameterSchema(parameter.schema as SchemaObject, network)
        }
      }
      const context: ErrorContext = {
        path,
        scope,
        network,
        parameterNames: parameters.map((p) => p.name),
      }
      const media = path === '/v1/media'
      const stream = path === STREAM_PATH
      for (const [status, r] of Object.entries(responses)) {
        const code = Number(status)
        if (code >= 400) {
          // The media path's own descriptions and extra headers (Content-Range on 416) are kept.
          const own = media ? { ...r.headers } : {}
          delete own['X-Request-Id']
          responses[status] = errorResponse(code, context, own, media || stream ? r.description : undefined)
        } else if (media) {
          r.headers = { ...r.headers, ...mediaSuccessHeaders() }
        } else if (stream) {
          r.headers = { ...r.headers, ...streamHeaders() }
        } else if (code === 200) {
          r.headers = { ...r.headers, ...successHeaders(scope !== undefined) }
        }
      }
      if (stream) continue
      if (method === 'get' && !media) {
        operation.parameters = [...parameters, ifNoneMatchParameter as ParameterObject]
        responses['304'] = notModifiedResponse(scope !== undefined)
      }
      if (method === 'get') operations.head = headOperation(operation, path)
    }
  }
}

/** The scope in the security requirement (OAS 3.1 allows role names for any scheme) and in the description. */
function describeSecurity(operation: OperationObject, scope: string | undefined): void {
  if (scope) {
    operation.security = [{ bearer: [scope] }]
    operation.description = `${operation.description ?? ''}\n\nRequires scope: \`${scope}\`.`.trim()
  } else {
    operation.security = []
    operation.description = `${operation.description ?? ''}\n\nRequires no credential.`.trim()
  }
}

/**
 * HEAD answers every GET path (the REST layer and the media handler): the
 * same parameters, statuses and headers, without a body.
 */
function headOperation(get: OperationObject, path: string): OperationObject {
  const responses = Object.fromEntries(
    Object.entries(get.responses ?? {}).map(([status, response]) => {
      const { content: _content, ...rest } = response as ResponseObject
      const description =
        status === '304' ? rest.description : `${rest.description.replace(/\.?$/, '.')} No body.`
      return [status, { ...rest, description }]
    }),
  )
  const summary = path === '/v1/collections' ? 'Check the collection list' : (get.summary ?? path)
  return {
    ...get,
    operationId: `${get.operationId ?? path}-head`,
    summary: `${summary} (HEAD)`,
    description: `Answers the same status and headers as GET ${path}, with no body.${
      path === '/v1/collections' ? ' 200 when the collection list is available.' : ''
    }\n\n${(get.description ?? '').split('\n\n').at(-1)}`,
    responses,
  }
}

function usedTags(doc: OpenAPIObject): string[] {
  const names = new Set<string>()
  for (const item of [...Object.values(doc.paths ?? {}), ...Object.values(doc.webhooks ?? {})]) {
    for (const operation of Object.values(item as Record<string, OperationObject>)) {
      for (const tag of operation.tags ?? []) names.add(tag)
    }
  }
  return [...names]
}
