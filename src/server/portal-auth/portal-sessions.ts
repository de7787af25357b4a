/**
 * Server-side state of portal sessions (docs/auth.md, "Portal sessions").
 *
 * A sign-in creates a portal_sessions row whose random id the session JWT
 * carries. A session is live while its row is neither revoked nor past
 * expires_at — an absolute end fixed at sign-in, which no later request
 * moves. Every portal request asks the database (one primary-key lookup, no
 * cache), so a sign-out or "sign out everywhere" holds on every web process
 * from its next request on.
 */
import { randomBytes } from 'node:crypto'
import type { Database } from '@/db/database'
import { findSessionWithUser } from '@/db/queries/portal-sessions'
import { type TxQueries, withTransaction } from '@/db/queries/transaction'
import { type Actor, writeAuditEvent } from './audit'
import type { SessionUser } from './session-user'

/** A session ends this long after sign-in, however often it is used. */
export const SESSION_LIFETIME_MS = 8 * 60 * 60_000

/** Where a request came from (the audit trail's IP and user agent). */
export interface RequestMeta {
  clientIp: string | null
  userAgent: string | null
}

export interface StartedSession {
  id: string
  expiresAt: Date
}

/** Creates the session of a sign-in, inside the sign-in's transaction. */
export async function startPortalSession(
  q: TxQueries,
  userId: bigint,
  meta: RequestMeta,
  options: { now?: Date; lifetimeMs?: number } = {},
): Promise<StartedSession> {
  const now = options.now ?? new Date()
  const expiresAt = new Date(now.getTime() + (options.lifetimeMs ?? SESSION_LIFETIME_MS))
  const id = randomBytes(32).toString('base64url')
  await q.portalSessions.insertSession({
    id,
    userId,
    createdAt: now,
    expiresAt,
    clientIp: meta.clientIp,
    userAgent: meta.userAgent?.slice(0, 512) ?? null,
  })
  // Ended sessions are useless (audit_events keeps the history); keep the table small.
  await q.portalSessions.deleteSessionsExpiredBefore(now)
  return { id, expiresAt }
}

/** The user of a live session, or null when the session is unknown, revoked or over. */
export async function liveSessionUser(
  db: Database,
  sessionId: string,
  now = new Date(),
): Promise<(SessionUser & { expiresAt: Date }) | null> {
  const row = await findSessionWithUser(db, sessionId)
  if (!row || row.revokedAt || row.expiresAt.getTime() <= now.getTime()) return null
  return { id: row.user.id, address: row.user.address, expiresAt: row.expiresAt }
}

/**
 * Sign-out: revokes one session and writes `sign_out`. A session that had
 * already ended (revoked everywhere, or over) is left as it is, without an
 * event. Returns whether it was live.
 */
export async function endPortalSession(
  db: Database,
  sessionId: string,
  meta: RequestMeta,
  now = new Date(),
): Promise<boolean> {
  return withTransaction(db, async (q) => {
    const ended = await q.portalSessions.revokeLiveSession(sessionId, now)
    if (!ended) return false
    await writeAuditEvent(
      q,
      { userId: ended.user_id, address: ended.address, ...meta },
      {
        action: 'sign_out',
        at: now,
      },
    )
    return true
  })
}

/** "Sign out everywhere": revokes every live session of the user and writes `sign_out_everywhere`. */
export async function endAllPortalSessions(db: Database, actor: Actor, now = new Date()): Promise<number> {
  return withTransaction(db, async (q) => {
    const count = await q.portalSessions.revokeLiveSessionsOfUser(actor.userId, now)
    await writeAuditEvent(q, actor, { action: 'sign_out_everywhere', details: { sessions: count }, at: now })
    return count
  })
}
