/**
 * The signed-in user's webhook endpoints (docs/push.md, "Webhooks"; portal:
 * docs/portal.md, "Webhooks"). An endpoint belongs to one of the user's active
 * keys; its signing secret is shown once, at creation and at rotation, and
 * stored sealed (src/server/credentials/webhook-secrets.ts). Every change is
 * an audit event in the same transaction. Delivery itself runs in
 * src/server/push/webhooks; a redelivery is a delivery row it queues.
 */
import type { z } from 'zod'
import { withTransaction } from '@/db/queries/transaction'
import {
  findEndpointOfUser,
  listDeliveries,
  listEndpointsOfUser,
  type WebhookDeliveryRow,
  type WebhookEndpointRow,
} from '@/db/queries/webhooks'
import type { StandardParam } from '@/lib/schemas'
import { AddressCheckBusy, webhookUrlRefusal } from '@/net/webhook-url'
import type { PortalContext } from '@/server/api/trpc/portal'
import {
  newWebhookSecret,
  sealSecret,
  secretPrefix,
  type WebhookSettings,
} from '@/server/credentials/webhook-secrets'
import { ApiError } from '@/server/errors/api-error'
import { type Actor, writeAuditEvent } from '@/server/portal-auth/audit'
import type { SessionUser } from '@/server/portal-auth/session-user'
import type {
  createWebhookInput,
  listWebhooksInput,
  redeliverInput,
  setWebhookEnabledInput,
  webhookDeliveriesInput,
  webhookIdInput,
} from './webhooks.schema'

/** Endpoints per API key. */
export const MAX_ENDPOINTS_PER_KEY = 10

type UserContext = Omit<PortalContext, 'user'> & { user: SessionUser }

const actor = (ctx: UserContext): Actor => ({
  userId: ctx.user.id,
  address: ctx.user.address,
  clientIp: ctx.clientIp,
  userAgent: ctx.userAgent,
})

function settingsOf(ctx: UserContext): WebhookSettings {
  if (!ctx.webhooks) throw new Error('webhooks: no settings in the portal context')
  return ctx.webhooks
}

export interface WebhookEndpointView {
  id: string
  key_id: string
  url: string
  collection: string | null
  event_type: string | null
  min_confirmations: number
  standard: StandardParam | null
  secret_prefix: string
  enabled: boolean
  disabled_reason: string | null
  disabled_at: string | null
  failing_since: string | null
  created_at: string
}

const view = (e: WebhookEndpointRow): WebhookEndpointView => ({
  id: e.id,
  key_id: e.key_id,
  url: e.url,
  collection: e.collection,
  event_type: e.event_type,
  min_confirmations: e.min_confirmations,
  standard: e.standard,
  secret_prefix: e.secret_prefix,
  enabled: e.enabled,
  disabled_reason: e.disabled_reason,
  disabled_at: e.disabled_at,
  failing_since: e.failing_since,
  created_at: e.created_at,
})

const notFound = () => new ApiError('NOT_FOUND', 'No such webhook endpoint.')

export async function listWebhooks(ctx: UserContext, input: z.infer<typeof listWebhooksInput>) {
  const rows = await listEndpointsOfUser(
    ctx.db,
    ctx.user.id,
    input.key_id === undefined ? undefined : BigInt(input.key_id),
  )
  return rows.map(view)
}

export async function createWebhook(ctx: UserContext, input: z.infer<typeof createWebhookInput>) {
  const settings = settingsOf(ctx)
  const refusal = await webhookUrlRefusal(input.url, settings.allowHosts).catch((err: unknown) => {
    if (!(err instanceof AddressCheckBusy)) throw err
    throw new ApiError('SERVICE_UNAVAILABLE', `${err.message} Try again in a few seconds.`, { cause: err })
  })
  if (refusal) throw new ApiError('INVALID_ARGUMENT', `url ${refusal}.`)
  const secret = newWebhookSecret()
  return withTransaction(ctx.db, async (q) => {
    const id = await q.webhooks.nextEndpointId()
    const { row, reason } = await q.webhooks.insertEndpoint({
      id,
      userId: ctx.user.id,
      keyId: BigInt(input.key_id),
      url: input.url,
      collection: input.collection ?? null,
      eventType: input.event_type ?? null,
      minConfirmations: input.min_confirmations,
      standard: input.standard ?? null,
      secretCiphertext: sealSecret(settings.sealKey, id, secret),
      secretPrefix: secretPrefix(secret),
      maxPerKey: MAX_ENDPOINTS_PER_KEY,
    })
    if (reason === 'no_key') throw new ApiError('NOT_FOUND', 'No such active key.')
    if (reason === 'limit' || !row)
      throw new ApiError('CONFLICT', `A key has at most ${MAX_ENDPOINTS_PER_KEY} webhook endpoints.`)
    await writeAuditEvent(q, actor(ctx), {
      action: 'webhook_created',
      keyId: BigInt(row.key_id),
      details: {
        endpoint_id: row.id,
        url: row.url,
        collection: row.collection,
        event_type: row.event_type,
        min_confirmations: row.min_confirmations,
        standard: row.standard,
      },
    })
    return { endpoint: view(row), secret }
  })
}

