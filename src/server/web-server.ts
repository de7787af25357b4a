/**
 * The web process's one HTTP server. Paths under /v1/ go straight to the REST
 * layer (routes from trpc-to-openapi meta, on node:http), because the public API must not pay
 * Next.js's per-request cost (docs/design.md, "Architecture"). Everything else —
 * portal, try-it page, docs, /api/auth, /api/trpc — goes to Next.js.
 */
import {
  createServer,
  type IncomingMessage,
  maxHeaderSize,
  type Server,
  type ServerResponse,
} from 'node:http'
import path from 'node:path'
import type { Duplex } from 'node:stream'
import { parseAndValidateFlightRouterState } from 'next/dist/server/app-render/parse-and-validate-flight-router-state'
import { exportNextAuthUrl } from '@/config/next-auth-url'
import { ApiError } from '@/server/errors/api-error'
import { errorBody } from '@/server/errors/error-body'
import { allowHeader, methodNotAllowed } from '@/server/errors/method-not-allowed'
import { CLIENT_IP_HEADER, clientIp } from '@/server/http/client-ip'
import { createRestHandler, type RestOptions } from '@/server/rest/handler'
import { openApiDocument } from '@/server/rest/openapi'
import { createReadiness } from '@/server/services/readiness'
import { type Services, shareWithNext } from '@/server/services/web-services'

/** Route labels of requests outside /v1 (docs/operations.md, "Metrics"). */
const NEXT_ROUTE = 'next'
const BAD_TARGET_ROUTE = 'bad_target'

const NO_STORE = { 'Cache-Control': 'no-store' }

/** Paths of Next.js's development tools (`npm run dev`: error overlay, restart, MCP), which take POST. */
const NEXT_DEV_TOOLS = ['/__nextjs', '/_next/mcp']

type NextHandler = (req: IncomingMessage, res: ServerResponse) => Promise<void>

export interface WebServer {
  server: Server
  close(): Promise<void>
}

export interface WebServerOptions {
  /** The process's services (src/server/services/web-services.ts); their owner closes them. */
  services: Services
  /** Serve the portal through Next.js; off in API-only tests. */
  next?: { dev: boolean; dir?: string } | false
  /** Options of the /v1 layer (the live stream's timings in tests). */
  rest?: RestOptions
}

