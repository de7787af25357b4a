/**
 * tRPC for the public /v1 API. These procedures are served by the REST
 * layer only (src/server/rest), never by /api/trpc, and are documented in
 * /openapi.json by trpc-to-openapi.
 *
 * Every procedure starts from v1Procedure({ method, path, scope, … }): the
 * route, the scope a credential needs (or, for a public route, the per-IP
 * limit) and the documentation, in one place. The REST layer runs the access
 * checks a route's scope asks for — client IP limit, credential 401,
 * credential limit 429, scope and origin 403 (src/server/credentials/access.ts) —
 * before it calls the procedure, and hands the verified credential in the
 * context.
 */
import { initTRPC } from '@trpc/server'
import type { OpenApiMeta } from 'trpc-to-openapi'
import type { Config } from '@/config/env'
import type { Database } from '@/db/database'
import type { Scope } from '@/lib/scopes'
import type { IndexerSnapshot } from '@/server/api/read/indexer-snapshot'
import type { VerifiedCredential } from '@/server/credentials/verifier'

export interface V1Context {
  config: Config
  db: Database
  requestId: string
  clientIp: string
  /** The verified credential: set on every route with a scope, undefined on the public ones. */
  credential: VerifiedCredential | undefined
  /** Headers a procedure adds to its response (caching, …). */
  responseHeaders: Record<string, string>
  /** The indexer state as of this request, read at most once (requestSnapshot). */
  snapshot: () => Promise<IndexerSnapshot>
}

/** The per-client-IP limit of a public route (one without a scope): demo-token issuance (5/min). */
export type PublicIpLimit = 'demoIssue'

export type V1Meta = OpenApiMeta<{ scope?: Scope; ipLimit?: PublicIpLimit }>

const t = initTRPC.context<V1Context>().meta<V1Meta>().create()

export const createV1Router = t.router

/** Where a /v1 procedure is served and who may call it, with its documentation. */
export type V1Route = {
  method: 'GET' | 'POST'
  path: `/v1/${string}`
  tags: string[]
  summary: string
  description: string
  /** The statuses it can answer besides 200 (documented as the error envelope). */
  errorResponses: number[]
  /** The 200 response's description, when the default one says too little. */
  successDescription?: string
} & (
  | { /** The scope a credential needs: a read endpoint with a bearer credential. */ scope: Scope }
  | { /** A public route: no credential, limited per client IP by this policy. */ ipLimit: PublicIpLimit }
)

/** The start of every /v1 procedure: `v1Procedure({ … }).input(…).output(responseSchema(…)).query(…)`. */
export function v1Procedure(route: V1Route) {
  const { method, path, tags, summary, description, successDescription, errorResponses } = route
  const scoped = 'scope' in route
  return t.procedure.meta({
    ...(scoped ? { scope: route.scope } : { ipLimit: route.ipLimit }),
    openapi: {
      method,
      path,
      tags,
      summary,
      description,
      protect: scoped,
      ...(successDescription === undefined ? {} : { successDescription }),
      errorResponses,
    },
  })
}
