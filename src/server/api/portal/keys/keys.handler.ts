/** The portal's key management for the signed-in user (cal.com style: handlers testable without tRPC). */

import type { z } from 'zod'
import {
  createApiKey,
  listApiKeys,
  revokeApiKey,
  rotateApiKey,
  updateApiKey,
} from '@/server/api/portal/keys/api-keys'
import type { PortalContext } from '@/server/api/trpc/portal'
import { readKeyUsage } from '@/server/credentials/key-usage'
import { type Actor, type AuditFilter, listAuditEvents } from '@/server/portal-auth/audit'
import type { SessionUser } from '@/server/portal-auth/session-user'
import type {
  auditEventsInput,
  auditExportInput,
  createKeyInput,
  keyUsageInput,
  revokeKeyInput,
  rotateKeyInput,
  updateKeyInput,
} from './keys.schema'

type UserContext = Omit<PortalContext, 'user'> & { user: SessionUser }

function actor(ctx: UserContext): Actor {
  return { userId: ctx.user.id, address: ctx.user.address, clientIp: ctx.clientIp, userAgent: ctx.userAgent }
}

export const listKeys = (ctx: UserContext) => listApiKeys(ctx.db, ctx.user.id)

export const createKey = (ctx: UserContext, input: z.infer<typeof createKeyInput>) =>
  createApiKey(ctx.db, actor(ctx), {
    name: input.name,
    scopes: input.scopes,
    allowedOrigins: input.allowed_origins,
  })

export async function updateKey(ctx: UserContext, input: z.infer<typeof updateKeyInput>) {
  const result = await updateApiKey(ctx.db, actor(ctx), {
    keyId: BigInt(input.id),
    scopes: input.scopes,
    allowedOrigins: input.allowed_origins,
  })
  ctx.credentials.clear()
  return result
}

export async function rotateKey(ctx: UserContext, input: z.infer<typeof rotateKeyInput>) {
  const result = await rotateApiKey(ctx.db, actor(ctx), {
    keyId: BigInt(input.id),
    graceSeconds: input.grace_seconds,
  })
  ctx.credentials.clear()
  return result
}

export async function revokeKey(ctx: UserContext, input: z.infer<typeof revokeKeyInput>) {
  const result = await revokeApiKey(ctx.db, actor(ctx), { keyId: BigInt(input.id) })
  ctx.credentials.clear()
  return result
}

/** The procedures' filter fields as the audit module's filter (the list's and the export's). */
export function auditFilter(input: Omit<z.infer<typeof auditExportInput>, 'format'>): AuditFilter {
  return {
    keyId: input.key_id ? BigInt(input.key_id) : undefined,
    action: input.action,
    from: input.from ? new Date(input.from) : undefined,
    to: input.to ? new Date(input.to) : undefined,
  }
}

export const auditEvents = (ctx: UserContext, input: z.infer<typeof auditEventsInput>) =>
  listAuditEvents(ctx.db, ctx.user.id, input, auditFilter(input))

export const keyUsage = (ctx: UserContext, input: z.infer<typeof keyUsageInput>) =>
  readKeyUsage(ctx.db, ctx.user.id, BigInt(input.id))
