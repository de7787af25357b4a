/**
 * The /v1 REST layer: serves the v1 router (src/server/api/v1). Routes come
 * from the procedures' trpc-to-openapi meta (api/internals/routes.ts); a
 * matched route's procedure runs with the query and path parameters as input
 * (api/internals/call-procedure.ts) — what trpc-to-openapi's node
 * adapter does, without the fetch Request it builds for every call and
 * without tRPC's caller, both measured costs per request (docs/api.md). Around it:
 *  - every response carries a request id (body and X-Request-Id);
 *  - every failure uses the specification's error envelope: unknown path 404,
 *    wrong method 405 (with Allow), bad parameter 400 INVALID_ARGUMENT,
 *    database down 503, anything unexpected a bare 500 INTERNAL_ERROR;
 *  - HEAD is answered for every GET route, without a body;
 *  - successes get a strong ETag (If-None-Match → 304) and gzip/brotli;
 *  - access control (src/server/credentials/access.ts): the client IP's rate limit
 *    comes before anything else (even 404/405), then for a /v1 read endpoint
 *    the credential, its limit, scope and origin, all before the procedure
 *    (and so its parameter checks) runs; every limited response carries the
 *    RateLimit headers, and the request's concurrency slots are released when
 *    the response ends or the client disconnects;
 *  - usage: the answer of a request with a valid API key counts in the key's
 *    hourly usage by status class (src/server/credentials/key-usage.ts);
 *  - CORS: preflights are answered for allowed origins (PUBLIC_URL's and
 *    those some active key allows), whose responses carry
 *    Access-Control-Allow-Origin and expose the rate-limit and id headers.
 */
import { hash, randomUUID } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { brotliCompressSync, gzipSync, constants as zlib } from 'node:zlib'
import { callProcedure } from '@/server/api/internals/call-procedure'
import { matchPath, type Route, routeInput, routeTable } from '@/server/api/internals/routes'
import { freshnessHeaders, type IndexerSnapshot, requestSnapshot } from '@/server/api/read/indexer-snapshot'
import { readOnReplica } from '@/server/api/read/replica-read'
import type { V1Context } from '@/server/api/trpc/v1'
import { v1Router } from '@/server/api/v1/router'
import { type AccessControl, RequestAccess } from '@/server/credentials/access'
import { claimedKind } from '@/server/credentials/secrets'
import { ApiError } from '@/server/errors/api-error'
import { errorBody } from '@/server/errors/error-body'
import { allowHeader, methodNotAllowed } from '@/server/errors/method-not-allowed'
import { toApiError } from '@/server/errors/to-api-error'
import { clientIp } from '@/server/http/client-ip'
import { UNMATCHED_ROUTE } from '@/server/metrics/web-metrics'
import { createMediaHandler, isMediaRequest, MEDIA_PATH } from '@/server/rest/media/media.handler'
import {
  createStreamHandler,
  isStreamPath,
  STREAM_PATH,
  STREAM_SCOPE,
  type StreamOptions,
} from '@/server/rest/stream/stream.handler'
import type { Services } from '@/server/services/web-services'

const MIN_COMPRESS_BYTES = 1024

/** Route label of CORS preflights, answered before the route table is read. */
const PREFLIGHT_ROUTE = 'preflight'

type Send = { status: number; headers: Record<string, string>; body: string; head: boolean }

const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({})

const JSON_CONTENT_TYPE = 'application/json; charset=utf-8'

/** Every JSON error's headers; the error's own and CORS's (Vary) come after them. */
const JSON_HEADERS = {
  'Content-Type': JSON_CONTENT_TYPE,
  'X-Content-Type-Options': 'nosniff',
  Vary: 'Accept-Encoding',
}

/** Copies headers over (later ones win: a procedure's Cache-Control, CORS's Vary). */
function addHeaders(to: Record<string, string>, from: Readonly<Record<string, string>>) {
  for (const name in from) to[name] = from[name]!
}

/** X-Chain-Head and X-Confirmed-Block; without them when the state read failed (the data was read). */
async function freshness(snapshot: () => Promise<IndexerSnapshot>): Promise<Record<string, string>> {
  try {
    return freshnessHeaders(await snapshot())
  } catch {
    return NO_HEADERS
  }
}

export type RestHandler = ((req: IncomingMessage, res: ServerResponse) => Promise<void>) & {
  /** Ends the open live streams (the process stops). */
  close(): Promise<void>
}

