/**
 * The web process's one HTTP server. Paths under /v1/ go straight to the REST
 * layer (routes from trpc-to-openapi meta, on node:http), because the public API must not pay
 * Next.js's per-request cost (docs/design.md, "Architecture"). Everything else —
 * portal, try-it page, docs, /api/auth, /api/trpc — goes to Next.js.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import path from 'node:path'
import type { Services } from '@/server/api/trpc'
import { createAccessControl } from '@/server/auth/access'
import { CLIENT_IP_HEADER, clientIp } from '@/server/http/client-ip'
import { createRestHandler } from '@/server/rest/handler'
import { openApiDocument } from '@/server/rest/openapi'

type NextHandler = (req: IncomingMessage, res: ServerResponse) => Promise<void>

export interface WebServer {
  server: Server
  close(): Promise<void>
}

export interface WebServerOptions {
  services: Services
  /** Serve the portal through Next.js; off in API-only tests. */
  next?: { dev: boolean; dir?: string } | false
}

export async function createWebServer({ services, next = false }: WebServerOptions): Promise<WebServer> {
  // Credentials and rate limits (Redis when REDIS_URL is set): one set per process.
  const access = services.access ?? createAccessControl(services)
  if (!services.access) await access.ready(2000)
  const rest = createRestHandler({ ...services, access })
  let nextHandler: NextHandler | undefined
  let closeNext: (() => Promise<void>) | undefined
  if (next) {
    const { default: createNext } = await import('next')
    const app = createNext({
      dev: next.dev,
      dir: next.dir ?? path.resolve(import.meta.dirname, '../../..'),
      hostname: 'localhost',
      port: services.config.PORT,
      customServer: true,
    })
    await app.prepare()
    nextHandler = app.getRequestHandler() as NextHandler
    closeNext = () => app.close()
  }

  const server = createServer((req, res) => {
    const url = originForm(req)
    if (url === undefined) {
      // `GET *` (asterisk-form) or `host:port` (authority-form) names no resource here,
      // and Next.js answers them with a 500.
      sendJson(res, 400, {
        error: { code: 'INVALID_ARGUMENT', message: 'The request target must be a path starting with /.' },
      })
    } else if (url === '/v1' || url.startsWith('/v1/') || url.startsWith('/v1?')) {
      void rest(req, res)
    } else if (url === '/openapi.json' || url.startsWith('/openapi.json?')) {
      sendJson(res, 200, openApiDocument(services.config), { 'Access-Control-Allow-Origin': '*' })
    } else if (url === '/healthz') {
      sendJson(res, 200, { status: 'ok' })
    } else if (nextHandler) {
      // Next.js sees headers only, and keeps a client-sent X-Forwarded-For: hand it the
      // client IP computed here under TRUST_PROXY, overwriting anything the client sent.
      req.headers[CLIENT_IP_HEADER] = clientIp(req, services.config.TRUST_PROXY)
      nextHandler(req, res).catch((err) => {
        services.logger.error({ err, path: url.split('?')[0] }, 'page failed')
        if (!res.headersSent)
          sendJson(res, 500, { error: { code: 'INTERNAL_ERROR', message: 'Page failed.' } })
      })
    } else {
      sendJson(res, 404, { error: { code: 'NOT_FOUND', message: 'Not found.' } })
    }
  })
  // Slow or stuck clients must not hold sockets forever.
  server.headersTimeout = 15_000
  server.requestTimeout = 30_000
  server.keepAliveTimeout = 5_000

  return {
    server,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()))
      server.closeIdleConnections()
      await closed
      await closeNext?.()
      if (!services.access) await access.close()
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

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  const payload = JSON.stringify(body)
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(payload),
    ...headers,
  })
  res.end(payload)
}
