/**
 * The upgrade gate of routes.ts (docs/api.md, "Library internals and the
 * upgrade gate"): the route table, read from `router._def.procedures` with
 * trpc-to-openapi's matching helpers, must resolve every request exactly as
 * trpc-to-openapi's own adapter does, and list exactly the operations its
 * document generator finds on the /v1 router.
 */
import { initTRPC } from '@trpc/server'
import { createOpenApiFetchHandler, generateOpenApiDocument, type OpenApiMeta } from 'trpc-to-openapi'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { v1Router } from '@/server/api/v1/router'
import { matchPath, pathParams, routeTable } from './routes'

// Every shape of route the /v1 procedures have: path parameters (one or two, next to a
// fixed segment), a query input, a void input, and a non-openapi procedure beside them.
const t = initTRPC.meta<OpenApiMeta>().create()
const echo =
  (procedure: string) =>
  ({ input }: { input: unknown }) => ({ procedure, input: input ?? null })
const anything = z.object({ procedure: z.string(), input: z.unknown() })
const router = t.router({
  list: t.procedure
    .meta({ openapi: { method: 'GET', path: '/things' } })
    .input(z.object({ limit: z.string().optional() }))
    .output(anything)
    .query(echo('list')),
  one: t.procedure
    .meta({ openapi: { method: 'GET', path: '/things/{id}' } })
    .input(z.object({ id: z.string() }))
    .output(anything)
    .query(echo('one')),
  owners: t.procedure
    .meta({ openapi: { method: 'GET', path: '/things/{id}/owners/{owner}' } })
    .input(z.object({ id: z.string(), owner: z.string() }))
    .output(anything)
    .query(echo('owners')),
  create: t.procedure
    .meta({ openapi: { method: 'POST', path: '/things' } })
    .input(z.void())
    .output(anything)
    .mutation(echo('create')),
  hidden: t.procedure.input(z.void()).query(() => 'not a route'),
})

const REQUESTS: [string, string][] = [
  ['GET', '/things'],
  ['GET', '/things/'],
  ['GET', '/things?limit=5'],
  ['GET', '/things/abc'],
  ['GET', '/THINGS/AbC'],
  ['GET', '/things/abc/owners/0x1'],
  ['GET', '/things/abc/owners'],
  ['GET', '/things/a%20b'],
  ['POST', '/things'],
  ['POST', '/things/abc'],
  ['GET', '/hidden'],
  ['GET', '/nothing/here'],
]

/** What trpc-to-openapi's adapter does with a request: 404, or the procedure it ran and its input. */
async function theirs(method: string, url: string) {
  const res = await createOpenApiFetchHandler({
    router,
    endpoint: '/',
    req: new Request(`http://localhost${url}`, { method, headers: { 'content-type': 'application/json' } }),
  })
  return res.status === 404 ? 'not found' : ((await res.json()) as { procedure: string; input: unknown })
}

/** What the route table resolves the same request to. */
function ours(method: string, url: string) {
  const { pathname, searchParams } = new URL(url, 'http://localhost')
  const route = matchPath(routeTable(router), pathname).find((r) => r.method === method)
  if (!route) return 'not found'
  // Path parameters as matched, still percent-encoded: the adapter passes them on so.
  const params = pathParams(route, pathname)
  return {
    procedure: route.procedurePath,
    input: route.takesInput ? { ...Object.fromEntries(searchParams), ...params } : null,
  }
}

describe('routeTable', () => {
  it("resolves every request to the procedure and input trpc-to-openapi's adapter does", async () => {
    for (const [method, url] of REQUESTS) {
      expect({ method, url, route: ours(method, url) }).toEqual({
        method,
        url,
        route: await theirs(method, url),
      })
    }
    // The requests reach every route and miss on purpose: the comparison is not vacuous.
    const reached = new Set(
      REQUESTS.map(([m, u]) => ours(m, u)).map((r) => (r === 'not found' ? r : r.procedure)),
    )
    expect(reached).toEqual(new Set(['list', 'one', 'owners', 'create', 'not found']))
  })

  it('lists exactly the /v1 operations of the document trpc-to-openapi generates', () => {
    const doc = generateOpenApiDocument(v1Router, {
      title: 'gate',
      version: '0',
      baseUrl: 'http://localhost',
    })
    const documented = Object.entries(doc.paths ?? {}).flatMap(([path, item]) =>
      Object.keys(item ?? {}).map((method) => `${method.toUpperCase()} ${path}`),
    )
    const table = routeTable(v1Router).map((r) => `${r.method} ${r.path}`)
    expect(table.length).toBeGreaterThan(5)
    expect(new Set(table)).toEqual(new Set(documented))
    expect(table).toHaveLength(documented.length)
  })
})
