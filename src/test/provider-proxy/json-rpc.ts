/** The JSON-RPC wire on both sides of the proxy: the node it forwards to and the answers it writes. */
import http from 'node:http'
import https from 'node:https'

export const hex = (n: bigint | number) => `0x${n.toString(16)}`

export interface JsonRpcError {
  code: number
  message: string
  data?: unknown
}

export type RpcRequest = { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: unknown }
export type Result = { result: unknown } | { error: JsonRpcError }
export type Block = { number?: string } | null

export const ITEM_ERRORS: JsonRpcError[] = [
  { code: -32603, message: 'internal error' },
  { code: -32005, message: 'request rate exceeded' },
]
export const BAD_GATEWAY_HTML =
  '<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n'
// Envoy's answer when its upstream resets, as some gateways pass it on with status 200.
export const NON_JSON_BODY =
  'upstream connect error or disconnect/reset before headers. reset reason: connection termination'
export const RATE_LIMITED = { jsonrpc: '2.0', error: { code: 429, message: 'Too Many Requests' } }
export const HEADER_NOT_FOUND: JsonRpcError = { code: -32000, message: 'header not found' }
export const UNKNOWN_BLOCK: JsonRpcError = { code: -32000, message: 'unknown block' }
export const HEAD_TAGS = new Set(['latest', 'pending'])
/** Position of the block parameter of state reads, which a lagging node answers at its own head. */
export const STATE_BLOCK_PARAM: Record<string, number> = {
  eth_call: 1,
  eth_getCode: 1,
  eth_getBalance: 1,
  eth_getTransactionCount: 1,
  eth_getStorageAt: 2,
}

export function send(res: http.ServerResponse, status: number, body: Buffer | string) {
  if (res.destroyed) return
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) })
  res.end(body)
}

const OPEN = Buffer.from('[')
const COMMA = Buffer.from(',')
const CLOSE = Buffer.from(']')

/** A JSON array of already serialised answers. */
export function joinArray(parts: Buffer[]): Buffer {
  const all: Buffer[] = [OPEN]
  parts.forEach((part, i) => {
    if (i > 0) all.push(COMMA)
    all.push(part)
  })
  all.push(CLOSE)
  return Buffer.concat(all)
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

export const firstParam = (item: RpcRequest) => (Array.isArray(item?.params) ? item.params[0] : undefined)

export const isQuantity = (v: unknown): v is string => typeof v === 'string' && /^0x[0-9a-f]+$/i.test(v)

export interface Upstream {
  /** One POST to the node; resolves with its body. */
  post(body: string): Promise<Buffer>
  /** The calls in one JSON-RPC batch, answered in their order. */
  batch(calls: { method: string; params: unknown[] }[]): Promise<Result[]>
  /** Closes the keep-alive sockets. */
  close(): void
}

/** The node behind the proxy, over keep-alive connections. */
export function connectUpstream(url: string): Upstream {
  const upstreamUrl = new URL(url)
  const client = upstreamUrl.protocol === 'https:' ? https : http
  const agent = new client.Agent({ keepAlive: true, maxSockets: 64 })
  const upstream = (body: string): Promise<Buffer> =>
    new Promise((resolve, reject) => {
      const req = client.request(
        upstreamUrl,
        {
          method: 'POST',
          agent,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          const chunks: Buffer[] = []
          res.on('data', (chunk: Buffer) => chunks.push(chunk))
          res.on('end', () => resolve(Buffer.concat(chunks)))
          res.on('error', reject)
        },
      )
      req.on('error', reject)
      req.end(body)
    })

  const upstreamBatch = async (calls: { method: string; params: unknown[] }[]): Promise<Result[]> => {
    const text = await upstream(
      JSON.stringify(calls.map((c, id) => ({ jsonrpc: '2.0', id, method: c.method, params: c.params }))),
    )
    const parsed = JSON.parse(text.toString('utf8')) as unknown
    const byId = new Map<unknown, Result>()
    if (Array.isArray(parsed)) for (const a of parsed) byId.set(a?.id, a)
    return calls.map((_, id) => {
      const answer = byId.get(id) ?? (Array.isArray(parsed) ? undefined : (parsed as Result))
      if (answer && 'error' in answer && answer.error) return { error: answer.error }
      if (answer && 'result' in answer) return { result: answer.result }
      return { error: { code: -32603, message: 'no answer from the node' } }
    })
  }
  return { post: upstream, batch: upstreamBatch, close: () => agent.destroy() }
}