export async function createWebServer({
  services,
  next = false,
  rest: restOptions,
}: WebServerOptions): Promise<WebServer> {
  // Requests fail closed until the limiter store (Redis when REDIS_URL is set) answers.
  await services.access.ready(2000)
  const rest = createRestHandler(services, restOptions)
  const readiness = createReadiness(services)
  const metrics = services.metrics
  let nextHandler: NextHandler | undefined
  let closeNext: (() => Promise<void>) | undefined
  if (next) {
    // Next.js code uses these same services: one pool, one limiter, one credential cache.
    shareWithNext(services)
    exportNextAuthUrl(services.config)
    const { default: createNext } = await import('next')
    const app = createNext({
      dev: next.dev,
      dir: next.dir ?? path.resolve(import.meta.dirname, '../..'),
      hostname: 'localhost',
      port: services.config.PORT,
      customServer: true,
    })
    await app.prepare()
    nextHandler = app.getRequestHandler() as NextHandler
    closeNext = () => app.close()
  }

  /** Counts a request outside /v1 (which counts itself, by route template) when it ends. */
  const count = (route: string, req: IncomingMessage, res: ServerResponse) => {
    if (!metrics) return
    const started = performance.now()
    res.once('finish', () =>
      metrics.request(route, req.method ?? '', res.statusCode, (performance.now() - started) / 1000),
    )
  }

  const server = createServer((req, res) => {
    const url = originForm(req)
    if (url === undefined) {
      count(BAD_TARGET_ROUTE, req, res)
      // `GET *` (asterisk-form) or `host:port` (authority-form) names no resource here,
      // and Next.js answers them with a 500.
      sendError(res, new ApiError('INVALID_ARGUMENT', 'The request target must be a path starting with /.'))
    } else if (url === '/v1' || url.startsWith('/v1/') || url.startsWith('/v1?')) {
      void rest(req, res)
    } else if (url === '/openapi.json' || url.startsWith('/openapi.json?')) {
      count('/openapi.json', req, res)
      if (readOnly(req, res, OPENAPI_CORS))
        sendJson(res, 200, JSON.stringify(openApiDocument(services.config)), OPENAPI_CORS)
    } else if (url === '/healthz') {
      // Alive: the process answers. It checks nothing else (that is /readyz).
      count('/healthz', req, res)
      if (readOnly(req, res)) sendJson(res, 200, JSON.stringify({ status: 'ok' }), NO_STORE)
    } else if (url === '/readyz') {
      count('/readyz', req, res)
      if (!readOnly(req, res)) return
      void readiness().then(({ ready, checks }) =>
        sendJson(
          res,
          ready ? 200 : 503,
          JSON.stringify({ status: ready ? 'ready' : 'not_ready', checks }),
          NO_STORE,
        ),
      )
    } else if (!decodablePath(url)) {
      count(BAD_TARGET_ROUTE, req, res)
      // Next.js cannot decode it either, and answers a 500.
      sendError(res, new ApiError('INVALID_ARGUMENT', 'The request path is not valid percent-encoded UTF-8.'))
    } else if (req.headers.rsc === '1' && !validRouterState(req.headers[ROUTER_STATE_HEADER])) {
      count(BAD_TARGET_ROUTE, req, res)
      // Next.js throws on it while rendering: a 500 and an error in the log, of anyone's making.
      sendError(
        res,
        new ApiError('INVALID_ARGUMENT', `The ${ROUTER_STATE_HEADER} header is not a router state.`),
      )
    } else if (nextHandler) {
      count(NEXT_ROUTE, req, res)
      // Pages, docs and Next.js's assets are read, never written to: the portal has no server
      // actions, so a POST must not render a page (or reach Next.js's action handling).
      const methods = nextMethods(url, next !== false && next.dev)
      if (methods && !allowMethods(req, res, methods)) return
      // Next.js sees headers only, and keeps a client-sent X-Forwarded-For: hand it the
      // client IP computed here under TRUST_PROXY, overwriting anything the client sent.
      req.headers[CLIENT_IP_HEADER] = clientIp(req, services.config.TRUST_PROXY)
      nextHandler(req, res).catch((err) => {
        services.logger.error({ err, path: url.split('?')[0] }, 'page failed')
        if (!res.headersSent) sendError(res, new ApiError('INTERNAL_ERROR', 'Page failed.'))
      })
    } else {
      count(NEXT_ROUTE, req, res)
      sendError(res, new ApiError('NOT_FOUND', 'Not found.'))
    }
  })
  // Requests Node's parser refuses never reach the handler; they are answered in the envelope too.
  server.on('clientError', answerUnparsedRequest)
  // Slow or stuck clients must not hold sockets forever.
  server.headersTimeout = 15_000
  server.requestTimeout = 30_000
  server.keepAliveTimeout = 5_000

  return {
    server,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()))
      server.closeIdleConnections()
      // Live streams never end on their own: end them, or close() waits for them.
      await rest.close()
      await closed
      await closeNext?.()
    },
  }
}

/** The request's target as a path ("/path?query"), or undefined when it names no resource. */
function originForm(req: IncomingMessage): string | undefined {
  const target = req.url ?? '/'
  if (target.startsWith('/')) return target
  // Absolute-form, which a server must accept (RFC 9112 §3.2.2); its host replaces Host.
  if (/^https?:\/\//i.test(target) && URL.canParse(target)) {
    const absolute = new URL(target)
    req.headers.host = absolute.host
    req.url = `${absolute.pathname}${absolute.search}`
    return req.url
  }
  return undefined
}

/** Whether the path's percent-escapes decode (`%ZZ`, or bytes that are no UTF-8 such as `%C0%AE`, do not). */
function decodablePath(url: string): boolean {
  const path = url.split('?', 1)[0]!
  if (!path.includes('%')) return true
  try {
    decodeURIComponent(path)
    return true
  } catch {
    return false
  }
}

/** The header a client-side navigation (an RSC request, `RSC: 1`) sends with its router state. */
const ROUTER_STATE_HEADER = 'next-router-state-tree'

/**
 * Whether Next.js can read the router state header (absent is fine), by its own validator:
 * the schema is Next.js's, so no copy of it could stay exact. An internal module of Next.js;
 * e2e/hostile-requests.spec.ts sends malformed states to every kind of page.
 */
