/**
 * The audit trail shown in the portal: sign-ins (written by the portal's
 * sign-in) and key changes (written here, in the same transaction as the
 * change). Newest first, keyset-paged by id.
 */

import type { Database } from '@/db/database'
import type { Prisma } from '@/db/generated/client'

export type AuditAction = 'sign_in' | 'key_created' | 'key_rotated' | 'key_revoked'

/** Who did it and from where. */
export interface Actor {
  userId: bigint
  /** Lowercase wallet address. */
  address: string
  clientIp?: string | null
  userAgent?: string | null
}

export async function writeAuditEvent(
  tx: Prisma.TransactionClient,
  actor: Actor,
  event: {
    action: AuditAction
    keyId?: bigint
    keyPrefix?: string
    details?: Prisma.InputJsonValue
    at?: Date
  },
): Promise<void> {
  await tx.auditEvent.create({
    data: {
      userId: actor.userId,
      walletAddress: actor.address,
      action: event.action,
      keyId: event.keyId ?? null,
      keyPrefix: event.keyPrefix ?? null,
      clientIp: actor.clientIp ?? null,
      userAgent: actor.userAgent?.slice(0, 512) ?? null,
      details: event.details,
      ...(event.at ? { createdAt: event.at } : {}),
    },
  })
}

export interface AuditEventView {
  id: string
  action: string
  wallet_address: string
  key_id: string | null
  key_prefix: string | null
  client_ip: string | null
  user_agent: string | null
  details: unknown
  created_at: string
}

/** One page of a user's audit events, newest first; `cursor` is the last id of the previous page. */
export async function listAuditEvents(
  db: Database,
  userId: bigint,
  page: { limit: number; cursor?: string | undefined },
): Promise<{ items: AuditEventView[]; next_cursor: string | null }> {
  const rows = await db.prisma.auditEvent.findMany({
    where: { userId, ...(page.cursor ? { id: { lt: BigInt(page.cursor) } } : {}) },
    orderBy: { id: 'desc' },
    take: page.limit + 1,
  })
  const more = rows.length > page.limit
  const items = rows.slice(0, page.limit).map((r) => ({
    id: r.id.toString(),
    action: r.action,
    wallet_address: r.walletAddress,
    key_id: r.keyId?.toString() ?? null,
    key_prefix: r.keyPrefix,
    client_ip: r.clientIp,
    user_agent: r.userAgent,
    details: r.details ?? null,
    created_at: r.createdAt.toISOString(),
  }))
  return { items, next_cursor: more ? items[items.length - 1]!.id : null }
}
