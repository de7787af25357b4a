/**
 * The try-it page's view of the API: endpoints read from the OpenAPI
 * document, and their parameters validated with the same zod primitives the
 * procedures use (src/lib/schemas.ts), so the page refuses exactly what the
 * API would answer 400 to — before spending a request of the demo budget.
 */
import { z } from 'zod'
import {
  address,
  afterCollectionParam,
  afterIdParam,
  afterTokenCountParam,
  afterTokenIdParam,
  atBlockParam,
  balanceString,
  beforeIdParam,
  beforeTimestampParam,
  booleanParam,
  CURSOR_GROUPS,
  checkedString,
  limitParam,
  requireTogether,
  standardParam,
  tokenId,
  transferEventType,
} from '@/lib/schemas'
import { traitParamProblem, traitTypeProblem } from '@/lib/trait-param'

export interface ParamSpec {
  name: string
  in: 'path' | 'query'
  required: boolean
  description?: string
  /** JSON-schema type from the document: string, integer, boolean. */
  type: string
  enum?: string[]
  pattern?: string
  minimum?: number
  maximum?: number
  maxLength?: number
}

export interface EndpointSpec {
  id: string
  method: 'GET' | 'HEAD'
  path: string
  summary: string
  description?: string
  scope?: string
  params: ParamSpec[]
  /** Cursor parameter groups that must be sent together. */
  together: string[][]
}

/** The primitives of src/lib/schemas.ts, by parameter name. */
const KNOWN: Record<string, z.ZodType> = {
  address,
  tokenId,
  collection: address.optional(),
  limit: limitParam,
  // network: not here, the document's enum (the one indexed network) checks it, as the API does.
  before_timestamp: beforeTimestampParam,
  before_id: beforeIdParam,
  after_token_id: afterTokenIdParam,
  after_id: afterIdParam,
  after_collection: afterCollectionParam,
  after_balance: balanceString.optional(),
  after_owner: address.optional(),
  after_token_count: afterTokenCountParam.optional(),
  at_block: atBlockParam,
  standard: standardParam,
  include_burned: booleanParam().optional(),
  include_metadata: booleanParam().optional(),
  event_type: transferEventType.optional(),
  search: z.string().max(200, 'must be at most 200 characters').optional(),
  // One trait filter in the form (the API takes up to 20), one trait type (up to 100).
  trait: checkedString(traitParamProblem).optional(),
  trait_type: checkedString(traitTypeProblem).optional(),
}

/** A schema for a parameter the page has no primitive for, from the document's constraints. */
function fromDocument(p: ParamSpec): z.ZodType {
  if (p.enum) return z.enum(p.enum as [string, ...string[]])
  if (p.type === 'integer') {
    let n = z.int({ error: 'must be an integer' })
    if (p.minimum !== undefined) n = n.min(p.minimum, `must be at least ${p.minimum}`)
    if (p.maximum !== undefined) n = n.max(p.maximum, `must be at most ${p.maximum}`)
    return z.preprocess((v) => (typeof v === 'string' && /^-?[0-9]{1,20}$/.test(v) ? Number(v) : v), n)
  }
  if (p.type === 'boolean') return booleanParam()
  let s = z.string()
  if (p.pattern) s = s.regex(new RegExp(p.pattern), `must match ${p.pattern}`)
  if (p.maxLength !== undefined) s = s.max(p.maxLength, `must be at most ${p.maxLength} characters`)
  return s
}

function schemaFor(p: ParamSpec): z.ZodType {
  const known = KNOWN[p.name]
  const base = known ?? fromDocument(p)
  if (p.required) return base instanceof z.ZodOptional ? (base.unwrap() as z.ZodType) : base
  return base instanceof z.ZodOptional ? base : base.optional()
}

export type ParamValues = Record<string, string>

/** Cursor parameters (copied from next_page_params) belong to one answer. */
const CURSOR = /^(before_|after_)/

export function isCursorParam(name: string): boolean {
  return CURSOR.test(name)
}

/** Whether a request carries a cursor: its answer is a later page, not the first. */
export function startsFromCursor(values: ParamValues): boolean {
  return Object.entries(values).some(([name, value]) => value !== '' && isCursorParam(name))
}
export type ParamErrors = Record<string, string>

