/**
 * Rate-limit response headers.
 *
 * Every limited response carries the pair of draft-ietf-httpapi-ratelimit-headers-11:
 *   RateLimit-Policy: "sec";q=5;w=1, "min";q=300;w=60
 *   RateLimit: "min";r=297;t=42
 * RateLimit names the policy closest to exhaustion (lowest share of its
 * quota left), `r` the requests left in it and `t` the whole seconds until
 * its oldest counted request leaves the window (when one more unit comes back).
 *
 * A 429 adds Retry-After and RateLimit-Reset, both integer seconds (RFC 9110
 * delta-seconds) until a request can succeed.
 */
import type { LimitDecision, WindowState } from './policy'

export const RATE_LIMIT_HEADER_NAMES = ['RateLimit', 'RateLimit-Policy', 'RateLimit-Reset', 'Retry-After']

const seconds = (ms: number) => Math.max(0, Math.ceil(ms / 1000))

interface Named extends WindowState {
  label: string
}

/**
 * Headers for the decisions taken for one request (client IP, then credential).
 * Windows of identical shape (same name, quota and width) are one policy in
 * the header, reported by the more used of them; a differing IP window is
 * listed as "ip-<name>".
 */
export function rateLimitHeaders(
  decisions: { scope: 'ip' | 'credential'; decision: LimitDecision }[],
): Record<string, string> {
  const named = new Map<string, Named>()
  const hasCredential = decisions.some((d) => d.scope === 'credential')
  // Credential windows first, so their names win.
  const ordered = [...decisions].sort((a, b) => (a.scope === b.scope ? 0 : a.scope === 'credential' ? -1 : 1))
  for (const { scope, decision } of ordered) {
    for (const w of decision.windows) {
      const same = named.get(w.name)
      let label = w.name
      if (
        scope === 'ip' &&
        hasCredential &&
        same &&
        (same.limit !== w.limit || same.windowMs !== w.windowMs)
      ) {
        label = `ip-${w.name}`
      }
      const current = named.get(label)
      if (
        !current ||
        w.remaining < current.remaining ||
        (w.remaining === current.remaining && w.resetMs > current.resetMs)
      ) {
        named.set(label, { ...w, label })
      }
    }
  }
  if (named.size === 0) return {}
  const all = [...named.values()]
  const policy = all.map((w) => `"${w.label}";q=${w.limit};w=${seconds(w.windowMs)}`).join(', ')
  // Closest to exhaustion: lowest remaining share; on a tie the one that resets later.
  const closest = all.reduce((a, b) => {
    const ra = a.remaining / a.limit
    const rb = b.remaining / b.limit
    return rb < ra || (rb === ra && b.resetMs > a.resetMs) ? b : a
  })
  return {
    'RateLimit-Policy': policy,
    RateLimit: `"${closest.label}";r=${closest.remaining};t=${seconds(closest.resetMs)}`,
  }
}

/** Retry-After and RateLimit-Reset for a refusal: whole seconds, at least 1. */
export function retryHeaders(retryAfterMs: number): Record<string, string> {
  const s = String(Math.max(1, seconds(retryAfterMs)))
  return { 'Retry-After': s, 'RateLimit-Reset': s }
}
