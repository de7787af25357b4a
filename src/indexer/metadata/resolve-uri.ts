import { FetchFailure } from './outcome'

/** IPFS_GATEWAY / ARWEAVE_GATEWAY: one gateway, or several separated by commas (tried in order). */
export interface Gateways {
  ipfs: string | readonly string[]
  arweave: string | readonly string[]
}

/** The gateways of a setting, in order. */
export function gatewayList(value: string | readonly string[]): string[] {
  return (typeof value === 'string' ? value.split(',') : [...value]).map((g) => g.trim()).filter(Boolean)
}

/** Where a URI's bytes come from: a fetch (`urls`: the same bytes through each gateway, in order), or inline. */
export type ResolvedUri =
  | { kind: 'fetch'; url: string; urls: string[]; viaGateway: boolean }
  | { kind: 'inline'; bytes: Buffer; declaredType: string }

const CID = /^(Qm[1-9A-HJ-NP-Za-km-z]{44}|b[a-z2-7]{58,})(\/.*)?$/

/**
 * Turns a token or contract URI into something fetchable: ipfs:// and bare
 * CIDs via IPFS_GATEWAY, ar:// via ARWEAVE_GATEWAY, data: (base64 or
 * percent-encoded) decoded in place, http(s) as is. Anything else is invalid.
 */
export function resolveUri(raw: string, gateways: Gateways, maxInlineBytes = 1024 * 1024): ResolvedUri {
  const uri = raw.trim()
  if (uri.length === 0) throw new FetchFailure('invalid_uri', 'Empty URI')
  const lower = uri.slice(0, 16).toLowerCase()
  if (lower.startsWith('data:')) return decodeDataUri(uri, maxInlineBytes)
  if (lower.startsWith('ipfs://')) {
    const path = uri.slice('ipfs://'.length).replace(/^ipfs\//i, '')
    if (!path) throw new FetchFailure('invalid_uri', 'ipfs:// without a CID')
    return viaGateways(gateways.ipfs, path)
  }
  if (lower.startsWith('ar://')) {
    const path = uri.slice('ar://'.length)
    if (!/^[A-Za-z0-9_-]{43}(\/.*)?$/.test(path))
      throw new FetchFailure('invalid_uri', 'ar:// without a transaction id')
    return viaGateways(gateways.arweave, path)
  }
  if (CID.test(uri)) return viaGateways(gateways.ipfs, uri)
  if (lower.startsWith('http://') || lower.startsWith('https://')) {
    if (!URL.canParse(uri)) throw new FetchFailure('invalid_uri', 'Malformed http(s) URL')
    const url = new URL(uri).toString()
    return { kind: 'fetch', url, urls: [url], viaGateway: false }
  }
  throw new FetchFailure('invalid_uri', `Unsupported URI scheme: ${JSON.stringify(uri.slice(0, 40))}`)
}

function viaGateways(gateways: string | readonly string[], path: string): ResolvedUri {
  const urls = gatewayList(gateways).map((g) => joinGateway(g, path))
  if (urls.length === 0) throw new FetchFailure('invalid_uri', 'No gateway configured')
  return { kind: 'fetch', url: urls[0]!, urls, viaGateway: true }
}

function joinGateway(gateway: string, path: string): string {
  const url = `${gateway.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`
  if (!URL.canParse(url)) throw new FetchFailure('invalid_uri', 'URI does not form a valid gateway URL')
  return url
}

/** RFC 2397: data:[<mediatype>][;base64],<data>. */
export function decodeDataUri(uri: string, maxBytes: number): ResolvedUri {
  const comma = uri.indexOf(',')
  if (comma < 0) throw new FetchFailure('invalid_uri', 'data: URI without a comma')
  const header = uri.slice(5, comma)
  const payload = uri.slice(comma + 1)
  const params = header.split(';').map((p) => p.trim())
  const isBase64 = params.some((p) => p.toLowerCase() === 'base64')
  const declaredType = params[0]?.includes('/') ? params[0].toLowerCase() : 'text/plain'
  // Base64 expands 3 bytes to 4 characters: reject oversize before decoding.
  if ((isBase64 ? (payload.length * 3) / 4 : payload.length) > maxBytes) {
    throw new FetchFailure('too_large', `data: URI exceeds ${maxBytes} bytes`)
  }
  let bytes: Buffer
  if (isBase64) {
    // RFC 2397 data is URL-encoded, base64 too (a valid URI cannot hold raw spaces).
    let clean = payload
    if (payload.includes('%')) {
      try {
        clean = decodeURIComponent(payload)
      } catch {
        // Left as is: the base64 check below names it.
      }
    }
    clean = clean.replace(/\s+/g, '')
    if (!/^[A-Za-z0-9+/\-_]*={0,2}$/.test(clean))
      throw new FetchFailure('invalid_uri', 'data: URI is not valid base64')
    bytes = Buffer.from(clean, 'base64')
  } else {
    try {
      bytes = Buffer.from(decodeURIComponent(payload), 'utf8')
    } catch {
      // Contracts often inline raw JSON with a stray '%'; take it literally.
      bytes = Buffer.from(payload, 'utf8')
    }
  }
  if (bytes.length > maxBytes) throw new FetchFailure('too_large', `data: URI exceeds ${maxBytes} bytes`)
  return { kind: 'inline', bytes, declaredType }
}

/** Characters a URI may hold as they are (RFC 3986 unreserved, reserved, and '%' of an escape). */
const URI_CHAR = /[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=]/

/**
 * A URI as clients that parse URIs accept it, pointing at the same bytes:
 * every character a URI may not hold (spaces, quotes, '<', '>', non-ASCII,
 * …) is percent-encoded as UTF-8, and a '%' that starts no escape becomes
 * %25. A percent-encoded data: URI whose escapes do not all decode is taken
 * literally (see decodeDataUri), so there every '%' becomes %25. ipfs://,
 * ar:// and bare CIDs are kept as written when they hold no such character.
 */
export function toValidUri(raw: string): string {
  const uri = raw.trim()
  if (uri.slice(0, 5).toLowerCase() !== 'data:') return encodeUriChars(uri, false)
  const comma = uri.indexOf(',')
  if (comma < 0) return encodeUriChars(uri, false)
  // Whitespace in the header, and in base64 data, carries no bytes.
  const header = uri.slice(5, comma).replace(/\s+/g, '')
  const payload = uri.slice(comma + 1)
  if (header.toLowerCase().split(';').includes('base64')) {
    return `data:${encodeUriChars(header, false)},${encodeUriChars(payload.replace(/\s+/g, ''), false)}`
  }
  let literalPercent = false
  try {
    decodeURIComponent(payload)
  } catch {
    literalPercent = true
  }
  return `data:${encodeUriChars(header, false)},${encodeUriChars(payload, literalPercent)}`
}

function encodeUriChars(text: string, literalPercent: boolean): string {
  let out = ''
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!
    if (ch === '%') {
      out += !literalPercent && /^[0-9A-Fa-f]{2}$/.test(text.slice(i + 1, i + 3)) ? '%' : '%25'
    } else if (URI_CHAR.test(ch)) {
      out += ch
    } else {
      const code = text.codePointAt(i)!
      if (code > 0xffff) i++
      // A lone surrogate becomes U+FFFD, as in any UTF-8 encoding of the text.
      for (const b of Buffer.from(String.fromCodePoint(code), 'utf8'))
        out += `%${b.toString(16).toUpperCase().padStart(2, '0')}`
    }
  }
  return out
}
