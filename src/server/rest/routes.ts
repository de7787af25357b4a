/**
 * The table of /v1 routes, read from the procedures' openapi meta. The REST
 * layer uses it to tell an unknown path (404) from a known path asked with
 * the wrong method (405, with Allow), and to serve HEAD for any GET route.
 */
import type { AnyTRPCRouter } from '@trpc/server'
import type { ApiMeta } from '@/server/api/trpc'

export interface Route {
  method: string
  path: string
  pattern: RegExp
  procedurePath: string
  meta: ApiMeta
}

function toPattern(path: string): RegExp {
  const escaped = path
    .split('/')
    .map((segment) =>
      /^\{[^}]+\}$/.test(segment) ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
    )
    .join('/')
  // trpc-to-openapi ignores trailing slashes and letter case; match the same way.
  return new RegExp(`^${escaped}/?$`, 'i')
}

export function routeTable(router: AnyTRPCRouter): Route[] {
  const procedures = router._def.procedures as Record<string, { _def: { meta?: ApiMeta } }>
  const routes: Route[] = []
  for (const [procedurePath, procedure] of Object.entries(procedures)) {
    const meta = procedure._def.meta
    const openapi = meta?.openapi
    if (!openapi || openapi.enabled === false) continue
    routes.push({
      method: openapi.method,
      path: openapi.path,
      pattern: toPattern(openapi.path),
      procedurePath,
      meta,
    })
  }
  return routes
}

/** The routes whose path matches, whatever their method. */
export function matchPath(routes: Route[], pathname: string): Route[] {
  return routes.filter((route) => route.pattern.test(pathname))
}
