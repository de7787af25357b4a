/**
 * Demo tokens for the try-it page: `demo_` + 32 random bytes (base64url),
 * all six read scopes, valid 15 minutes, demo limits. Only the SHA-256 hash
 * is stored, so a lost token cannot be recovered.
 */
import type { Database } from '@/db/database'
import { deleteDemoTokensExpiredBefore, insertDemoToken } from '@/db/queries/demo-tokens'
import { generateDemoToken } from './secrets'

export const DEMO_TOKEN_LIFETIME_MS = 15 * 60 * 1000
/** Expired rows are kept a day (for abuse investigation by client IP), then deleted. */
const KEEP_EXPIRED_MS = 24 * 3600 * 1000
const CLEANUP_EVERY_MS = 3600 * 1000

let lastCleanup = 0

/**
 * Issues a token valid from `now` for 15 minutes. `now` is injectable so that
 * tests can issue an already expired token through this same code.
 */
export async function issueDemoToken(
  db: Database,
  options: { clientIp: string; now?: Date },
): Promise<{ token: string; expiresAt: Date }> {
  const now = options.now ?? new Date()
  const { token, hash } = generateDemoToken()
  const expiresAt = new Date(now.getTime() + DEMO_TOKEN_LIFETIME_MS)
  await insertDemoToken(db, { tokenHash: hash, clientIp: options.clientIp, issuedAt: now, expiresAt })
  if (Date.now() - lastCleanup > CLEANUP_EVERY_MS) {
    lastCleanup = Date.now()
    deleteDemoTokensExpiredBefore(db, new Date(Date.now() - KEEP_EXPIRED_MS)).catch(() => {})
  }
  return { token, expiresAt }
}
