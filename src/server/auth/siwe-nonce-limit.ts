/**
 * A small per-IP limit on nonce issuance (each nonce is a database row):
 * NONCES_PER_MINUTE per client IP in a fixed one-minute window, per process.
 * Sign-in is rare, so this is generous for people and tight for scripts.
 */
export const NONCES_PER_MINUTE = 20
const WINDOW_MS = 60_000
const MAX_TRACKED = 10_000

const windows = new Map<string, { start: number; count: number }>()

export function allowNonceRequest(ip: string, now = Date.now()): { allowed: boolean; retryAfterS: number } {
  if (windows.size > MAX_TRACKED) {
    for (const [key, w] of windows) if (now - w.start >= WINDOW_MS) windows.delete(key)
  }
  let w = windows.get(ip)
  if (!w || now - w.start >= WINDOW_MS) {
    w = { start: now, count: 0 }
    windows.set(ip, w)
  }
  if (w.count >= NONCES_PER_MINUTE) {
    return { allowed: false, retryAfterS: Math.max(1, Math.ceil((w.start + WINDOW_MS - now) / 1000)) }
  }
  w.count += 1
  return { allowed: true, retryAfterS: 0 }
}