export interface RestOptions {
  /** The live stream's timings (tests shorten them). */
  stream?: StreamOptions
}

export function createRestHandler(services: Services, options: RestOptions = {}): RestHandler {
  const access = services.access
  const routes = routeTable(v1Router)

  // GET /v1/media answers bytes, not JSON: its own node:http handler (public, limited per IP).
  const media = createMediaHandler(services)

  // GET /v1/activity/stream answers Server-Sent Events after the /v1 access checks (docs/push.md).
  const stream = createStreamHandler(services, options.stream)

  const metrics = services.metrics
  /** Records the answered request under its route template (docs/operations.md, "Metrics"). */
  const observe = (route: string, method: string | undefined, status: number, started: number) =>
    metrics?.request(route, method ?? '', status, (performance.now() - started) / 1000)

  return Object.assign(handleRest, { close: () => stream.close() })

  async function handleRest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = metrics ? performance.now() : 0
    const requestId = randomUUID()
    if (isMediaRequest(req.url)) {
      // Media streams a file: it counts when the last byte went out.
      if (metrics) res.once('finish', () => observe(MEDIA_PATH, req.method, res.statusCode, started))
      return media(req, res, requestId)
    }
    const head = req.method === 'HEAD'
    const ip = clientIp(req, services.config.TRUST_PROXY)
    // Listening before the first await: a client that leaves during the origin's lookup has
    // its slots released once the request's work is over, as any other.
    const requestAccess = new RequestAccess(access, ip)
    res.on('close', () => requestAccess.responseClosed())
    const origin = req.headers.origin
    const cors = origin === undefined ? NO_HEADERS : await corsHeaders(access, origin)
    if (req.method === 'OPTIONS') {
      preflight(req, res, requestId, cors, routes)
      return observe(PREFLIGHT_ROUTE, req.method, res.statusCode, started)
    }
    // Headers a procedure set (freshness) also go on its error responses.
    let procedureHeaders: Record<string, string> = NO_HEADERS
    // The route template the request counts under: the matched path's, else "unmatched".
    let routeLabel = UNMATCHED_ROUTE
    try {
      const { pathname, query } = parseTarget(req.url)
      if (isStreamPath(pathname)) {
        routeLabel = STREAM_PATH
        const authorization = req.headers.authorization
        await requestAccess.limitIp(ipPolicy(undefined, authorization), authorization)
        if (req.method !== 'GET') {
          throw methodNotAllowed(req.method, STREAM_METHODS)
        }
        const credential = await requestAccess.authenticate(req.headers, STREAM_SCOPE, requestId)
        req.resume()
        const headers = { ...requestAccess.headers(), ...cors }
        await stream(req, res, { requestId, credential, access: requestAccess, headers, query })
        requestAccess.countResponse(200)
        return observe(routeLabel, req.method, 200, started)
      }
      const candidates = matchPath(routes, pathname)
      const route =
        candidates.find((r) => r.method === req.method) ??
        (head ? candidates.find((r) => r.method === 'GET') : undefined)
      if (candidates.length > 0) routeLabel = candidates[0]!.path
      // The client IP's limit comes before anything else, unknown paths included.
      await requestAccess.limitIp(ipPolicy(route, req.headers.authorization), req.headers.authorization)
      if (candidates.length === 0) throw new ApiError('NOT_FOUND', `There is no endpoint at ${pathname}.`)
      if (!route) throw methodNotAllowed(req.method, allowedMethods(candidates.map((r) => r.method)))

      // Every field named here, in one literal: the context keeps one shape through the
      // request, which measurably speeds every later read of it (docs/api.md).
      const ctx: V1Context = {
        config: services.config,
        db: services.db,
        requestId,
        clientIp: ip,
        credential: undefined,
        responseHeaders: {},
        snapshot: requestSnapshot(services),
      }
      procedureHeaders = ctx.responseHeaders
      if (route.meta.scope) {
        ctx.credential = await requestAccess.authenticate(req.headers, route.meta.scope, requestId)
      }
      // No /v1 procedure reads a body (POST /v1/demo-token takes none): whatever is sent is drained unread.
      req.resume()
      const input = routeInput(route, pathname, query)
      // The database part of the request, within the client address's share of the pool and
      // its credential's, address first (src/server/ratelimit/pool-shares.ts). Read endpoints
      // run on a read replica when one qualifies (docs/operations.md, "Read replicas").
      // (enter/leave rather than run(): no closure and no extra promise on the common path.)
      const shares = services.poolShares
      const ipSubject = requestAccess.ipSubject
      const credentialSubject = ctx.credential?.subject
      const ipTurn = shares.enter(ipSubject)
      if (ipTurn) await ipTurn
      let data: unknown
      let fresh = NO_HEADERS
      try {
        const credentialTurn = credentialSubject === undefined ? undefined : shares.enter(credentialSubject)
        if (credentialTurn) await credentialTurn
        try {
          const call = () => callProcedure(route.procedure, route.procedurePath, ctx, input)
          data = route.meta.scope ? await readOnReplica(services.reads, ctx, call) : await call()
          if (ctx.credential) fresh = await freshness(ctx.snapshot)
        } finally {
          if (credentialSubject !== undefined) shares.leave(credentialSubject)
        }
      } finally {
        shares.leave(ipSubject)
      }
      // One literal, then the few optional headers one by one: an object spread of
      // several header objects cost a sixth of the request (instruction counts, docs/api.md).
      const headers: Record<string, string> = {
        'Content-Type': JSON_CONTENT_TYPE,
        'X-Content-Type-Options': 'nosniff',
        Vary: 'Accept-Encoding',
        'Cache-Control': 'private, no-cache',
        'X-Request-Id': requestId,
      }
      addHeaders(headers, fresh)
      addHeaders(headers, requestAccess.headers())
      addHeaders(headers, ctx.responseHeaders)
      addHeaders(headers, cors)
      requestAccess.countResponse(200)
      send(req, res, { status: 200, headers, body: JSON.stringify(data), head })
      return observe(routeLabel, req.method, res.statusCode, started)
    } catch (err) {
      const error = toApiError(err)
      if (error.status >= 500) await requestAccess.refundFailedIssuance()
      // The path only: a query string may carry what a client should not have put there.
      logFailure(services, error, requestId, (req.url ?? '').split('?')[0]!)
      requestAccess.countResponse(error.status)
      send(
        req,
        res,
        errorResponse(error, requestId, head, { ...procedureHeaders, ...requestAccess.headers(), ...cors }),
      )
      return observe(routeLabel, req.method, res.statusCode, started)
    } finally {
      requestAccess.workFinished()
    }
  }
}

