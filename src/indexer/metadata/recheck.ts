import type { MetadataOutcome } from './outcome'

/**
 * Settled outcomes that can change with time, and when they are checked
 * again (docs/metadata.md, "Freshness"). A host that timed out or answered an
 * error may come back; a contract whose tokenURI reverted, was empty or named
 * no known scheme may reveal later; a document that was not JSON (or was an
 * image) may be fixed. Final for good: `blocked_address` (the URI points at a
 * private network: a safety decision, not a state of the host) and
 * `too_large` (a document over the cap is a hostile or broken host's; fetching
 * a megabyte again and again gains nothing).
 */
export const RECHECKED_OUTCOMES: ReadonlySet<MetadataOutcome> = new Set<MetadataOutcome>([
  'timeout',
  'http_error',
  'invalid_json',
  'unsupported_type',
  'uri_reverted',
  'invalid_uri',
])

const HOUR = 3_600_000
/** Waits between re-checks: 1 h, 6 h, 24 h, then weekly. */
export const RECHECK_DELAYS_MS = [HOUR, 6 * HOUR, 24 * HOUR, 7 * 24 * HOUR]

/**
 * When a token that settled on `outcome` is tried again, or null (final).
 * The schedule counts the token's attempts past its quick retries (the first
 * attempt for outcomes that have none): its first re-check comes after
 * delays[0], the next after delays[1], …, the last delay repeating. Up to a
 * tenth more, at random, so a collection's tokens do not all come back at once.
 */
export function recheckAt(
  outcome: MetadataOutcome,
  attemptsAfter: number,
  quickAttempts: number,
  delays: readonly number[] = RECHECK_DELAYS_MS,
  now = Date.now(),
): Date | null {
  if (!RECHECKED_OUTCOMES.has(outcome) || delays.length === 0) return null
  const step = Math.min(Math.max(0, attemptsAfter - quickAttempts), delays.length - 1)
  const wait = delays[step]!
  return new Date(now + wait + wait * 0.1 * Math.random())
}
