/**
 * A user name and password in an RPC_URL endpoint (`https://user:password@host/`,
 * HTTP basic auth: the usual protection of a self-hosted node or a provider's
 * proxy; src/config/env.ts accepts it, percent-encoded). fetch refuses a URL
 * that includes credentials, so they are taken out of the URL and sent as an
 * `Authorization: Basic` header instead; and since an error about a URL may
 * quote it, every error of the wire has any userinfo replaced before it can
 * reach a log line or a status page. docs/operations.md, "RPC endpoints".
 */
import { errorChain } from '../errors'

export interface RpcTarget {
  /** The URL without its userinfo: what fetch is given, and all an error may quote. */
  url: string
  /** `Basic base64(user:password)`, when the URL carried credentials. */
  authorization: string | undefined
}

/** Percent-decoded as the URL encodes it; a lone `%` not followed by hex digits is kept as it is. */
function decodeUserinfo(part: string): string {
  try {
    return decodeURIComponent(part)
  } catch {
    return part
  }
}

/** The URL to send to and the Authorization header its userinfo stands for (RFC 7617, UTF-8). */
export function splitCredentials(raw: string): RpcTarget {
  if (!URL.canParse(raw)) return { url: raw, authorization: undefined }
  const url = new URL(raw)
  if (url.username === '' && url.password === '') return { url: raw, authorization: undefined }
  const pair = `${decodeUserinfo(url.username)}:${decodeUserinfo(url.password)}`
  url.username = ''
  url.password = ''
  return { url: url.href, authorization: `Basic ${Buffer.from(pair, 'utf8').toString('base64')}` }
}

/**
 * `scheme://` then the userinfo: the authority's part up to its `@` (RFC 3986). An `@` after
 * the first `/ ? #` belongs to the path or query (`file:///…/node_modules/@scope/…` in a stack
 * trace): not userinfo. A password holding an unescaped `/ ? # @` is refused at start-up
 * (src/config/env.ts, ESCAPED_USERINFO), so it never gets here.
 */
const USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@]*@/gi

/** Text with the userinfo of any URL in it replaced by `[redacted]`. */
export function redactCredentials(text: string): string {
  return text.replace(USERINFO, '$1[redacted]@')
}

/**
 * The error itself when no message of its cause chain quotes a URL's userinfo;
 * otherwise a copy of the chain (names, messages, stacks and `code`s) with it redacted.
 */
export function withoutCredentials(err: unknown): unknown {
  if (!(err instanceof Error)) return typeof err === 'string' ? redactCredentials(err) : err
  const chain = [...errorChain(err)]
  const leaks = (e: Error) =>
    redactCredentials(e.message) !== e.message || redactCredentials(e.stack ?? '') !== (e.stack ?? '')
  if (!chain.some(leaks)) return err
  let cause: Error | undefined
  for (const e of chain.reverse()) {
    const copy = new Error(redactCredentials(e.message), cause ? { cause } : undefined)
    copy.name = e.name
    if (e.stack) copy.stack = redactCredentials(e.stack)
    const code = (e as { code?: unknown }).code
    if (code !== undefined) Object.assign(copy, { code })
    cause = copy
  }
  return cause
}