/** A path of these characters only is its own WHATWG pathname: nothing to decode or normalize. */
const PLAIN_PATH = /^\/[A-Za-z0-9/_-]*$/

/** The request target's path and query as the URL parser reads them, without a URL object for plain paths. */
function parseTarget(target = '/'): { pathname: string; query: string } {
  if (PLAIN_PATH.test(target)) return { pathname: target, query: '' }
  const url = new URL(target, 'http://localhost')
  return { pathname: url.pathname, query: url.search.slice(1) }
}

/** The live stream answers GET alone (no HEAD: its response never ends). */
const STREAM_METHODS = ['GET']

/** The methods of a path's routes, HEAD implied by GET. */
function allowedMethods(methods: string[]): string[] {
  return [...new Set(methods.flatMap((m) => (m === 'GET' ? ['GET', 'HEAD'] : [m])))]
}

/** Which per-IP limit applies: a public route's own, else the presented credential's profile (by its prefix). */
function ipPolicy(route: Route | undefined, authorization: string | undefined) {
  if (route?.meta.ipLimit) return route.meta.ipLimit
  return claimedKind(authorization) === 'demo' ? 'ipDemo' : 'ipKey'
}

const EXPOSED_HEADERS = [
  'RateLimit',
  'RateLimit-Policy',
  'RateLimit-Reset',
  'Retry-After',
  'X-Request-Id',
  'ETag',
  'X-Chain-Head',
  'X-Confirmed-Block',
].join(', ')

/** CORS response headers for an allowed Origin; none for one from elsewhere. */
async function corsHeaders(access: AccessControl, origin: string): Promise<Readonly<Record<string, string>>> {
  if (!(await access.cors.isAllowed(origin))) return NO_HEADERS
  return {
    'Access-Control-Allow-Origin': origin,
    'Access-Control-Expose-Headers': EXPOSED_HEADERS,
    Vary: 'Origin, Accept-Encoding',
  }
}

