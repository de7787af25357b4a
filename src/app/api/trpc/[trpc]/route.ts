/**
 * The portal's internal tRPC endpoint (/api/trpc/<procedure>): key management
 * and the audit trail, for the signed-in user only.
 *
 *  - It serves the portal router (src/server/api/portal) and nothing else:
 *    the public /v1 procedures live in another router, served by the REST
 *    layer with bearer credentials and rate limits.
 *  - Admission (src/server/api/portal/handler.ts): per-IP and per-user rate
 *    limits, a body cap, a batch cap, and the pool shares of /v1.
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
import { createPortalHandler, type PortalHandler } from '@/server/api/portal/handler'
import { getSessionUser } from '@/server/portal-auth/next-auth'
import { getServices } from '@/server/services/next-services'
import { csrfRefusal } from './csrf'

export const dynamic = 'force-dynamic'

let portal: PortalHandler | undefined

async function handler(req: Request): Promise<Response> {
  const services = getServices()
  const refusal = csrfRefusal(req, new URL(services.config.PUBLIC_URL).origin)
  if (refusal) return refusal
  portal ??= createPortalHandler(services, getSessionUser)
  return portal(req)
}

export { handler as GET, handler as POST }