export async function setWebhookEnabled(ctx: UserContext, input: z.infer<typeof setWebhookEnabledInput>) {
  return withTransaction(ctx.db, async (q) => {
    const row = await q.webhooks.setEndpointEnabled(
      ctx.user.id,
      BigInt(input.id),
      input.enabled,
      input.enabled ? null : 'Disabled in the portal.',
    )
    if (!row) throw notFound()
    await writeAuditEvent(q, actor(ctx), {
      action: input.enabled ? 'webhook_enabled' : 'webhook_disabled',
      keyId: BigInt(row.key_id),
      details: { endpoint_id: row.id, url: row.url },
    })
    return view(row)
  })
}

export async function rotateWebhookSecret(ctx: UserContext, input: z.infer<typeof webhookIdInput>) {
  const settings = settingsOf(ctx)
  const secret = newWebhookSecret()
  const id = BigInt(input.id)
  return withTransaction(ctx.db, async (q) => {
    const row = await q.webhooks.setEndpointSecret(
      ctx.user.id,
      id,
      sealSecret(settings.sealKey, id, secret),
      secretPrefix(secret),
    )
    if (!row) throw notFound()
    await writeAuditEvent(q, actor(ctx), {
      action: 'webhook_secret_rotated',
      keyId: BigInt(row.key_id),
      details: { endpoint_id: row.id, url: row.url },
    })
    return { endpoint: view(row), secret }
  })
}

export async function deleteWebhook(ctx: UserContext, input: z.infer<typeof webhookIdInput>) {
  return withTransaction(ctx.db, async (q) => {
    const row = await q.webhooks.deleteEndpointOfUser(ctx.user.id, BigInt(input.id))
    if (!row) throw notFound()
    await writeAuditEvent(q, actor(ctx), {
      action: 'webhook_deleted',
      keyId: BigInt(row.key_id),
      details: { endpoint_id: row.id, url: row.url },
    })
    return { id: row.id, deleted: true as const }
  })
}

export interface WebhookDeliveryView {
  id: string
  event_id: string
  event_type: string
  status: WebhookDeliveryRow['status']
  attempts: number
  last_status_code: number | null
  last_error: string | null
  last_duration_ms: number | null
  next_attempt_at: string | null
  created_at: string
  updated_at: string
}

const deliveryView = (d: WebhookDeliveryRow): WebhookDeliveryView => ({
  id: d.id,
  event_id: d.event_id,
  event_type: d.event_type,
  status: d.status,
  attempts: d.attempts,
  last_status_code: d.last_status_code,
  last_error: d.last_error,
  last_duration_ms: d.last_duration_ms,
  next_attempt_at: d.next_attempt_at,
  created_at: d.created_at,
  updated_at: d.updated_at,
})

export async function webhookDeliveries(ctx: UserContext, input: z.infer<typeof webhookDeliveriesInput>) {
  const endpoint = await findEndpointOfUser(ctx.db, ctx.user.id, BigInt(input.id))
  if (!endpoint) throw notFound()
  return (await listDeliveries(ctx.db, BigInt(endpoint.id), input.limit)).map(deliveryView)
}

export async function redeliver(ctx: UserContext, input: z.infer<typeof redeliverInput>) {
  // Read before the transaction: the embedded database serves one transaction at a time.
  const endpoint = await findEndpointOfUser(ctx.db, ctx.user.id, BigInt(input.id))
  if (!endpoint) throw notFound()
  if (!endpoint.enabled) throw new ApiError('CONFLICT', 'Enable the endpoint before redelivering.')
  return withTransaction(ctx.db, async (q) => {
    const row = await q.webhooks.insertRedelivery(ctx.user.id, BigInt(input.id), BigInt(input.delivery_id))
    if (!row) throw new ApiError('NOT_FOUND', 'No such delivery of this endpoint.')
    await writeAuditEvent(q, actor(ctx), {
      action: 'webhook_redelivered',
      keyId: BigInt(endpoint.key_id),
      details: { endpoint_id: endpoint.id, event_id: row.event_id },
    })
    return deliveryView(row)
  })
}
