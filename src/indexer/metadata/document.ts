import { FetchFailure } from './outcome'
import { type Gateways, resolveUri } from './resolve-uri'
import { hostKey, safeFetch } from './safe-fetch'
import { sniffMediaType } from './sniff'

export interface FetchLimits {
  gateways: Gateways
  /** host:port entries that may be private (FETCH_ALLOW_HOSTS plus the configured gateways). */
  allowHosts: ReadonlySet<string>
  timeoutMs: number
  maxMetadataBytes: number
  maxMediaBytes: number
  signal?: AbortSignal
}

/** Bytes behind a URI (data: decoded in place, everything else fetched safely). */
export async function loadUriBytes(uri: string, maxBytes: number, limits: FetchLimits): Promise<Buffer> {
  const resolved = resolveUri(uri, limits.gateways, maxBytes)
  if (resolved.kind === 'inline') return resolved.bytes
  const result = await safeFetch(resolved.url, {
    maxBytes,
    timeoutMs: limits.timeoutMs,
    allowHosts: limits.allowHosts,
    signal: limits.signal,
  })
  return result.bytes
}

/** A metadata document: a JSON object, else a named failure. */
export async function fetchMetadataJson(uri: string, limits: FetchLimits): Promise<Record<string, unknown>> {
  const bytes = await loadUriBytes(uri, limits.maxMetadataBytes, limits)
  const type = sniffMediaType(bytes)
  if (type !== 'application/json' && type !== 'text/plain') {
    throw new FetchFailure('unsupported_type', `Metadata is ${type}, not JSON`)
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(bytes.toString('utf8').replace(/^\uFEFF/, ''))
  } catch (err) {
    throw new FetchFailure('invalid_json', 'Metadata is not valid JSON', false, err)
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new FetchFailure('invalid_json', 'Metadata JSON is not an object')
  }
  return sanitizeJson(parsed) as Record<string, unknown>
}

/** jsonb rejects \u0000; strip it everywhere (keys included). */
function sanitizeJson(value: unknown, depth = 0): unknown {
  if (depth > 64) return null
  if (typeof value === 'string') return value.replaceAll('\u0000', '')
  if (Array.isArray(value)) return value.map((v) => sanitizeJson(v, depth + 1))
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value)) out[k.replaceAll('\u0000', '')] = sanitizeJson(v, depth + 1)
    return out
  }
  return value
}

/** Image location declared by metadata: image, else image_url, else inline SVG image_data. */
export function imageOf(doc: Record<string, unknown>): string | null {
  for (const key of ['image', 'image_url', 'imageUrl']) {
    const v = doc[key]
    if (typeof v === 'string' && v.trim()) return v.trim()
  }
  const svg = doc.image_data
  if (typeof svg === 'string' && svg.trim().startsWith('<') && svg.length <= 256 * 1024) {
    return `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}`
  }
  return null
}

export function gatewayHosts(gateways: Gateways): string[] {
  return [gateways.ipfs, gateways.arweave].filter((g) => URL.canParse(g)).map((g) => hostKey(new URL(g)))
}
