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

/**
 * Headers for the decisions taken for one request (client IP, then credential).
 * Windows of identical shape (same name, quota and width) are one policy in
 * the header, reported by the more used of them; a differing IP window is
 * listed as "ip-<name>".
 */
export function rateLimitHeaders(
  decisions: { scope: 'ip' | 'credential'; decision: LimitDecision }[],
): Record<string, string> {
  // A request has at most four windows (sec and min, of its IP and of its credential): plain arrays.
  const labels: string[] = []
  const chosen: WindowState[] = []
  const hasCredential = decisions.some((d) => d.scope === 'credential')
  // Credential windows first, so their names win.
  for (const scope of ['credential', 'ip'] as const) {
    for (const d of decisions) {
      if (d.scope !== scope) continue
      for (const w of d.decision.windows) {
        let label = w.name
        const same = chosen[labels.indexOf(w.name)]
        if (
          scope === 'ip' &&
          hasCredential &&
          same &&
          (same.limit !== w.limit || same.windowMs !== w.windowMs)
        ) {
          label = `ip-${w.name}`
        }
        const at = labels.indexOf(label)
        const current = chosen[at]
        if (!current) {
          labels.push(label)
          chosen.push(w)
        } else if (
          w.remaining < current.remaining ||
          (w.remaining === current.remaining && w.resetMs > current.resetMs)
        ) {
          chosen[at] = w
        }
      }
    }
  }
  if (chosen.length === 0) return {}
  let policy = ''
  // Closest to exhaustion: lowest remaining share; on a tie the one that resets later.
  let closest = 0
  for (let i = 0; i < chosen.length; i++) {
    const w = chosen[i]!
    policy += `${i > 0 ? ', ' : ''}"${labels[i]}";q=${w.limit};w=${seconds(w.windowMs)}`
    const c = chosen[closest]!
    const share = w.remaining / w.limit
    const closestShare = c.remaining / c.limit
    if (share < closestShare || (share === closestShare && w.resetMs > c.resetMs)) closest = i
  }
  const c = chosen[closest]!
  return {
    'RateLimit-Policy': policy,
    RateLimit: `"${labels[closest]}";r=${c.remaining};t=${seconds(c.resetMs)}`,
  }
}

/** Retry-After and RateLimit-Reset for a refusal: whole seconds, at least 1. */
export function retryHeaders(retryAfterMs: number): Record<string, string> {
  const s = String(Math.max(1, seconds(retryAfterMs)))
  return { 'Retry-After': s, 'RateLimit-Reset': s }
}
