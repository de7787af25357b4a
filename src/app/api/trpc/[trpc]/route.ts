/**
 * The portal's internal tRPC endpoint (/api/trpc/<procedure>): key management
 * and the audit trail, for the signed-in user only.
 *
 *  - It serves the portal router (src/server/api/portal) and nothing else:
 *    the public /v1 procedures live in another router, served by the REST
 *    layer with bearer credentials and rate limits.
 *  - Context: the process's database and credential cache, the request's
 *    client IP (computed by the web server under TRUST_PROXY) and user agent,
 *    and `user` from the next-auth session (null when signed out;
 *    portalProcedure refuses that).
 *  - CSRF: the session cookie is SameSite=Lax, and on top of that every
 *    mutation (POST) must come from PUBLIC_URL's origin — by its Origin header
 *    or, when a browser omits it, by Sec-Fetch-Site: same-origin — and carry
 *    a JSON body (a cross-site HTML form cannot). A request that the browser
 *    marks cross-site is refused whatever its method.
 */
import { fetchRequestHandler } from '@trpc/server/adapters/fetch'
import { portalRouter } from '@/server/api/portal/router'
import type { PortalContext } from '@/server/api/portal/trpc'
import { getSessionUser } from '@/server/auth/next-auth'
import { CLIENT_IP_HEADER } from '@/server/http/client-ip'
import { getServices } from '@/server/services'
import { csrfRefusal } from './csrf'

export const dynamic = 'force-dynamic'

async function handler(req: Request): Promise<Response> {
  const services = getServices()
  const refusal = csrfRefusal(req, new URL(services.config.PUBLIC_URL).origin)
  if (refusal) return refusal
  const context: PortalContext = {
    db: services.db,
    credentials: services.access.verifier,
    clientIp: req.headers.get(CLIENT_IP_HEADER) ?? 'unknown',
    userAgent: req.headers.get('user-agent'),
    user: await getSessionUser(),
  }
  return fetchRequestHandler({
    endpoint: '/api/trpc',
    req,
    router: portalRouter,
    createContext: () => context,
    responseMeta: () => ({ headers: new Headers({ 'Cache-Control': 'no-store' }) }),
    onError: ({ error, path }) => {
      if (error.code === 'INTERNAL_SERVER_ERROR')
        services.logger.error({ err: error, path }, 'portal procedure failed')
    },
  })
}

export { handler as GET, handler as POST }
