import type { Writable } from 'node:stream'
import type { LimitFunction } from 'p-limit'
import { hostKey } from '@/net/guarded-lookup'
import { HostBackedOff, type HostScheduler } from './host-scheduler'
import { wellFormed } from './normalize'
import { FetchFailure } from './outcome'
import { type Gateways, gatewayList, resolveUri } from './resolve-uri'
import { safeFetch, writeToSink } from './safe-fetch'
import { sniffMediaType } from './sniff'

export interface FetchLimits {
  gateways: Gateways
  /** host:port entries that may be private (FETCH_ALLOW_HOSTS plus the configured gateways). */
  allowHosts: ReadonlySet<string>
  timeoutMs: number
  maxMetadataBytes: number
  maxMediaBytes: number
  /** Cap of an `animation_url`'s bytes (video is larger than images); default maxMediaBytes. */
  maxAnimationBytes?: number
  /**
   * Animation bodies read back whole at once (media-store.ts: a JSON glTF model
   * is told from other JSON by its content), each up to maxAnimationBytes; the
   * fetches themselves stream to disk. Without it, no bound.
   */
  animationSlots?: LimitFunction
  signal?: AbortSignal
  /** Fair per-host scheduling and circuit breakers; without it, fetches go out at once. */
  scheduler?: HostScheduler
}

/**
 * Bytes behind a URI (data: decoded in place, everything else fetched
 * safely, in turn with other hosts when a scheduler is given; `group` is the
 * collection, for fairness inside a host). Through gateways, each configured
 * gateway is tried in order while the previous one fails. With a `sink`
 * (media), the body is written there instead (a data: URI's bytes too) and
 * the bytes returned are empty.
 */
export async function loadUriBytes(
  uri: string,
  maxBytes: number,
  limits: FetchLimits,
  group = '',
  options: {
    /** The fetch finishes a token already in memory (its media): HostScheduler.run's `finishing`. */
    finishing?: boolean
    sink?: () => Writable
  } = {},
): Promise<Buffer> {
  const resolved = resolveUri(uri, limits.gateways, maxBytes)
  if (resolved.kind === 'inline') {
    if (!options.sink) return resolved.bytes
    await writeToSink(resolved.bytes, options.sink())
    return Buffer.alloc(0)
  }
  let failure: unknown
  // A gateway too busy to take a token's media now: said as such when no other gateway had the
  // bytes, so the token comes back for them (docs/metadata.md, "Slow media hosts").
  let busy: HostBackedOff | undefined
  for (const url of resolved.urls) {
    try {
      const fetchOnce = async () =>
        (
          await safeFetch(url, {
            maxBytes,
            timeoutMs: limits.timeoutMs,
            allowHosts: limits.allowHosts,
            signal: limits.signal,
            sink: options.sink,
          })
        ).bytes
      if (!limits.scheduler) return await fetchOnce()
      return await limits.scheduler.run(schedulingKey(url), group, fetchOnce, {
        finishing: options.finishing,
      })
    } catch (err) {
      failure = err
      if (err instanceof HostBackedOff && err.reason === 'busy') busy ??= err
      // Another gateway may have the bytes; a bad document or a refused address is the same everywhere.
      const next = err instanceof FetchFailure && (err.transient || err.outcome === 'http_error')
      if (!next || limits.signal?.aborted) break
    }
  }
  throw busy ?? failure
}

/** The host a URL's request goes to (redirects aside): host:port, lower case. */
export function schedulingKey(url: string): string {
  try {
    return hostKey(new URL(url)).toLowerCase()
  } catch {
    return ''
  }
}

/** A metadata document: a JSON object, else a named failure. */
export async function fetchMetadataJson(
  uri: string,
  limits: FetchLimits,
  group = '',
): Promise<Record<string, unknown>> {
  const bytes = await loadUriBytes(uri, limits.maxMetadataBytes, limits, group)
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

/**
 * What jsonb (and the API's JSON) can hold: \u0000 stripped everywhere (keys
 * included), unpaired surrogates replaced (`"\ud800"` is valid JSON but not
 * valid jsonb), nesting beyond 64 levels replaced by null. Keys are defined as
 * own properties, so a `__proto__` key stays a key (docs/metadata.md, "Caps").
 */
export function sanitizeJson(value: unknown, depth = 0): unknown {
  if (depth > 64) return null
  if (typeof value === 'string') return wellFormed(value.replaceAll('\u0000', ''))
  if (Array.isArray(value)) return value.map((v) => sanitizeJson(v, depth + 1))
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [
        wellFormed(k.replaceAll('\u0000', '')),
        sanitizeJson(v, depth + 1),
      ]),
    )
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
  return [...gatewayList(gateways.ipfs), ...gatewayList(gateways.arweave)]
    .filter((g) => URL.canParse(g))
    .map((g) => hostKey(new URL(g)))
}

/** host:port of each configured gateway -> the label shown for it (never its URL, which may carry a key). */
export function gatewayLabels(gateways: Gateways): Map<string, string> {
  const labels = new Map<string, string>()
  for (const [kind, list] of [
    ['ipfs', gatewayList(gateways.ipfs)],
    ['arweave', gatewayList(gateways.arweave)],
  ] as const) {
    list.forEach((g, i) => {
      if (URL.canParse(g)) labels.set(hostKey(new URL(g)).toLowerCase(), `${kind}-gateway-${i + 1}`)
    })
  }
  return labels
}
