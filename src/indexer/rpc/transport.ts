/**
 * JSON-RPC over HTTP to one endpoint: requests made in the same tick go out
 * as one batch, each item settles on its own (a batch whose third item fails
 * still answers the others), and every failure is classified by what it
 * says about the provider (docs/indexer.md, "Providers").
 */
import { isAscii } from 'node:buffer'
import { IndexerError } from '../errors'
import { type RpcTarget, splitCredentials, withoutCredentials } from './credentials'

/** What a failed request says about the provider, not about the request. */
export type RpcFaultKind =
  /** HTTP 429 or a JSON-RPC rate-limit error: slow down, honour Retry-After. */
  | 'rate_limited'
  /** Any other non-200 HTTP status (a 502 HTML page from a load balancer, 503, 408, …). */
  | 'http'
  /** HTTP 200 with a body that is not JSON-RPC (an HTML page, a proxy's plain-text error). */
  | 'bad_body'
  /**
   * An answer larger than the client accepts (maxBodyBytes): the request asked
   * for too much (a log range too wide for a node without result caps).
   * Asking the same again would get the same answer; a smaller range is read.
   */
  | 'too_large'
  /** The connection failed or was dropped before an answer. */
  | 'network'
  /** No answer within the time-out (a hung request). */
  | 'timeout'
  /** A JSON-RPC error object for this item. */
  | 'rpc'

export class RpcRequestError extends IndexerError {
  readonly kind: RpcFaultKind
  readonly status: number | undefined
  readonly code: number | undefined
  readonly data: unknown
  /** From Retry-After, when the provider sent one. */
  readonly retryAfterMs: number | undefined

  constructor(
    kind: RpcFaultKind,
    shortMessage: string,
    options: { status?: number; code?: number; data?: unknown; retryAfterMs?: number; cause?: unknown } = {},
  ) {
    // The JSON-RPC `data` goes into the message: providers put range suggestions there (Infura).
    const details =
      options.data === undefined ? undefined : `data ${JSON.stringify(options.data).slice(0, 500)}`
    super(shortMessage, { cause: options.cause, details })
    this.name = 'RpcRequestError'
    this.kind = kind
    this.status = options.status
    this.code = options.code
    this.data = options.data
    this.retryAfterMs = options.retryAfterMs
  }
}

interface PendingItem {
  method: string
  params: unknown[]
  /** The block the item reads (-1: none); a batch waits for a slot as its lowest. */
  block: number
  /** Told when the item goes out (it may first wait for one of the endpoint's slots). */
  sent?: () => void
  resolve(value: unknown): void
  reject(err: unknown): void
}

export interface TransportOptions {
  /** May carry a user name and password: sent as basic auth, never in the URL (./credentials.ts). */
  url: string
  /** Items per HTTP batch. */
  batchSize: number
  timeoutMs: number
  /** Largest response body accepted (a runaway eth_getLogs answer is refused, not buffered). */
  maxBodyBytes: number
}

/**
 * The largest answer accepted by default: some 100,000 logs, ten times the
 * largest range the backfill asks for (rpc/get-logs.ts), and the receipts of
 * eight full blocks. A node without result caps answers a range sized on an
 * empty stretch of chain that runs into a dense one with everything at once;
 * above this the range is read in halves instead of held in memory.
 */
export const MAX_BODY_BYTES = 64 * 1024 * 1024

let nextId = 1

/**
 * The answers of reads that should be the same (the two reads of a range
 * being verified, docs/indexer.md "Verification"): the reads share one
 * JSON-RPC id, so two answers with the same content are the same bytes, and
 * an answer with the same bytes as its twin's is not parsed again — it is
 * the twin's parsed answer. Answers that differ in any byte are parsed each
 * on its own and compared as logs. Each request still goes to the provider
 * and is answered on its own: only the parsing is shared. The first answer's
 * bytes wait for the twin (megabytes, one answer per range being read):
 * comparing bytes costs a fraction of hashing them (docs/indexer.md,
 * "Verification").
 */
export class TwinReads {
  readonly id = nextId++
  /** The first answer to each request body, until its twin arrives. */
  private readonly first = new Map<string, { bytes: Buffer; parsed: unknown }>()