/** Validates the form's values (strings; empty = not sent). */
export function validateParams(endpoint: EndpointSpec, values: ParamValues): ParamErrors {
  const shape: Record<string, z.ZodType> = {}
  for (const p of endpoint.params) shape[p.name] = schemaFor(p)
  const input: Record<string, string> = {}
  for (const p of endpoint.params) {
    const v = values[p.name]?.trim()
    if (v) input[p.name] = v
  }
  const schema = z.object(shape).superRefine((value, ctx) => {
    for (const group of endpoint.together) requireTogether(value as Record<string, unknown>, group, ctx)
  })
  const result = schema.safeParse(input)
  if (result.success) return {}
  const errors: ParamErrors = {}
  for (const issue of result.error.issues) {
    const name = String(issue.path[0] ?? '')
    if (!errors[name]) {
      errors[name] =
        issue.code === 'invalid_type' && input[name] === undefined ? 'is required' : issue.message
    }
  }
  return errors
}

/** The request path with path parameters filled in and the query string of the non-empty values. */
export function buildUrl(endpoint: EndpointSpec, values: ParamValues): string {
  let path = endpoint.path
  const query = new URLSearchParams()
  for (const p of endpoint.params) {
    const v = values[p.name]?.trim()
    if (!v) continue
    if (p.in === 'path') path = path.replace(`{${p.name}}`, encodeURIComponent(v))
    else query.set(p.name, v)
  }
  const qs = query.toString()
  return qs ? `${path}?${qs}` : path
}

// ───────────────────────────── OpenAPI → endpoints ─────────────────────────────

/** The scope each endpoint needs (specification, Endpoint list). */
export function scopeOf(path: string): string | undefined {
  if (path.endsWith('/transfers')) return 'read:transfers'
  if (path === '/v1/collections/{address}/owners') return 'read:owners'
  if (path.startsWith('/v1/collections/{address}/nfts') || path.startsWith('/v1/nfts/')) return 'read:nfts'
  if (path.startsWith('/v1/collections')) return 'read:collections'
  if (path.startsWith('/v1/owners/')) return 'read:owners'
  if (path.startsWith('/v1/activity')) return 'read:activity'
  if (path.startsWith('/v1/indexer/status')) return 'read:status'
  return undefined
}

interface OpenApiParameter {
  name: string
  in: string
  required?: boolean
  description?: string
  schema?: {
    type?: string | string[]
    enum?: string[]
    pattern?: string
    minimum?: number
    maximum?: number
    maxLength?: number
    description?: string
  }
}

interface OpenApiOperation {
  summary?: string
  description?: string
  parameters?: OpenApiParameter[]
  tags?: string[]
}

/** Read endpoints of the document that answer JSON to a bearer credential. */
export function endpointsFromOpenApi(doc: {
  paths?: Record<string, Record<string, unknown>>
}): EndpointSpec[] {
  const endpoints: EndpointSpec[] = []
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    // The demo token comes from the token panel; media answers bytes, not JSON; the live
    // stream never ends (the live panel watches it).
    if (path === '/v1/demo-token' || path.startsWith('/v1/media') || path === '/v1/activity/stream') continue
    const op = item.get as OpenApiOperation | undefined
    if (!op) continue
    const params: ParamSpec[] = (op.parameters ?? [])
      .filter((p) => p.in === 'path' || p.in === 'query')
      .map((p) => {
        const type = Array.isArray(p.schema?.type)
          ? (p.schema.type[0] ?? 'string')
          : (p.schema?.type ?? 'string')
        const description = p.description ?? p.schema?.description
        return {
          name: p.name,
          in: p.in as 'path' | 'query',
          required: p.in === 'path' || p.required === true,
          type,
          ...(description ? { description } : {}),
          ...(p.schema?.enum ? { enum: p.schema.enum } : {}),
          ...(p.schema?.pattern ? { pattern: p.schema.pattern } : {}),
          ...(p.schema?.minimum !== undefined ? { minimum: p.schema.minimum } : {}),
          ...(p.schema?.maximum !== undefined ? { maximum: p.schema.maximum } : {}),
          ...(p.schema?.maxLength !== undefined ? { maxLength: p.schema.maxLength } : {}),
        }
      })
    const names = new Set(params.map((p) => p.name))
    // The procedures' own cursor groups, those whose every key the endpoint takes.
    const together: string[][] = Object.values(CURSOR_GROUPS)
      .filter((group) => group.every((name) => names.has(name)))
      .map((group) => [...group])
    const scope = scopeOf(path)
    const base = {
      path,
      summary: op.summary ?? path,
      ...(op.description ? { description: op.description } : {}),
      ...(scope ? { scope } : {}),
      params,
      together,
    }
    endpoints.push({ id: `GET ${path}`, method: 'GET', ...base })
    if (path === '/v1/collections') {
      endpoints.push({
        id: `HEAD ${path}`,
        method: 'HEAD',
        ...base,
        summary: 'Check that the collection list is available (no body)',
      })
    }
  }
  return endpoints
}
