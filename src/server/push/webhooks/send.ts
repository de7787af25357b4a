/**
 * One webhook attempt (docs/push.md, "Webhooks"): a POST of the event's JSON
 * with the Standard Webhooks headers. The destination is hostile by
 * assumption: the SSRF guard of src/net checks the URL and every resolved
 * address, and the socket connects to exactly the checked address; redirects
 * are not followed (a 3xx is a failed attempt); one deadline covers connect,
 * answer and body, and at most `maxResponseBytes` of the answer are read.
 */
import http from 'node:http'
import https from 'node:https'
import { BlockedAddressError, guardedLookup, isAllowedHost, literalHostRefusal } from '@/net/guarded-lookup'

export interface SendOptions {
  timeoutMs: number
  maxResponseBytes: number
  allowHosts: ReadonlySet<string>
  /** The process is stopping: the attempt is cut and answers `stopped`. */
  signal?: AbortSignal
}

export interface AttemptResult {
  ok: boolean
  /** The receiver's status, null when it never answered. */
  statusCode: number | null
  /** Why the attempt failed (no secret, no body of ours). */
  error: string | null
  durationMs: number
  /** Cut because the process is stopping: not an answer of the receiver. */
  stopped?: boolean
}

export const WEBHOOK_USER_AGENT = 'nft-data-service-webhooks'

export function sendWebhook(
  target: string,
  body: string,
  headers: Record<string, string>,
  options: SendOptions,
): Promise<AttemptResult> {
  const started = performance.now()
  const done = (ok: boolean, statusCode: number | null, error: string | null): AttemptResult => ({
    ok,
    statusCode,
    error,
    durationMs: Math.round(performance.now() - started),
  })
  let url: URL
  try {
    url = new URL(target)
  } catch {
    return Promise.resolve(done(false, null, 'Not a URL'))
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return Promise.resolve(done(false, null, `Scheme ${url.protocol} is not allowed`))
  const refusal = literalHostRefusal(url, options.allowHosts)
  if (refusal) return Promise.resolve(done(false, null, refusal))
  const allowed = isAllowedHost(url, options.allowHosts)
  const client = url.protocol === 'https:' ? https : http
  return new Promise((resolve) => {
    let settled = false
    const finish = (result: AttemptResult) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      options.signal?.removeEventListener('abort', stop)
      resolve(result)
    }
    const req = client.request(url, {
      method: 'POST',
      lookup: allowed ? undefined : guardedLookup,
      headers: {
        ...headers,
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
        'user-agent': WEBHOOK_USER_AGENT,
        'accept-encoding': 'identity',
      },
    })
    const timer = setTimeout(() => {
      req.destroy()
      finish(done(false, null, `No complete answer within ${options.timeoutMs} ms`))
    }, options.timeoutMs)
    const stop = () => {
      req.destroy()
      finish({ ...done(false, null, 'The service stopped during the attempt'), stopped: true })
    }
    if (options.signal?.aborted) stop()
    else options.signal?.addEventListener('abort', stop, { once: true })
    req.on('response', (res) => {
      const status = res.statusCode ?? 0
      let size = 0
      res.on('data', (chunk: Buffer) => {
        size += chunk.length
        if (size > options.maxResponseBytes) {
          res.destroy()
          finish(done(false, status, `Answer larger than ${options.maxResponseBytes} bytes`))
        }
      })
      res.on('end', () => {
        if (status >= 200 && status < 300) finish(done(true, status, null))
        else if (status >= 300 && status < 400)
          finish(done(false, status, `HTTP ${status}: redirects are not followed`))
        else finish(done(false, status, `HTTP ${status}`))
      })
      res.on('error', (err) => finish(done(false, status, `Answer failed: ${err.message}`)))
    })
    req.on('error', (err) => {
      const message = err instanceof BlockedAddressError ? err.message : `Request failed: ${err.message}`
      finish(done(false, null, message))
    })
    req.end(body)
  })
}
