/** A local HTTP server for metadata tests: routes are plain functions. */
import http from 'node:http'
import type { AddressInfo } from 'node:net'

export type Route = (req: http.IncomingMessage, res: http.ServerResponse) => void

export interface TestServer {
  origin: string
  port: number
  hits: string[]
  close(): Promise<void>
}

export async function startServer(routes: Record<string, Route>, host = '127.0.0.1'): Promise<TestServer> {
  const hits: string[] = []
  const server = http.createServer((req, res) => {
    hits.push(req.url ?? '')
    const path = (req.url ?? '/').split('?')[0]!
    const route =
      routes[path] ??
      Object.entries(routes).find(([p]) => p.endsWith('*') && path.startsWith(p.slice(0, -1)))?.[1]
    if (!route) {
      res.writeHead(404).end('not found')
      return
    }
    route(req, res)
  })
  await new Promise<void>((resolve) => server.listen(0, host, resolve))
  const port = (server.address() as AddressInfo).port
  const sockets = new Set<import('node:net').Socket>()
  server.on('connection', (s) => {
    sockets.add(s)
    s.on('close', () => sockets.delete(s))
  })
  return {
    origin: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    hits,
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy()
        server.close(() => resolve())
      }),
  }
}

export const json =
  (body: unknown): Route =>
  (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body))
  }

/** A minimal valid 1x1 PNG. */
export const PNG_1x1 = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
)

/** A JSON-RPC endpoint for transport tests: every request's parsed body goes to `handle`. */
export function startJsonRpcServer<Body>(
  handle: (body: Body, res: http.ServerResponse) => void,
): Promise<TestServer> {
  return startServer({
    '/*': (req, res) => {
      let body = ''
      req.on('data', (c) => (body += c))
      req.on('end', () => handle(JSON.parse(body), res))
    },
  })
}
