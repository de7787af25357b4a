/**
 * The audit trail shown in the portal: sign-ins, refused sign-ins, sign-outs
 * (written by the portal's sessions, ./portal-sessions.ts and
 * ./sign-in-refusals.ts) and key changes (written in the same transaction as
 * the change). Newest first, keyset-paged by id, filtered by key, action and
 * time; exported whole (same filters, page by page) as CSV or JSON by
 * audit-export.ts. A user's trail keeps its newest MAX_AUDIT_EVENTS_PER_USER
 * events (docs/portal.md, "Audit filters and export").
 */

import type { Database } from '@/db/database'
import type { Prisma } from '@/db/generated/client'
import { type AuditEventFilter, type AuditEventRecord, findAuditEvents } from '@/db/queries/audit-events'
import type { TxQueries } from '@/db/queries/transaction'

export const AUDIT_ACTIONS = [
  'sign_in',
  'sign_in_refused',
  'sign_out',
  'sign_out_everywhere',
  'key_created',
  'key_updated',
  'key_rotated',
  'key_revoked',
  'token_refresh_requested',
  'collection_refresh_requested',
  'webhook_created',
  'webhook_enabled',
  'webhook_disabled',
  'webhook_secret_rotated',
  'webhook_deleted',
  'webhook_redelivered',
] as const
export type AuditAction = (typeof AUDIT_ACTIONS)[number]

/** Who did it and from where. */
export interface Actor {
  userId: bigint
  /** Lowercase wallet address. */
  address: string
  clientIp?: string | null
  userAgent?: string | null
}

/**
 * Events kept per user besides refused sign-ins: writing one more deletes the oldest, so a
 * trail (and its export) stays bounded.
 */
export const MAX_AUDIT_EVENTS_PER_USER = 10_000

/**
 * Refused sign-ins kept per user. Anyone can cause one for any address (the address is the
 * message's claim, ./sign-in-refusals.ts), so they are trimmed among themselves: a flood of
 * them replaces older refusals, never the user's own sign-ins and key changes.
 */
export const MAX_REFUSALS_PER_USER = 1_000

/** Writes an event through `q`: a transaction's queries, or autocommit(db) (@/db/queries/transaction). */
export async function writeAuditEvent(
  q: TxQueries,
  actor: Actor,
  event: {
    action: AuditAction
    keyId?: bigint
    keyPrefix?: string
    details?: Prisma.InputJsonValue
    at?: Date
  },
): Promise<void> {
  await q.auditEvents.insertAuditEvent(
    {
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
    {
      count: event.action === 'sign_in_refused' ? MAX_REFUSALS_PER_USER : MAX_AUDIT_EVENTS_PER_USER,
      apart: 'sign_in_refused',
    },
  )
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

/** Which of a user's events: one key's, one action's, within [from, to). Every field optional. */
export interface AuditFilter extends AuditEventFilter {
  action?: AuditAction | undefined
}

function auditView(r: AuditEventRecord): AuditEventView {
  return {
    id: r.id.toString(),
    action: r.action,
    wallet_address: r.walletAddress,
    key_id: r.keyId?.toString() ?? null,
    key_prefix: r.keyPrefix,
    client_ip: r.clientIp,
    user_agent: r.userAgent,
    details: r.details ?? null,
    created_at: r.createdAt.toISOString(),
  }
}

/** One page of a user's audit events, newest first; `cursor` is the last id of the previous page. */
export async function listAuditEvents(
  db: Database,
  userId: bigint,
  page: { limit: number; cursor?: string | undefined },
  filter: AuditFilter = {},
): Promise<{ items: AuditEventView[]; next_cursor: string | null }> {
  const rows = await findAuditEvents(db, userId, filter, {
    take: page.limit + 1,
    beforeId: page.cursor ? BigInt(page.cursor) : undefined,
  })
  const more = rows.length > page.limit
  const items = rows.slice(0, page.limit).map(auditView)
  return { items, next_cursor: more ? items[items.length - 1]!.id : null }
}

/** Events one read of an export takes: its cost is one such page at a time. */
export const EXPORT_PAGE_SIZE = 500