function validRouterState(header: string | string[] | undefined): boolean {
  if (header === undefined) return true
  try {
    parseAndValidateFlightRouterState(header)
    return true
  } catch {
    return false
  }
}

/** Why the parser refused a request, as the client should read it (by Node's error code). */
const UNPARSED_REQUEST: Record<string, string> = {
  HPE_HEADER_OVERFLOW: `The request line and headers are larger than ${maxHeaderSize / 1024} KiB.`,
  ERR_HTTP_REQUEST_TIMEOUT: 'The request did not arrive in time.',
}

/**
 * A request the HTTP parser refused (a query string past maxHeaderSize, broken syntax, a
 * client too slow to send it): 400 INVALID_ARGUMENT in the envelope, where
 * Node would answer 431, 400 or 408 with an empty body; then the connection
 * closes, since the parser has lost its place in the stream.
 */
function answerUnparsedRequest(err: NodeJS.ErrnoException, socket: Duplex) {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy()
    return
  }
  const message = UNPARSED_REQUEST[err.code ?? ''] ?? 'The request is not valid HTTP/1.1.'
  const body = errorBody(new ApiError('INVALID_ARGUMENT', message))
  socket.end(
    `HTTP/1.1 400 Bad Request\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n${body}`,
  )
}

function sendError(res: ServerResponse, error: ApiError) {
  sendJson(res, error.status, errorBody(error), error.headers)
}

/** The document's CORS: anyone may read the API description. */
const OPENAPI_CORS = { 'Access-Control-Allow-Origin': '*', 'Access-Control-Allow-Methods': 'GET, HEAD' }
const READ_METHODS = ['GET', 'HEAD']

/**
 * The methods of the route handlers under /api/: the exports of each route.ts under src/app/api
 * (web-server.test.ts compares the two), HEAD with GET. A path ending in / is a catch-all.
 */
export const API_ROUTE_METHODS: ReadonlyArray<readonly [path: string, methods: string[]]> = [
  ['/api/auth/', ['GET', 'HEAD', 'POST']],
  ['/api/trpc/', ['GET', 'HEAD', 'POST']],
  ['/api/siwe/nonce', ['POST']],
  ['/api/portal/audit-export', READ_METHODS],
]

/**
 * The methods Next.js may be asked with on this path: a route handler's under /api/, GET and
 * HEAD anywhere else; undefined (any) for the development tools under `npm run dev`. The path
 * is read as Next.js reads it, by the URL parser (dot segments, encoded or not, and
 * backslashes resolved), so `/api/../portal` is the page it names.
 */
function nextMethods(url: string, dev: boolean): string[] | undefined {
  let path: string
  try {
    path = new URL(url, 'http://localhost').pathname
  } catch {
    return READ_METHODS
  }
  if (dev && NEXT_DEV_TOOLS.some((prefix) => path.startsWith(prefix))) return undefined
  if (!path.startsWith('/api/')) return READ_METHODS
  const route = API_ROUTE_METHODS.find(([r]) => (r.endsWith('/') ? path.startsWith(r) : path === r))
  return route?.[1] ?? READ_METHODS
}

/**
 * Whether the request's method is one of `methods`; otherwise it is answered here: OPTIONS
 * with 204 and what is allowed (a preflight of /openapi.json too), any other method with 405
 * and Allow, in the envelope (Next.js answers a route handler's 405 with an empty body).
 */
function allowMethods(
  req: IncomingMessage,
  res: ServerResponse,
  methods: string[],
  cors: Record<string, string> = {},
): boolean {
  if (methods.includes(req.method ?? '')) return true
  if (req.method === 'OPTIONS') {
    res.writeHead(204, { Allow: allowHeader(methods), ...cors })
    res.end()
  } else sendError(res, methodNotAllowed(req.method, methods))
  return false
}

/** The service's own documents (/openapi.json, /healthz, /readyz) are read with GET or HEAD. */
function readOnly(req: IncomingMessage, res: ServerResponse, cors: Record<string, string> = {}): boolean {
  return allowMethods(req, res, READ_METHODS, cors)
}

function sendJson(
  res: ServerResponse,
  status: number,
  payload: string,
  headers: Record<string, string> = {},
) {
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(payload),
    ...headers,
  })
  res.end(payload)
}
