/**
 * The table of /v1 routes, read from the procedures' openapi meta with
 * trpc-to-openapi's own helpers (the same path normalisation and path
 * patterns its adapters use). The REST layer uses it to tell an unknown path
 * (404) from a known path asked with the wrong method (405, with Allow), to
 * serve HEAD for any GET route, and to call the matched procedure.
 *
 * Library internals: reads `router._def.procedures` and uses
 * trpc-to-openapi's matching helpers, in place of its node adapter
 * (docs/api.md, "Library internals and the upgrade gate").
 */
import type { AnyTRPCProcedure, AnyTRPCRouter } from '@trpc/server'
import {
  forEachOpenApiProcedure,
  getInputOutputParsers,
  getPathRegExp,
  instanceofZodTypeLikeVoid,
  normalizePath,
  unwrapZodType,
} from 'trpc-to-openapi'
import { boundedMemo } from '@/lib/bounded-memo'
import type { V1Meta } from '@/server/api/trpc/v1'
import { ApiError } from '@/server/errors/api-error'
import { unknownParametersMessage } from '@/server/errors/to-api-error'

export interface Route {
  method: string
  path: string
  /** Case-insensitive, with a named group per path parameter. */
  pattern: RegExp
  procedurePath: string
  procedure: AnyTRPCProcedure
  /** False when the procedure's input is void (e.g. POST /v1/demo-token takes no body). */
  takesInput: boolean
  meta: V1Meta
}

export function routeTable(router: AnyTRPCRouter): Route[] {
  const routes: Route[] = []
  forEachOpenApiProcedure(router._def.procedures, ({ path, procedure, meta }) => {
    const { inputParser } = getInputOutputParsers(procedure)
    routes.push({
      method: meta.openapi.method,
      path: meta.openapi.path,
      pattern: getPathRegExp(normalizePath(meta.openapi.path)),
      procedurePath: path,
      procedure: procedure as AnyTRPCProcedure,
      takesInput: !instanceofZodTypeLikeVoid(unwrapZodType(inputParser, true)),
      meta: meta as V1Meta,
    })
  })
  return routes
}

/** The routes whose path matches, whatever their method (a trailing slash is ignored). */
export function matchPath(routes: Route[], pathname: string): Route[] {
  let match = matchers.get(routes)
  if (!match) {
    // Remembered per path: clients repeat the same few paths, and a stream of
    // distinct paths (every address there is) costs no more than before.
    match = boundedMemo(1024, (path) => {
      const normalized = normalizePath(path)
      return routes.filter((route) => route.pattern.test(normalized))
    })
    matchers.set(routes, match)
  }
  return match(pathname)
}

const matchers = new WeakMap<Route[], (pathname: string) => Route[]>()

/** Path parameters of a matched route, by name. */
export function pathParams(route: Route, pathname: string): Record<string, string> {
  return route.pattern.exec(normalizePath(pathname))?.groups ?? {}
}

/**
 * A route's input: its query parameters (queryInput) and its path parameters; undefined for
 * a route that takes none. A query key named like a path parameter, or any query key on a
 * route without input, is an unknown parameter (400), not silently dropped.
 */
export function routeInput(
  route: Route,
  pathname: string,
  query: string,
): Record<string, string | string[]> | undefined {
  const input = queryInput(query)
  if (!route.takesInput) {
    assertNoParameters(Object.keys(input))
    return undefined
  }
  const params = pathParams(route, pathname)
  assertNoParameters(Object.keys(params).filter((name) => name in input))
  return Object.assign(input, params)
}

function assertNoParameters(names: string[]): void {
  if (names.length > 0) throw new ApiError('INVALID_ARGUMENT', unknownParametersMessage(names))
}

/**
 * Query parameters as trpc-to-openapi reads them: a key given once is a
 * string, a key repeated is an array of its values (which every /v1 schema
 * refuses). `query` is the raw query string, without `?`. A malformed
 * percent-escape (`%zz`, or bytes that are not UTF-8, such as `%ff`) is 400:
 * URLSearchParams would pass `%zz` on as it is and turn `%ff` into U+FFFD,
 * so the value searched or validated would not be the one sent.
 */
export function queryInput(query: string): Record<string, string | string[]> {
  if (query.includes('%')) assertPercentEncoding(query)
  // No prototype: a parameter named __proto__ is a key like any other (and refused as unknown).
  const out: Record<string, string | string[]> = Object.create(null)
  for (const [key, value] of new URLSearchParams(query)) {
    const seen = out[key]
    out[key] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value]
  }
  return out
}

function assertPercentEncoding(query: string): void {
  for (const pair of query.split('&')) {
    if (!pair.includes('%')) continue
    try {
      decodeURIComponent(pair.replace(/\+/g, ' '))
    } catch {
      const name = new URLSearchParams(pair).keys().next().value ?? ''
      throw new ApiError('INVALID_ARGUMENT', `${name}: not valid percent-encoded UTF-8`)
    }
  }
}
