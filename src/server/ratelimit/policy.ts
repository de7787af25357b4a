/**
 * Rate-limit policies: sliding windows (requests per second, per minute) and
 * a number of concurrency slots, applied to one subject (a credential or a
 * client IP). Built from the configuration; the defaults are the
 * specification's table (portal key 5/s, 300/min, 10 concurrent; demo token
 * 1/s, 30/min, 2 concurrent; demo-token issuance 5/min per IP), and the
 * portal's own procedures per signed-in user and per client IP.
 */
import type { Config, RateLimitProfile } from '@/config/env'

export interface LimitWindow {
  /** Name in the RateLimit-Policy header: "sec" or "min". */
  name: string
  limit: number
  windowMs: number
}

export interface LimitPolicy {
  /** Short id, part of the store key: the same subject under two policies never shares counters. */
  id: string
  windows: LimitWindow[]
  /** Requests in flight at once; undefined = not limited. */
  concurrent?: number
}

export type PolicyName =
  | 'key'
  | 'demo'
  | 'ipKey'
  | 'ipDemo'
  | 'demoIssue'
  | 'media'
  | 'portal'
  | 'ipPortal'
  | 'ipAuth'
  | 'streamKey'
  | 'streamDemo'
  | 'streamIp'

/** Live activity streams open at once per API key and per demo token (docs/push.md, "Live stream"). */
export const STREAMS_PER_KEY = 5
export const STREAMS_PER_DEMO_TOKEN = 1

export type Policies = Record<PolicyName, LimitPolicy>

function toPolicy(id: string, profile: RateLimitProfile): LimitPolicy {
  const windows: LimitWindow[] = []
  if (profile.perSecond !== undefined) windows.push({ name: 'sec', limit: profile.perSecond, windowMs: 1000 })
  if (profile.perMinute !== undefined)
    windows.push({ name: 'min', limit: profile.perMinute, windowMs: 60_000 })
  return { id, windows, concurrent: profile.concurrent }
}

export function policiesFromConfig(config: Config): Policies {
  return {
    key: toPolicy('k', config.RATE_LIMIT_KEY),
    demo: toPolicy('d', config.RATE_LIMIT_DEMO),
    ipKey: toPolicy('ik', config.RATE_LIMIT_IP_KEY ?? config.RATE_LIMIT_KEY),
    ipDemo: toPolicy('id', config.RATE_LIMIT_IP_DEMO ?? config.RATE_LIMIT_DEMO),
    demoIssue: toPolicy('di', config.RATE_LIMIT_DEMO_ISSUE),
    media: toPolicy('m', config.RATE_LIMIT_MEDIA),
    portal: toPolicy('p', config.RATE_LIMIT_PORTAL),
    ipPortal: toPolicy('ipp', config.RATE_LIMIT_PORTAL),
    // next-auth's endpoints (session, csrf, callback, signout): the portal's numbers, a bucket of their own.
    ipAuth: toPolicy('ipa', config.RATE_LIMIT_PORTAL),
    // Open live streams per credential: slots only, held for the stream's life and renewed.
    streamKey: { id: 'sk', windows: [], concurrent: STREAMS_PER_KEY },
    streamDemo: { id: 'sd', windows: [], concurrent: STREAMS_PER_DEMO_TOKEN },
    // And per client address, over every credential: as many as its concurrent key requests.
    streamIp: {
      id: 'si',
      windows: [],
      concurrent: (config.RATE_LIMIT_IP_KEY ?? config.RATE_LIMIT_KEY).concurrent ?? STREAMS_PER_KEY,
    },
  }
}

/** The state of one window after a decision. */
export interface WindowState {
  name: string
  limit: number
  windowMs: number
  remaining: number
  /** Milliseconds until the oldest counted request leaves the window (one more unit comes back); 0 when none is counted. */
  resetMs: number
}

export interface LimitDecision {
  allowed: boolean
  windows: WindowState[]
  /** Slots in use after the decision (undefined when the policy has no concurrency limit). */
  inFlight?: number
  /** When refused: what was exhausted. */
  exceeded?: 'window' | 'concurrency'
  /** When refused: milliseconds until a request can succeed (at least 1 s for concurrency). */
  retryAfterMs: number
}
