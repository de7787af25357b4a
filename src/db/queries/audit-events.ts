/**
 * audit_events: writing an event (and trimming the user's trail) and reading
 * a page of a user's trail. What an event says is decided by the services
 * (src/server/portal-auth/audit.ts).
 */
import type { Database } from '@/db/database'
import type { Prisma } from '@/db/generated/client'
import type { Tx } from './transaction'

export interface AuditEventRow {
  userId: bigint
  walletAddress: string
  action: string
  keyId: bigint | null
  keyPrefix: string | null
  clientIp: string | null
  userAgent: string | null
  details: Prisma.InputJsonValue | undefined
  /** Absent: the database's now(). */
  createdAt?: Date
}

export interface AuditEventRecord {
  id: bigint
  action: string
  walletAddress: string
  keyId: bigint | null
  keyPrefix: string | null
  clientIp: string | null
  userAgent: string | null
  details: Prisma.JsonValue
  createdAt: Date
}

/** Which of a user's events: one key's, one action's, within [from, to). Every field optional. */
export interface AuditEventFilter {
  keyId?: bigint | undefined
  action?: string | undefined
  from?: Date | undefined
  /** Exclusive. */
  to?: Date | undefined
}

/**
 * Inserts an event, then deletes the user's events older than the newest `keep.count` among
 * those of `keep.apart` (an action trimmed on its own) when the event is one, else among all
 * the others: the two never push each other out.
 */
async function insertAuditEvent(
  tx: Tx,
  row: AuditEventRow,
  keep: { count: number; apart: string },
): Promise<void> {
  await tx.auditEvent.create({ data: row })
  const own = row.action === keep.apart
  await tx.$executeRaw`
    DELETE FROM audit_events
    WHERE user_id = ${row.userId} AND (action = ${keep.apart}) = ${own}
      AND id <= (SELECT id FROM audit_events WHERE user_id = ${row.userId} AND (action = ${keep.apart}) = ${own}
                 ORDER BY id DESC OFFSET ${keep.count} LIMIT 1)`
}

export const auditEventStatements = { insertAuditEvent }

function auditWhere(userId: bigint, filter: AuditEventFilter): Prisma.AuditEventWhereInput {
  return {
    userId,
    ...(filter.keyId !== undefined ? { keyId: filter.keyId } : {}),
    ...(filter.action ? { action: filter.action } : {}),
    ...(filter.from || filter.to
      ? {
          createdAt: {
            ...(filter.from ? { gte: filter.from } : {}),
            ...(filter.to ? { lt: filter.to } : {}),
          },
        }
      : {}),
  }
}

/** Up to `take` of a user's events, newest first, with ids below `beforeId` when given. */
export function findAuditEvents(
  db: Database,
  userId: bigint,
  filter: AuditEventFilter,
  page: { take: number; beforeId?: bigint | undefined },
): Promise<AuditEventRecord[]> {
  return db.prisma.auditEvent.findMany({
    where: {
      ...auditWhere(userId, filter),
      ...(page.beforeId !== undefined ? { id: { lt: page.beforeId } } : {}),
    },
    orderBy: { id: 'desc' },
    take: page.take,
  })
}
