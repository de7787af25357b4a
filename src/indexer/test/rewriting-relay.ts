/**
 * A JSON-RPC relay in front of a test node that hands each request, with the node's own
 * answer, to `answer`, which returns what the client gets: an honest node but for the lie a
 * test plants (single requests and batches alike).
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'

export interface JsonRpcItem {
  id?: unknown
  method?: string
  params?: unknown[]
  result?: unknown
  error?: unknown
}

export interface RewritingRelay {
  url: string
  stop(): Promise<void>
}

export async function startRewritingRelay(
  upstream: string,
  answer: (request: JsonRpcItem, upstreamAnswer: JsonRpcItem) => JsonRpcItem,
): Promise<RewritingRelay> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c) => chunks.push(c))
    req.on('end', async () => {
      try {
        const body = Buffer.concat(chunks).toString('utf8')
        const request = JSON.parse(body) as JsonRpcItem | JsonRpcItem[]
        const reply = await fetch(upstream, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
        })
        const upstreamAnswer = (await reply.json()) as JsonRpcItem | JsonRpcItem[]
        let out: JsonRpcItem | JsonRpcItem[]
        if (Array.isArray(request)) {
          const byId = new Map((upstreamAnswer as JsonRpcItem[]).map((a) => [JSON.stringify(a.id), a]))
          out = request.map((r) => answer(r, byId.get(JSON.stringify(r.id))!))
        } else out = answer(request, upstreamAnswer as JsonRpcItem)
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(JSON.stringify(out))
      } catch (err) {
        res.writeHead(502)
        res.end(String(err))
      }
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stop: () =>
      new Promise<void>((r) => {
        server.closeAllConnections()
        server.close(() => r())
      }),
  }
}
