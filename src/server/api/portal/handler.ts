/**
 * Admission and serving of one request to the portal's tRPC endpoint
 * (/api/trpc; the Next.js route adds the CSRF check and the session lookup).
 * The same limiter and pool shares as /v1 (docs/portal.md, "Limits"):
 *   per-IP limit (policy `ipPortal`) → body cap (413) → signed-in user's
 *   limit (policy `portal`) → at most PORTAL_MAX_BATCH procedures (400) →
 *   each procedure's database work within the client address's and the
 *   user's pool shares (./trpc.ts).
 * Refusals before tRPC use the specification's error envelope; concurrency
 * slots are released once the response is built (procedures are not streamed).
 */
import { fetchRequestHandler } from '@trpc/server/adapters/fetch'
import { type PortalContext, retryAfterOf } from '@/server/api/trpc/portal'
import { RequestAccess } from '@/server/credentials/access'
import { errorResponse } from '@/server/errors/error-body'
import { toApiError } from '@/server/errors/to-api-error'
import { readCappedBody } from '@/server/http/capped-body'
import { CLIENT_IP_HEADER } from '@/server/http/client-ip'
import type { SessionUser } from '@/server/portal-auth/session-user'
import type { Services } from '@/server/services/web-services'
import { portalRouter } from './router'

/** Procedures in one batched request: the portal's client sends at most this many (src/components/portal/trpc.ts). */
export const PORTAL_MAX_BATCH = 4

/** Largest request body: a batch of the largest input (a key's 20 origins) is a fraction of it. */
export const PORTAL_MAX_BODY_BYTES = 64 * 1024

export type PortalHandler = (req: Request) => Promise<Response>

/**
 * The admission every portal request starts with (the client IP's limit:
 * `ipPortal` for the procedures, `ipAuth` for next-auth's endpoints), then `serve`; a refusal or failure becomes the specification's envelope.
 * `serve` releases the request's slots once its response is complete (a
 * streamed body: when the stream ends); on a failure they are released here.
 */
export async function admitPortalRequest(
  services: Services,
  req: Request,
  serve: (access: RequestAccess, clientIp: string) => Promise<Response>,
  ipPolicy: 'ipPortal' | 'ipAuth' = 'ipPortal',
): Promise<Response> {
  const clientIp = req.headers.get(CLIENT_IP_HEADER) ?? 'unknown'
  const access = new RequestAccess(services.access, clientIp)
  try {
    await access.limitIp(ipPolicy)
    return await serve(access, clientIp)
  } catch (err) {
    access.release()
    const error = toApiError(err)
    if (error.status >= 500 && error.code !== 'RATE_LIMITER_UNAVAILABLE')
      services.logger.error(
        { err: error.cause ?? error, path: new URL(req.url).pathname },
        'portal request failed',
      )
    return errorResponse(error, access.headers())
  }
}

export function createPortalHandler(
  services: Services,
  /** The request's signed-in user (next-auth's session in the route), null when signed out. */
  sessionUser: () => Promise<SessionUser | null>,
): PortalHandler {
  return (req) =>
    admitPortalRequest(services, req, async (access, clientIp) => {
      try {
        const body = await readCappedBody(req, PORTAL_MAX_BODY_BYTES)
        const user = await sessionUser()
        // Signed out: the procedures answer 401 themselves.
        if (user) await access.limitUser(user.id)
        const context: PortalContext = {
          db: services.db,
          credentials: services.access.verifier,
          clientIp,
          userAgent: req.headers.get('user-agent'),
          user,
          poolShares: services.poolShares,
          limitStore: services.access.limiter.store,
          webhooks: services.webhooks,
        }
        return await fetchRequestHandler({
          endpoint: '/api/trpc',
          req: body ? new Request(req.url, { method: req.method, headers: req.headers, body }) : req,
          router: portalRouter,
          maxBatchSize: PORTAL_MAX_BATCH,
          createContext: () => context,
          responseMeta: ({ errors }) => {
            const headers = new Headers({ 'Cache-Control': 'no-store', ...access.headers() })
            // A limited refresh says when to come back, as a header too (the body has retryAfter).
            const retry = errors.map((e) => retryAfterOf(e.cause).retryAfter).find((s) => s !== undefined)
            if (retry !== undefined) headers.set('Retry-After', String(retry))
            return { headers }
          },
          onError: ({ error, path }) => {
            if (error.code === 'INTERNAL_SERVER_ERROR')
              services.logger.error({ err: error, path }, 'portal procedure failed')
          },
        })
      } finally {
        // Procedures are not streamed: the response is complete.
        access.release()
      }
    })
}
