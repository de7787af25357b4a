import http from 'node:http'
import https from 'node:https'
import { Readable, Transform, type Writable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { BlockedAddressError, guardedLookup, isAllowedHost, literalHostRefusal } from '@/net/guarded-lookup'
import { FetchFailure } from './outcome'

export interface SafeFetchOptions {
  maxBytes: number
  timeoutMs: number
  maxRedirects?: number
  /** "host:port" pairs reachable even though private (operator-configured). */
  allowHosts?: ReadonlySet<string>
  signal?: AbortSignal
  /** Time to get a connection (a dead host fails this fast); default min(timeoutMs, 5000). */
  connectTimeoutMs?: number
  /**
   * Where the body goes instead of memory (media: metadata/media-store.ts), made
   * for the final response only; the result's `bytes` are then empty. A fault
   * of the sink's own is reported as a SinkFailure and thrown as its cause.
   */
  sink?: () => Writable
}

/** How a sink fails for a fault of its own (not of the body it is given): see SafeFetchOptions.sink. */
export class SinkFailure extends Error {
  constructor(override readonly cause: unknown) {
    super('The body could not be written', { cause })
    this.name = 'SinkFailure'
  }
}

/** Writes bytes already in memory (a data: URI's) to a sink, its own faults thrown as their cause. */
export async function writeToSink(bytes: Buffer, sink: Writable): Promise<void> {
  await pipeline(Readable.from([bytes]), sink).catch((err: unknown) => {
    throw err instanceof SinkFailure ? err.cause : err
  })
}

export interface SafeFetchResult {
  /** The body; empty when it went to `sink`. */
  bytes: Buffer
  finalUrl: string
  status: number
}

/**
 * GET for URLs taken from chain data, which are hostile by assumption:
 * http(s) only; every hop's host is resolved and each resolved address
 * checked, and the socket connects to exactly the checked address (no DNS
 * rebinding between check and connect); redirects are followed by hand and
 * re-checked; the body is capped while streaming (into memory, or a sink);
 * one deadline covers all.
 */
export async function safeFetch(url: string, options: SafeFetchOptions): Promise<SafeFetchResult> {
  const deadline = AbortSignal.timeout(options.timeoutMs)
  const signal = options.signal ? AbortSignal.any([deadline, options.signal]) : deadline
  let current = url
  for (let hop = 0; ; hop++) {
    const response = await requestOnce(current, options, signal)
    if (response.redirect === undefined) return { ...response, finalUrl: current }
    if (hop >= (options.maxRedirects ?? 5))
      throw new FetchFailure('http_error', `Too many redirects from ${url}`)
    current = response.redirect
  }
}

function requestOnce(
  target: string,
  options: SafeFetchOptions,
  signal: AbortSignal,
): Promise<{ bytes: Buffer; status: number; redirect?: string }> {
  let url: URL
  try {
    url = new URL(target)
  } catch {
    throw new FetchFailure('invalid_uri', `Not a URL: ${target.slice(0, 200)}`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new FetchFailure('invalid_uri', `Scheme ${url.protocol} is not fetched`)
  }
  if (url.username || url.password)
    throw new FetchFailure('invalid_uri', 'URLs with credentials are not fetched')
  const allowed = isAllowedHost(url, options.allowHosts)
  const refusal = literalHostRefusal(url, options.allowHosts)
  if (refusal) throw new FetchFailure('blocked_address', refusal)
  const client = url.protocol === 'https:' ? https : http
  return new Promise((resolve, reject) => {
    const req = client.request(
      url,
      {
        method: 'GET',
        signal,
        lookup: allowed ? undefined : guardedLookup,
        headers: { 'user-agent': 'nft-data-service-indexer', accept: '*/*', 'accept-encoding': 'identity' },
      },
      (res) => {
        const status = res.statusCode ?? 0
        if (status >= 300 && status < 400 && res.headers.location) {
          res.resume()
          try {
            return resolve({
              bytes: Buffer.alloc(0),
              status,
              redirect: new URL(res.headers.location, url).toString(),
            })
          } catch {
            return reject(new FetchFailure('invalid_uri', 'Redirect to an invalid location'))
          }
        }
        if (status < 200 || status >= 300) {
          res.resume()
          const transient = status === 408 || status === 429 || status >= 500
          const failure = new FetchFailure('http_error', `HTTP ${status} from ${url.host}`, transient)
          failure.hostFault = status === 429 || (status >= 502 && status <= 504)
          if (status === 429 || status === 503)
            failure.retryAfterMs = retryAfterMs(res.headers['retry-after'])
          return reject(failure)
        }
        const declared = Number(res.headers['content-length'])
        if (Number.isFinite(declared) && declared > options.maxBytes) {
          res.destroy()
          return reject(
            new FetchFailure('too_large', `Body of ${declared} bytes exceeds ${options.maxBytes}`),
          )
        }
        if (options.sink) {
          let size = 0
          const capped = new Transform({
            transform(chunk: Buffer, _encoding, done) {
              size += chunk.length
              if (size > options.maxBytes)
                done(new FetchFailure('too_large', `Body exceeds ${options.maxBytes} bytes`))
              else done(null, chunk)
            },
          })
          pipeline(res, capped, options.sink()).then(
            () => resolve({ bytes: Buffer.alloc(0), status }),
            // The sink's own fault (a full disk) is the service's, not the host's: thrown as it is.
            (err: Error) => reject(err instanceof SinkFailure ? err.cause : toFailure(err, signal)),
          )
          return
        }
        const chunks: Buffer[] = []
        let size = 0
        res.on('data', (chunk: Buffer) => {
          size += chunk.length
          if (size > options.maxBytes) {
            res.destroy()
            reject(new FetchFailure('too_large', `Body exceeds ${options.maxBytes} bytes`))
            return
          }
          chunks.push(chunk)
        })
        res.on('end', () => resolve({ bytes: Buffer.concat(chunks), status }))
        res.on('error', (err) => reject(toFailure(err, signal)))
      },
    )
    req.on('error', (err) => reject(toFailure(err, signal)))
    // A dead host (no answer to SYN) fails at the connect deadline, not the document's.
    const connectMs = options.connectTimeoutMs ?? Math.min(options.timeoutMs, 5_000)
    req.on('socket', (socket) => {
      if (!socket.connecting) return
      const timer = setTimeout(() => {
        const failure = new FetchFailure('timeout', `Connecting to ${url.host} timed out`, true)
        failure.hostFault = true
        req.destroy(failure)
      }, connectMs)
      socket.once('connect', () => clearTimeout(timer))
      socket.once('close', () => clearTimeout(timer))
    })
    req.end()
  })
}

function toFailure(err: Error, signal: AbortSignal): FetchFailure {
  if (err instanceof FetchFailure) return err
  if (err instanceof BlockedAddressError) return new FetchFailure('blocked_address', err.message)
  const cause = (err as { cause?: unknown }).cause
  if (cause instanceof FetchFailure) return cause
  if (signal.aborted || err.name === 'AbortError' || err.name === 'TimeoutError') {
    const failure = new FetchFailure('timeout', 'Request timed out', true, err)
    // Our own shutdown is not the host's fault; the document deadline is.
    failure.hostFault = !(signal.reason instanceof Error && signal.reason.name === 'AbortError')
    return failure
  }
  const failure = new FetchFailure('http_error', `Request failed: ${err.message}`, true, err)
  failure.hostFault = true
  return failure
}

/** Retry-After as seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const text = Array.isArray(value) ? value[0] : value
  if (!text) return undefined
  if (/^\s*\d+\s*$/.test(text)) return Number(text) * 1000
  const at = Date.parse(text)
  return Number.isFinite(at) ? Math.max(0, at - now) : undefined
}
