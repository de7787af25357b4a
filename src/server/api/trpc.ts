/**
 * tRPC setup: the request context and the procedure tiers. Routers are joined
 * only in root.ts. Every public procedure declares zod `.input()` and
 * `.output()` and an `openapi` meta, which trpc-to-openapi turns into a /v1
 * REST endpoint and an entry of /openapi.json.
 *
 * Tiers:
 *  - publicProcedure: no credential (POST /v1/demo-token, GET /v1/media).
 *  - apiProcedure:    a /v1 read endpoint; `meta.scope` names the scope it needs.
 */
import type { IncomingHttpHeaders } from 'node:http'
import { initTRPC } from '@trpc/server'
import type { OpenApiMeta } from 'trpc-to-openapi'
import type { Config } from '@/config/env'
import type { Logger } from '@/config/logger'
import type { Database } from '@/server/db/database'
import type { Scope } from '@/lib/scopes'

/** Long-lived services shared by every request of one web process. */
export interface Services {
  config: Config
  db: Database
  logger: Logger
}

export interface ApiContext extends Services {
  requestId: string
  clientIp: string
  headers: IncomingHttpHeaders
  /** Headers a procedure adds to its response (freshness, caching, …). */
  responseHeaders: Record<string, string>
}

export type ApiMeta = OpenApiMeta<{ scope?: Scope }>

const t = initTRPC.context<ApiContext>().meta<ApiMeta>().create({
  // Error bodies are rewritten into the API envelope by the REST layer
  // (src/server/rest); nothing internal leaves through tRPC's own shape.
  errorFormatter: ({ shape }) => ({ ...shape, data: { code: shape.data.code, httpStatus: shape.data.httpStatus } }),
})

export const createRouter = t.router
export const middleware = t.middleware
export const publicProcedure = t.procedure
export const apiProcedure = t.procedure
