/**
 * A JSON-RPC proxy in front of a node (anvil) that behaves like a hosted
 * provider: rate limits with Retry-After, load-balancer error pages, dropped
 * and hung connections, non-JSON bodies, per-item errors inside batches,
 * load-balanced nodes a few blocks behind, eth_getLogs answers with
 * duplicated, reordered or silently missing logs, with logs of blocks not
 * asked for or with a log kept under a replaced block's hash, and eth_getLogs
 * caps refused in the wording of each provider, and a node whose log index
 * lacks the same logs on every read (brokenLogIndex).
 *
 * Deterministic under a seed: every HTTP request takes the next seed from a
 * mulberry32 stream in arrival order and draws all its decisions from its own
 * generator, so a given sequence of requests meets the same faults on every
 * run. Every injected fault is counted (stats()).
 *
 * Fast on purpose (tests and benchmarks run through it): node:http on both
 * sides with keep-alive to the upstream, eth_getLogs answers passed through
 * as bytes (their logs counted, not parsed) unless a fault or a cap needs
 * their content.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { mulberry32 } from '@/lib/random'
import { FAULT_KINDS, NO_FAULTS, type ProviderFaults } from './faults'
import { createGetLogs } from './get-logs'
import {
  BAD_GATEWAY_HTML,
  type Block,
  connectUpstream,
  firstParam,
  joinArray,
  NON_JSON_BODY,
  RATE_LIMITED,
  type Result,
  type RpcRequest,
  send,
  sleep,
} from './json-rpc'
import { usesHeadTag } from './logs'
import type { ProviderProxy, ProviderProxyOptions } from './options'
import { type Plan, plan } from './plan'

export { FAULT_KINDS, NO_FAULTS, type ProviderFaults } from './faults'
export type { JsonRpcError } from './json-rpc'
export type { ProviderProxy, ProviderProxyOptions } from './options'
export {
  type CapContext,
  type CapRefusal,
  PROVIDER_STYLES,
  type ProviderStyle,
  type ProviderStyleSpec,
} from './styles'

export async function startProviderProxy(options: ProviderProxyOptions): Promise<ProviderProxy> {
  const node = connectUpstream(options.upstream)
  let faults: ProviderFaults = { ...NO_FAULTS, ...options.faults }
  const retryAfter = String(Math.max(0, Math.round(options.retryAfterSeconds ?? 1)))
  const cap = options.getLogsCap
  const requestSeeds = mulberry32(options.seed ?? 1)
  const counters = new Map<string, number>()
  const count = (key: string, by = 1) => counters.set(key, (counters.get(key) ?? 0) + by)
  const omitted: string[] = []
  /** Logs the broken log index lacks (brokenLogIndex), once found in an answer. */
  const unindexed = new Set<string>()
  /** Logs (`${transactionHash}:${logIndex}`) the node's stale cache answers with another block hash. */
  const staleHashes = new Map<string, string>()
  const hung = new Set<http.ServerResponse>()
  const context = { options, count }
  const getLogs = createGetLogs({
    ...context,
    upstream: node,
    faults: () => faults,
    omitted,
    unindexed,
    staleHashes,
  })

  let inFlight = 0
  const server = http.createServer((req, res) => {
    inFlight++
    if (inFlight > (counters.get('peakInFlight') ?? 0)) counters.set('peakInFlight', inFlight)
    res.once('close', () => inFlight--)
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      handle(Buffer.concat(chunks).toString('utf8'), req, res).catch((err) => {
        count('upstreamErrors')
        if (!res.headersSent && !res.destroyed) {
          res.writeHead(502, { 'content-type': 'text/plain' })
          res.end(`upstream error: ${err instanceof Error ? err.message : String(err)}`)
        }
      })
    })
  })
  // Longer than clients' idle time-outs, so a reused keep-alive socket is never closed under a request.
  server.keepAliveTimeout = 30_000

  async function handle(body: string, req: http.IncomingMessage, res: http.ServerResponse) {
    count('requests')
    const rng = mulberry32(Math.floor(requestSeeds() * 2 ** 32))
    const f = faults
    const latency = options.latencyMs
    if (latency) await sleep(latency[0] + rng() * (latency[1] - latency[0]))
    if (res.destroyed) return

    if (rng() < f.rateLimited) {
      count('rateLimited')
      const json = rng() < 0.5
      res.writeHead(429, {
        'content-type': json ? 'application/json' : 'text/plain',
        'retry-after': retryAfter,
      })
      res.end(json ? JSON.stringify(RATE_LIMITED) : 'Too Many Requests\n')
      return
    }
    if (rng() < f.badGateway) {
      count('badGateway')
      res.writeHead(502, { 'content-type': 'text/html' })
      res.end(BAD_GATEWAY_HTML)
      return
    }
    if (rng() < f.dropConnection) {
      count('dropConnection')
      req.socket.destroy()
      return
    }
    if (rng() < f.hang) {
      count('hang')
      hung.add(res)
      res.once('close', () => hung.delete(res))
      return
    }
    if (rng() < f.nonJson) {
      count('nonJson')
      res.writeHead(200, { 'content-type': 'text/plain' })
      res.end(NON_JSON_BODY)
      return
    }

    let parsed: unknown
    try {
      parsed = JSON.parse(body)
    } catch {
      return send(
        res,
        200,
        JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'parse error' } }),
      )
    }
    const isBatch = Array.isArray(parsed)
    const items = (isBatch ? parsed : [parsed]) as RpcRequest[]
    if (items.length === 0) {
      return send(
        res,
        200,
        JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'empty batch' } }),
      )
    }

    // The node serving this request: a lagging one is behind by 1..lagBlocks.
    const lag = rng() < f.lagging ? 1 + Math.floor(rng() * Math.max(1, f.lagBlocks)) : 0
    if (lag) count('lagging')

    // What the plans need from the node first: its head, and the numbers of blocks named by hash.
    const wantsHead =
      lag > 0 ||
      ((f.shortLogs > 0 || f.strayLog > 0) && items.some((it) => it?.method === 'eth_getLogs')) ||
      (cap !== undefined &&
        items.some(
          (it) => it?.method === 'eth_getLogs' && usesHeadTag(firstParam(it) as Record<string, unknown>),
        ))
    const hashes = lag
      ? [
          ...new Set(
            items
              .filter((it) => it?.method === 'eth_getLogs')
              .map((it) => (firstParam(it) as { blockHash?: unknown } | undefined)?.blockHash)
              .filter((h): h is string => typeof h === 'string'),
          ),
        ]
      : []
    let nodeHead = 0n
    const numberOfHash = new Map<string, bigint | null>()
    if (wantsHead || hashes.length > 0) {
      const lookups = await node.batch([
        { method: 'eth_blockNumber', params: [] },
        ...hashes.map((h) => ({ method: 'eth_getBlockByHash', params: [h, false] })),
      ])
      const head = lookups[0]!
      if ('error' in head) throw new Error(`eth_blockNumber: ${head.error.message}`)
      nodeHead = BigInt(head.result as string) - BigInt(lag)
      if (nodeHead < 0n) nodeHead = 0n
      hashes.forEach((h, i) => {
        const block = lookups[i + 1]!
        const number = 'result' in block ? (block.result as Block)?.number : undefined
        numberOfHash.set(h, number ? BigInt(number) : null)
      })
    }

    const plans = items.map((item) => plan(context, item, f, rng, lag, nodeHead, numberOfHash))
    const answers = await answer(plans)

    // Notifications (no id) get no answer.
    const out: Buffer[] = []
    let status = 200
    items.forEach((item, i) => {
      if (!item || typeof item !== 'object' || !('id' in item)) return
      const a = answers[i]!
      out.push(Buffer.isBuffer(a) ? a : Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: item.id, ...a })))
      const p = plans[i]!
      if (!isBatch && p.kind === 'local' && p.httpStatus) status = p.httpStatus
    })
    send(res, status, isBatch ? joinArray(out) : (out[0] ?? Buffer.alloc(0)))
  }

  /** Runs the plans: `call` items in one upstream batch, each eth_getLogs on its own. */
  async function answer(plans: Plan[]): Promise<(Buffer | Result)[]> {
    const out: (Buffer | Result)[] = new Array(plans.length)
    const calls: { i: number; plan: Extract<Plan, { kind: 'call' }> }[] = []
    const pending: Promise<void>[] = []
    plans.forEach((p, i) => {
      if (p.kind === 'local') out[i] = p.answer
      else if (p.kind === 'call') calls.push({ i, plan: p })
      else
        pending.push(
          getLogs(p).then((a) => {
            out[i] = a
          }),
        )
    })
    if (calls.length > 0) {
      pending.push(
        node.batch(calls.map((c) => c.plan)).then((results) => {
          results.forEach((r, k) => {
            const { i, plan } = calls[k]!
            out[i] = ('result' in r && plan.check?.(r.result)) || r
          })
        }),
      )
    }
    await Promise.all(pending)
    return out
  }

  const address = await new Promise<AddressInfo>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve(server.address() as AddressInfo))
  })

  let stopping: Promise<void> | undefined
  return {
    url: `http://127.0.0.1:${address.port}`,
    stats: () => {
      const out: Record<string, number> = { requests: 0, items: 0 }
      for (const kind of FAULT_KINDS) out[kind] = 0
      for (const [k, v] of counters) out[k] = v
      return out
    },
    setFaults(next) {
      faults = { ...faults, ...next }
      if (faults.staleLog === 0) staleHashes.clear()
    },
    omitted: () => [...omitted],
    stop() {
      stopping ??= new Promise<void>((resolve) => {
        for (const res of hung) res.socket?.destroy()
        hung.clear()
        server.close(() => resolve())
        server.closeAllConnections()
        node.close()
      })
      return stopping
    },
  }
}