  parse(requestBody: string, bytes: Buffer): unknown {
    const earlier = this.first.get(requestBody)
    if (earlier?.bytes.equals(bytes)) {
      this.first.delete(requestBody)
      return earlier.parsed
    }
    const parsed = parseJson(bytes)
    this.first.set(requestBody, { bytes, parsed })
    return parsed
  }
}

/**
 * One endpoint's wire: `call` queues an item; the queue is flushed as batches
 * on the next tick through `send`, which the endpoint wraps with its
 * concurrency limit.
 */
export class HttpJsonRpc {
  private queue: PendingItem[] = []
  private flushScheduled = false
  /** The URL without its userinfo, and the Authorization header that userinfo stands for. */
  private readonly target: RpcTarget
  private readonly headers: Record<string, string>

  constructor(
    readonly options: TransportOptions,
    /** Runs one HTTP exchange (the endpoint's concurrency limit wraps it, lowest block first). */
    private readonly run: (exchange: () => Promise<void>, block: number) => Promise<void>,
  ) {
    this.target = splitCredentials(options.url)
    this.headers = { 'content-type': 'application/json' }
    if (this.target.authorization) this.headers.authorization = this.target.authorization
  }

  /**
   * `block`: the block the request reads (-1: none), its place in the queue for a slot;
   * `alone`: in an HTTP exchange of its own, never batched (large answers: eth_getLogs by range);
   * `sent`: told when the request goes out, after any wait for a slot.
   */
  call(
    method: string,
    params: unknown[],
    options: {
      signal?: AbortSignal
      block?: number
      alone?: boolean
      twin?: TwinReads
      sent?: () => void
    } = {},
  ): Promise<unknown> {
    const { signal, block = -1, alone = false, twin, sent } = options
    return new Promise((resolve, reject) => {
      // Twins share an id, so they must not share a batch.
      if (alone || twin) return this.send([{ method, params, block, sent, resolve, reject }], signal, twin)
      this.queue.push({ method, params, block, sent, resolve, reject })
      if (!this.flushScheduled) {
        this.flushScheduled = true
        setImmediate(() => this.flush(signal))
      }
    })
  }

  private flush(signal?: AbortSignal) {
    this.flushScheduled = false
    const items = this.queue
    this.queue = []
    for (let i = 0; i < items.length; i += this.options.batchSize)
      this.send(items.slice(i, i + this.options.batchSize), signal)
  }

  private send(batch: PendingItem[], signal?: AbortSignal, twin?: TwinReads) {
    const block = batch.reduce((low, item) => Math.min(low, item.block), Number.POSITIVE_INFINITY)
    this.run(() => this.exchange(batch, signal, twin), block).catch((err) => {
      for (const item of batch) item.reject(err)
    })
  }

