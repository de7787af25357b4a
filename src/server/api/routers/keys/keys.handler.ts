/** The portal's key management for the signed-in user (cal.com style: handlers testable without tRPC). */

import type { z } from 'zod'
import type { PortalContext } from '@/server/api/portal/trpc'
import { createApiKey, listApiKeys, revokeApiKey, rotateApiKey } from '@/server/auth/api-keys'
import { type Actor, listAuditEvents } from '@/server/auth/audit'
import { readKeyUsage } from '@/server/auth/key-usage'
import type { SessionUser } from '@/server/auth/session-user'
import type {
  auditEventsInput,
  createKeyInput,
  keyUsageInput,
  revokeKeyInput,
  rotateKeyInput,
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

export const auditEvents = (ctx: UserContext, input: z.infer<typeof auditEventsInput>) =>
  listAuditEvents(ctx.db, ctx.user.id, input)

export const keyUsage = (ctx: UserContext, input: z.infer<typeof keyUsageInput>) =>
  readKeyUsage(ctx.db, ctx.user.id, BigInt(input.id))
