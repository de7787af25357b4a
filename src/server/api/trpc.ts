/**
 * tRPC setup: the request context and the procedure tiers. Routers are joined
 * only in root.ts. Every public procedure declares zod `.input()` and
 * `.output()` and an `openapi` meta, which trpc-to-openapi turns into a /v1
 * REST endpoint and an entry of /openapi.json.
 *
 * Tiers:
 *  - publicProcedure: no credential (POST /v1/demo-token, GET /v1/media).
 *  - apiProcedure:    a /v1 read endpoint; `meta.scope` names the scope it needs.
 *                     The REST layer runs the access checks before it calls the
 *                     procedure (client IP limit, credential 401, credential limit
 *                     429, scope and origin 403; src/server/auth/access.ts), so
 *                     before parameters are parsed, and sets ctx.credential.
 *  - userProcedure:   the portal's internal procedures (key management); needs
 *                     ctx.user, which the portal's /api/trpc route sets from the
 *                     signed-in session.
 */
import type { IncomingHttpHeaders } from 'node:http'
import { isDeepStrictEqual } from 'node:util'
import { initTRPC, TRPCError } from '@trpc/server'
import type { OpenApiMeta } from 'trpc-to-openapi'
import { z } from 'zod'
import type { Config } from '@/config/env'
import type { Logger } from '@/config/logger'
import type { Database } from '@/db/database'
import type { Scope } from '@/lib/scopes'
import type { AccessControl, RequestAccess } from '@/server/auth/access'
import type { VerifiedCredential } from '@/server/auth/verifier'
import { ApiError } from '@/server/errors/api-error'
import type { IndexerSnapshot } from './middleware/freshness'

/** Long-lived services shared by every request of one web process. */
export interface Services {
  config: Config
  db: Database
  logger: Logger
  /** Credentials and rate limits; createWebServer makes one when absent. */
  access?: AccessControl
}

/** The signed-in portal user (wallet). */
export interface SessionUser {
  id: bigint
  /** Lowercase wallet address. */
  address: string
}

export interface ApiContext extends Services {
  requestId: string
  clientIp: string
  headers: IncomingHttpHeaders
  /** Headers a procedure adds to its response (freshness, caching, …). */
  responseHeaders: Record<string, string>
  /** Limits and slots of this /v1 request (set by the REST layer only). */
  requestAccess?: RequestAccess
  /** The verified credential of a /v1 request (set by the REST layer only, after the access checks). */
  credential?: VerifiedCredential
  /** The indexer state as of this request, read at most once (requestSnapshot). */
  snapshot: () => Promise<IndexerSnapshot>
  /** The portal's signed-in user (set by the portal's /api/trpc route only). */
  user?: SessionUser | null
}

export type ApiMeta = OpenApiMeta<{
  scope?: Scope
  /**
   * The per-client-IP limit of a public route: 'demoIssue' (demo-token
   * issuance, 5/min) or 'public' (the media path). Default: 'public' for a
   * route without a scope, else the profile of the presented credential.
   */
  ipLimit?: 'demoIssue' | 'public'
}>

/** What a client sees of an unexpected failure. */
export const INTERNAL_MESSAGE = 'Something went wrong on our side. Try again later.'

const t = initTRPC
  .context<ApiContext>()
  .meta<ApiMeta>()
  .create({
    // Error bodies are rewritten into the API envelope by the REST layer
    // (src/server/rest); nothing internal leaves through tRPC's own shape.
    errorFormatter: ({ shape }) => ({
      ...shape,
      // The portal's /api/trpc shows messages on the page: a failure of ours (a database
      // error's text) is for the log, which the route's onError writes.
      message: shape.data.code === 'INTERNAL_SERVER_ERROR' ? INTERNAL_MESSAGE : shape.message,
      data: { code: shape.data.code, httpStatus: shape.data.httpStatus },
    }),
  })

export const createRouter = t.router
export const createCallerFactory = t.createCallerFactory
export const middleware = t.middleware
export const publicProcedure = t.procedure
/**
 * A /v1 procedure runs only after the REST layer's access checks, which set
 * ctx.credential; anything else reaching it (the portal's /api/trpc serves no
 * /v1 procedure, this is the second lock) is refused. next() is given no
 * context: a new one would be a copy of the whole context on every request.
 */
export const apiProcedure = t.procedure.use(({ ctx, next }) => {
  if (!ctx.credential) {
    throw new ApiError('UNAUTHORIZED', 'This endpoint is served under /v1 only, with a bearer credential.')
  }
  return next()
})
export const userProcedure = t.procedure.use(({ ctx, next }) => {
  if (!ctx.user) throw new TRPCError({ code: 'UNAUTHORIZED', message: 'Sign in first.' })
  return next({ ctx: { user: ctx.user } })
})

/**
 * The response schema of a /v1 procedure: `.output(responseSchema(page))`.
 * The schema is the contract — /openapi.json is generated from it and the
 * handler is typed by it — and tRPC parses every response against it. In
 * production that parse is skipped, for its measured cost per request
 * (docs/api.md, "The request path, and what it costs"). Neither
 * tRPC nor trpc-to-openapi has an option for this, hence a copy of the schema
 * (same definition, same OpenAPI component) with its own parse:
 *  - production: returns the response as it is;
 *  - development and tests: parses, and also refuses a response the parse
 *    would change (a key it would strip, a value it would transform), so what
 *    tests see is byte for byte what production sends.
 */
export function responseSchema<T extends z.ZodType>(
  schema: T,
  validate = process.env.NODE_ENV !== 'production',
): T {
  const copies = validate ? checkedCopies : uncheckedCopies
  let copy = copies.get(schema)
  if (!copy) {
    // From the definition, not the schema: a plain clone() names the original as its parent,
    // and the JSON Schema conversion would then emit both under one component id.
    copy = schema.clone(schema._zod.def)
    const meta = z.globalRegistry.get(schema)
    if (meta) z.globalRegistry.add(copy, meta)
    const parse = validate ? (data: unknown) => parseUnchanged(schema, data) : (data: unknown) => data
    // tRPC calls parse, and parseAsync after a parse error without zod issues: both are replaced.
    copy.parse = parse
    copy.parseAsync = async (data: unknown) => parse(data)
    copies.set(schema, copy)
    if (!validate) unchecked.add(copy)
  }
  return copy as T
}

/** One copy per schema and mode: a page schema shared by two endpoints stays one OpenAPI component. */
const checkedCopies = new WeakMap<z.ZodType, z.ZodType>()
const uncheckedCopies = new WeakMap<z.ZodType, z.ZodType>()
const unchecked = new WeakSet<object>()

/** True for a responseSchema copy whose parse returns its input (production): running it changes nothing. */
export const isUncheckedResponseSchema = (schema: unknown): boolean =>
  typeof schema === 'object' && schema !== null && unchecked.has(schema)

function parseUnchanged<T extends z.ZodType>(schema: T, data: unknown): z.output<T> {
  const parsed = schema.parse(data)
  // Compared as JSON, as a client receives it (key order aside).
  if (!isDeepStrictEqual(JSON.parse(JSON.stringify(parsed)), JSON.parse(JSON.stringify(data)))) {
    throw new z.ZodError([
      {
        code: 'custom',
        path: [],
        input: data,
        message: 'The response is not exactly its schema: parsing it would change it',
      },
    ])
  }
  return parsed
}