/**
 * OPTIONS: a CORS preflight, or a client asking what a path allows: the path's own methods
 * (an unknown path is 404); a preflight is answered for allowed origins only (403 otherwise).
 */
function preflight(
  req: IncomingMessage,
  res: ServerResponse,
  requestId: string,
  cors: Readonly<Record<string, string>>,
  routes: Route[],
) {
  let methods: string[]
  try {
    const { pathname } = parseTarget(req.url)
    methods = isStreamPath(pathname)
      ? STREAM_METHODS
      : allowedMethods(matchPath(routes, pathname).map((r) => r.method))
    if (methods.length === 0) throw new ApiError('NOT_FOUND', `There is no endpoint at ${pathname}.`)
  } catch (err) {
    return send(req, res, errorResponse(toApiError(err), requestId, false, { ...cors }))
  }
  const allow = allowHeader(methods)
  if (req.headers.origin !== undefined && !cors['Access-Control-Allow-Origin']) {
    const error = new ApiError('FORBIDDEN', `Origin ${JSON.stringify(req.headers.origin)} is not allowed.`)
    return send(req, res, errorResponse(error, requestId, false, { Vary: 'Origin' }))
  }
  res.writeHead(204, {
    ...cors,
    ...(cors['Access-Control-Allow-Origin']
      ? {
          'Access-Control-Allow-Methods': allow,
          'Access-Control-Allow-Headers': 'Authorization, Content-Type, If-None-Match',
          'Access-Control-Max-Age': '600',
        }
      : {}),
    Allow: allow,
    'X-Request-Id': requestId,
  })
  res.end()
}

function logFailure(services: Services, error: ApiError, requestId: string, path: string) {
  // An unreachable limiter is logged (throttled) by its store, not once per refused request.
  if (error.status >= 500 && error.code !== 'RATE_LIMITER_UNAVAILABLE') {
    services.logger.error({ requestId, path, code: error.code, err: error.cause ?? error }, 'request failed')
  }
}

function errorResponse(
  error: ApiError,
  requestId: string,
  head: boolean,
  extra: Record<string, string> = {},
): Send {
  return {
    status: error.status,
    headers: {
      ...JSON_HEADERS,
      ...extra,
      ...error.headers,
      'X-Request-Id': requestId,
      'Cache-Control': 'no-store',
    },
    body: errorBody(error, requestId),
    head,
  }
}

/** Writes the final response: ETag and 304 for successes, compression when it pays. */
function send(req: IncomingMessage, res: ServerResponse, out: Send) {
  const headers = out.headers
  if (out.status < 300) {
    const etag = `"${hash('sha1', out.body, 'base64url')}"`
    headers.ETag = etag
    if (ifNoneMatch(req.headers['if-none-match'], etag)) {
      delete headers['Content-Type']
      res.writeHead(304, headers)
      res.end()
      return
    }
  }
  const length = Buffer.byteLength(out.body, 'utf8')
  const encoding = length >= MIN_COMPRESS_BYTES ? pickEncoding(req.headers['accept-encoding']) : undefined
  if (!encoding) {
    // A string body: Node writes it with the headers in one go.
    headers['Content-Length'] = String(length)
    res.writeHead(out.status, headers)
    res.end(out.head ? undefined : out.body)
    return
  }
  const payload =
    encoding === 'br'
      ? brotliCompressSync(out.body, { params: { [zlib.BROTLI_PARAM_QUALITY]: 4 } })
      : gzipSync(out.body, { level: 5 })
  headers['Content-Encoding'] = encoding
  headers['Content-Length'] = String(payload.length)
  res.writeHead(out.status, headers)
  res.end(out.head ? undefined : payload)
}

function ifNoneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false
  return header.split(',').some((tag) => {
    const t = tag.trim()
    return t === '*' || t === etag || t === `W/${etag}`
  })
}

function pickEncoding(header: string | string[] | undefined): 'br' | 'gzip' | undefined {
  const value = Array.isArray(header) ? header.join(',') : (header ?? '')
  const accepted = new Map<string, number>()
  for (const part of value.split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';')
    if (!name) continue
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='))
    accepted.set(name, q ? Number(q.slice(2)) || 0 : 1)
  }
  if ((accepted.get('br') ?? 0) > 0) return 'br'
  if ((accepted.get('gzip') ?? 0) > 0) return 'gzip'
  return undefined
}
