/**
 * The portal's internal tRPC endpoint (/api/trpc/<procedure>): key management
 * and the audit trail, for the signed-in user only.
 *
 *  - Context: the process's services, the request's id, client IP (computed
 *    by the web server under TRUST_PROXY) and headers, and `user` from the
 *    next-auth session (null when signed out; userProcedure refuses that).
 *  - Only internal procedures are reachable here. A procedure with an
 *    `openapi` meta is a public /v1 endpoint: it is served by the REST layer
 *    with bearer credentials and rate limits, never through a session cookie.
 *  - CSRF: the session cookie is SameSite=Lax, and on top of that every
 *    mutation (POST) must come from PUBLIC_URL's origin — by its Origin header
 *    or, when a browser omits it, by Sec-Fetch-Site: same-origin — and carry
 *    a JSON body (a cross-site HTML form cannot). A request that the browser
 *    marks cross-site is refused whatever its method.
 */
import { randomUUID } from 'node:crypto'
import { fetchRequestHandler } from '@trpc/server/adapters/fetch'
import { requestSnapshot } from '@/server/api/middleware/freshness'
import { appRouter } from '@/server/api/root'
import { getSessionUser } from '@/server/auth/next-auth'
import { CLIENT_IP_HEADER } from '@/server/http/client-ip'
import { getServices } from '@/server/services'
import { csrfRefusal, refuse } from './csrf'

export const dynamic = 'force-dynamic'

const ENDPOINT = '/api/trpc'

type ProcedureMap = Record<string, { _def: { meta?: { openapi?: unknown } } }>

/** true when every procedure named in the URL exists and is internal. */
function onlyInternalProcedures(url: URL): boolean {
  const names = decodeURIComponent(url.pathname.slice(ENDPOINT.length + 1)).split(',')
  const procedures = appRouter._def.procedures as unknown as ProcedureMap
  return names.every((name) => {
    const procedure = procedures[name]
    return procedure !== undefined && procedure._def.meta?.openapi === undefined
  })
}

async function handler(req: Request): Promise<Response> {
  const services = getServices()
  const publicOrigin = new URL(services.config.PUBLIC_URL).origin
  const refusal = csrfRefusal(req, publicOrigin)
  if (refusal) return refusal
  if (!onlyInternalProcedures(new URL(req.url))) {
    return refuse(404, 'NOT_FOUND', 'No such portal procedure.')
  }
  const user = await getSessionUser()
  return fetchRequestHandler({
    endpoint: ENDPOINT,
    req,
    router: appRouter,
    createContext: () => ({
      ...services,
      requestId: randomUUID(),
      clientIp: req.headers.get(CLIENT_IP_HEADER) ?? 'unknown',
      headers: Object.fromEntries(req.headers),
      responseHeaders: {},
      snapshot: requestSnapshot(services),
      user: user ? { id: BigInt(user.id), address: user.address } : null,
    }),
    responseMeta: () => ({ headers: new Headers({ 'Cache-Control': 'no-store' }) }),
    onError: ({ error, path }) => {
      if (error.code === 'INTERNAL_SERVER_ERROR')
        services.logger.error({ err: error, path }, 'portal procedure failed')
    },
  })
}

export { handler as GET, handler as POST }
