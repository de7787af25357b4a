/**
 * tRPC for the developer portal's own procedures (key management, audit
 * trail), served at /api/trpc for the signed-in user only. Nothing here is
 * part of the public API.
 *
 * The tRPC edge of the service's errors: an ApiError a procedure throws
 * (src/server/errors/api-error.ts) becomes the tRPC error of the same
 * meaning, with its message, and so does a database that is down or too slow
 * (503 SERVICE_UNAVAILABLE, retryable, as on /v1); anything else unexpected
 * shows a fixed sentence, never its own text (a database error names tables
 * and values).
 *
 * A signed-in procedure runs within the pool shares of the client address
 * and of the user (src/server/ratelimit/pool-shares.ts), the rule /v1 follows.
 */
import { initTRPC, TRPCError } from '@trpc/server'
import type { TRPC_ERROR_CODE_KEY } from '@trpc/server/rpc'
import { ZodError } from 'zod'
import type { Database } from '@/db/database'
import { userSubject } from '@/server/credentials/access'
import type { CredentialVerifier } from '@/server/credentials/verifier'
import type { WebhookSettings } from '@/server/credentials/webhook-secrets'
import { ApiError, type ErrorCode } from '@/server/errors/api-error'
import { describeZodError, toApiError } from '@/server/errors/to-api-error'
import type { SessionUser } from '@/server/portal-auth/session-user'
import { ipSubject } from '@/server/ratelimit/ip'
import type { PoolShares } from '@/server/ratelimit/pool-shares'
import type { LimitStore } from '@/server/ratelimit/store'

export interface PortalContext {
  db: Database
  /** The process's credential cache: a rotated or revoked key is cleared from it at once. */
  credentials: Pick<CredentialVerifier, 'clear'>
  clientIp: string
  userAgent: string | null
  /** The signed-in user; null when signed out (portalProcedure refuses that). */
  user: SessionUser | null
  /** The process's pool shares (the HTTP route sets them; direct callers in tests may not). */
  poolShares?: PoolShares
  /** The rate-limit store (Redis, or in-process when embedded): the per-user refresh limit counts there. */
  limitStore?: LimitStore
  /** Sealing key of webhook secrets and the webhook allow-list (docs/push.md, "Webhooks"). */
  webhooks?: WebhookSettings
}

/** What a client sees of an unexpected failure. */
export const INTERNAL_MESSAGE = 'Something went wrong on our side. Try again later.'

const TRPC_CODE: Record<ErrorCode, TRPC_ERROR_CODE_KEY> = {
  INVALID_ARGUMENT: 'BAD_REQUEST',
  UNAUTHORIZED: 'UNAUTHORIZED',
  FORBIDDEN: 'FORBIDDEN',
  NOT_FOUND: 'NOT_FOUND',
  METHOD_NOT_ALLOWED: 'METHOD_NOT_SUPPORTED',
  CONFLICT: 'CONFLICT',
  PAYLOAD_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  UNSUPPORTED_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  RANGE_NOT_SATISFIABLE: 'BAD_REQUEST',
  RESUME_POINT_EXPIRED: 'BAD_REQUEST',
  RATE_LIMITED: 'TOO_MANY_REQUESTS',
  INTERNAL_ERROR: 'INTERNAL_SERVER_ERROR',
  SERVICE_UNAVAILABLE: 'SERVICE_UNAVAILABLE',
  RATE_LIMITER_UNAVAILABLE: 'SERVICE_UNAVAILABLE',
}

/** `{ retryAfter }` (whole seconds) of an ApiError that carries a Retry-After header; else nothing. */
export function retryAfterOf(cause: unknown): { retryAfter?: number } {
  const header = cause instanceof ApiError ? cause.headers['Retry-After'] : undefined
  const seconds = header === undefined ? Number.NaN : Number(header)
  return Number.isFinite(seconds) ? { retryAfter: seconds } : {}
}

const t = initTRPC.context<PortalContext>().create({
  errorFormatter: ({ shape, error }) => ({
    ...shape,
    // The portal shows messages on the page: a failure of ours is for the log, which the route's
    // onError writes; input that fails its schema is one sentence naming the field, not zod's issue list.
    message:
      shape.data.code === 'INTERNAL_SERVER_ERROR'
        ? INTERNAL_MESSAGE
        : error.cause instanceof ZodError
          ? describeZodError(error.cause)
          : shape.message,
    data: {
      code: shape.data.code,
      httpStatus: shape.data.httpStatus,
      // A refusal that says when to come back (a limited refresh): seconds, as in Retry-After.
      ...retryAfterOf(error.cause),
    },
  }),
})

export const createPortalRouter = t.router

/**
 * Every procedure's first level: an ApiError thrown below, or a database that
 * is unavailable or timed out (503), becomes its tRPC error.
 */
const publicPortalProcedure = t.procedure.use(async ({ next }) => {
  const result = await next()
  if (!result.ok) {
    const cause = result.error.cause
    const error = cause instanceof ApiError ? cause : toApiError(cause)
    if (cause instanceof ApiError || error.code === 'SERVICE_UNAVAILABLE') {
      throw new TRPCError({ code: TRPC_CODE[error.code], message: error.message, cause: error })
    }
  }
  return result
})

/** A procedure of the signed-in user: ctx.user is set; its work runs within the pool shares. */
export const portalProcedure = publicPortalProcedure.use(({ ctx, next }) => {
  const user = ctx.user
  if (!user) throw new ApiError('UNAUTHORIZED', 'Sign in first.')
  if (!ctx.poolShares) return next({ ctx: { user } })
  // The address first, as on /v1: no two requests each hold a place the other waits for.
  return ctx.poolShares.run([ipSubject(ctx.clientIp), userSubject(user.id)], () => next({ ctx: { user } }))
})
