import { FetchFailure } from './outcome'

export interface Gateways {
  ipfs: string
  arweave: string
}

/** Where a URI's bytes come from: a fetch, or inline in a data: URI. */
export type ResolvedUri =
  | { kind: 'fetch'; url: string; viaGateway: boolean }
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
    return { kind: 'fetch', url: joinGateway(gateways.ipfs, path), viaGateway: true }
  }
  if (lower.startsWith('ar://')) {
    const path = uri.slice('ar://'.length)
    if (!/^[A-Za-z0-9_-]{43}(\/.*)?$/.test(path))
      throw new FetchFailure('invalid_uri', 'ar:// without a transaction id')
    return { kind: 'fetch', url: joinGateway(gateways.arweave, path), viaGateway: true }
  }
  if (CID.test(uri)) return { kind: 'fetch', url: joinGateway(gateways.ipfs, uri), viaGateway: true }
  if (lower.startsWith('http://') || lower.startsWith('https://')) {
    if (!URL.canParse(uri)) throw new FetchFailure('invalid_uri', 'Malformed http(s) URL')
    return { kind: 'fetch', url: new URL(uri).toString(), viaGateway: false }
  }
  throw new FetchFailure('invalid_uri', `Unsupported URI scheme: ${JSON.stringify(uri.slice(0, 40))}`)
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
    const clean = payload.replace(/\s+/g, '')
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
