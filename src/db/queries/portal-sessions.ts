/** portal_sessions: the server-side state of portal sign-ins (src/server/portal-auth/portal-sessions.ts). */
import type { Database } from '@/db/database'
import type { Tx } from './transaction'

export interface PortalSessionRow {
  id: string
  userId: bigint
  createdAt: Date
  expiresAt: Date
  clientIp: string | null
  userAgent: string | null
}

export interface PortalSessionRecord {
  expiresAt: Date
  revokedAt: Date | null
  user: { id: bigint; address: string }
}

/** A session by id, with its user; null when unknown. */
export function findSessionWithUser(db: Database, sessionId: string): Promise<PortalSessionRecord | null> {
  return db.prisma.portalSession.findUnique({
    where: { id: sessionId },
    select: { expiresAt: true, revokedAt: true, user: { select: { id: true, address: true } } },
  })
}

async function insertSession(tx: Tx, row: PortalSessionRow): Promise<void> {
  await tx.portalSession.create({ data: row })
}

async function deleteSessionsExpiredBefore(tx: Tx, before: Date): Promise<void> {
  await tx.portalSession.deleteMany({ where: { expiresAt: { lt: before } } })
}

/** Revokes a session still live at `now`; its user, or undefined when it was not live. */
async function revokeLiveSession(
  tx: Tx,
  sessionId: string,
  now: Date,
): Promise<{ user_id: bigint; address: string } | undefined> {
  const rows = await tx.$queryRaw<{ user_id: bigint; address: string }[]>`
      UPDATE portal_sessions s SET revoked_at = ${now}
      FROM users u
      WHERE s.id = ${sessionId} AND s.revoked_at IS NULL AND s.expires_at > ${now} AND u.id = s.user_id
      RETURNING s.user_id, u.address`
  return rows[0]
}

/** Revokes every session of a user still live at `now`; how many. */
async function revokeLiveSessionsOfUser(tx: Tx, userId: bigint, now: Date): Promise<number> {
  const { count } = await tx.portalSession.updateMany({
    where: { userId, revokedAt: null, expiresAt: { gt: now } },
    data: { revokedAt: now },
  })
  return count
}

export const portalSessionStatements = {
  insertSession,
  deleteSessionsExpiredBefore,
  revokeLiveSession,
  revokeLiveSessionsOfUser,
}