  private async exchange(batch: PendingItem[], signal?: AbortSignal, twin?: TwinReads): Promise<void> {
    for (const item of batch) item.sent?.()
    const ids = twin ? [twin.id] : batch.map(() => nextId++)
    const body =
      batch.length === 1
        ? JSON.stringify({ jsonrpc: '2.0', id: ids[0], method: batch[0]!.method, params: batch[0]!.params })
        : JSON.stringify(
            batch.map((b, i) => ({ jsonrpc: '2.0', id: ids[i], method: b.method, params: b.params })),
          )
    // One controller per exchange, its listener on the process-wide signal removed afterwards
    // (AbortSignal.any would leave one listener per request on that signal until collected).
    const controller = new AbortController()
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      controller.abort()
    }, this.options.timeoutMs)
    const onAbort = () => controller.abort()
    signal?.addEventListener('abort', onAbort, { once: true })
    let bytes: Buffer
    let response: Response
    try {
      response = await fetch(this.target.url, {
        method: 'POST',
        headers: this.headers,
        body,
        signal: controller.signal,
      })
      bytes = await readBody(response, this.options.maxBodyBytes)
    } catch (err) {
      if (signal?.aborted) throw signal.reason ?? withoutCredentials(err)
      if (err instanceof RpcRequestError) throw err
      // fetch's and undici's errors may quote the URL: never with a password in it.
      const cause = withoutCredentials(err)
      if (timedOut)
        throw new RpcRequestError('timeout', `no answer within ${this.options.timeoutMs} ms`, { cause })
      throw new RpcRequestError('network', 'connection failed', { cause })
    } finally {
      clearTimeout(timer)
      signal?.removeEventListener('abort', onAbort)
    }
    if (response.status !== 200) {
      const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'))
      const kind = response.status === 429 ? 'rate_limited' : 'http'
      throw new RpcRequestError(kind, `HTTP ${response.status}${snippet(decode(bytes))}`, {
        status: response.status,
        retryAfterMs,
      })
    }
    const parsed = twin ? twin.parse(body, bytes) : parseJson(bytes)
    const answers = Array.isArray(parsed) ? parsed : [parsed]
    const byId = new Map<
      unknown,
      { result?: unknown; error?: { code?: unknown; message?: unknown; data?: unknown } }
    >()
    for (const a of answers) if (a && typeof a === 'object') byId.set((a as { id?: unknown }).id, a as never)
    // A single error without an id answers the whole batch (some gateways do that).
    const whole = answers.length === 1 && batch.length > 1 ? (answers[0] as { error?: unknown }) : undefined
    batch.forEach((item, i) => {
      const answer = byId.get(ids[i]) ?? (whole?.error ? whole : undefined)
      if (!answer) {
        item.reject(new RpcRequestError('bad_body', `no answer for ${item.method} in the batch`))
      } else if (answer.error) {
        item.reject(rpcError(answer.error))
      } else if (!('result' in answer)) {
        item.reject(new RpcRequestError('bad_body', `answer for ${item.method} has no result`))
      } else {
        item.resolve(answer.result)
      }
    })
  }
}

function rpcError(error: { code?: unknown; message?: unknown; data?: unknown }): RpcRequestError {
  const code = typeof error.code === 'number' ? error.code : undefined
  const message = typeof error.message === 'string' ? error.message : JSON.stringify(error)
  const rateLimited =
    code === 429 ||
    /rate.?limit|rate exceeded|too many requests|exceeded .*(capacity|quota)|throughput/i.test(message)
  return new RpcRequestError(rateLimited ? 'rate_limited' : 'rpc', `RPC error ${code ?? '?'}: ${message}`, {
    code,
    data: error.data,
  })
}

/** The body's bytes; one larger than `maxBytes` is refused as it arrives, with or without a Content-Length. */
async function readBody(response: Response, maxBytes: number): Promise<Buffer> {
  const tooLarge = (length: number) =>
    new RpcRequestError('too_large', `answer of ${length} bytes or more is larger than ${maxBytes}`)
  const length = Number(response.headers.get('content-length') ?? 0)
  if (length > maxBytes) {
    await response.body?.cancel()
    throw tooLarge(length)
  }
  if (!response.body) return Buffer.alloc(0)
  const chunks: Uint8Array[] = []
  let received = 0
  const reader = response.body.getReader()
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    received += read.value.byteLength
    if (received > maxBytes) {
      await reader.cancel().catch(() => undefined)
      throw tooLarge(received)
    }
    chunks.push(read.value)
  }
  return Buffer.concat(chunks, received)
}

/**
 * JSON-RPC answers are ASCII (hex quantities and data): read as one-byte
 * characters they are decoded in a fraction of UTF-8's time, and parsed
 * faster too. Anything else is decoded as UTF-8.
 */
const decode = (bytes: Buffer): string => (isAscii(bytes) ? bytes.toString('latin1') : bytes.toString('utf8'))

function parseJson(bytes: Buffer): unknown {
  const text = decode(bytes)
  try {
    return JSON.parse(text)
  } catch {
    throw new RpcRequestError('bad_body', `answer is not JSON${snippet(text)}`)
  }
}

/** Retry-After: delta-seconds or an HTTP date (RFC 9110). */
export function parseRetryAfter(value: string | null): number | undefined {
  if (!value) return undefined
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000
  const at = Date.parse(value)
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now())
}

/** The start of a body, on one line, for the log (an HTML error page says which proxy failed). */
function snippet(text: string): string {
  const flat = text
    .replace(/<[^>]*>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
  return flat ? `: ${flat.slice(0, 120)}` : ''
}
