/**
 * A small per-IP limit on nonce issuance (each nonce is a database row):
 * NONCES_PER_MINUTE per client IP in a fixed one-minute window, per process.
 * Sign-in is rare, so this is generous for people and tight for scripts.
 * An IPv6 client counts by its /64, as in /v1's limits (docs/auth.md).
 */
import { ipSubject } from '@/server/ratelimit/ip'
import { FixedWindowCounter } from './fixed-window'

export const NONCES_PER_MINUTE = 20

const nonces = new FixedWindowCounter(NONCES_PER_MINUTE, 60_000)

export function allowNonceRequest(ip: string, now = Date.now()): { allowed: boolean; retryAfterS: number } {
  return nonces.take(ipSubject(ip), now)
}
