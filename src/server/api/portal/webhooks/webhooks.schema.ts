import { z } from 'zod'
import { STANDARDS, transferEventType } from '@/lib/schemas'
import { MAX_WEBHOOK_URL_LENGTH } from '@/net/webhook-url'

/** Ids are PostgreSQL bigints: a larger number is bad input here, not an error in the database. */
const INT64_MAX = 9223372036854775807n
const id = (what: string) =>
  z
    .string()
    .regex(/^[1-9][0-9]{0,18}$/, { message: `must be ${what}`, abort: true })
    .refine((v) => BigInt(v) <= INT64_MAX, `must be ${what}`)

export const endpointId = id('an endpoint id')

export const createWebhookInput = z.strictObject({
  key_id: id('a key id'),
  url: z.string().trim().min(1, 'must not be empty').max(MAX_WEBHOOK_URL_LENGTH),
  /** Only events of this collection (any case; stored lowercase). */
  collection: z
    .string()
    .trim()
    .regex(/^0x[0-9a-fA-F]{40}$/, 'must be a 0x-prefixed 40-hex-digit address')
    .transform((a) => a.toLowerCase())
    .optional(),
  event_type: transferEventType.optional(),
  /** Blocks on top of an event's block before it is sent (0: at once). */
  min_confirmations: z.number().int().min(0).max(64).default(0),
  /** Token standards sent, with each event's amount; absent: ERC-721 in the specification's shape. */
  standard: z.enum(STANDARDS).optional(),
})

export const listWebhooksInput = z.strictObject({ key_id: id('a key id').optional() }).default({})

export const webhookIdInput = z.strictObject({ id: endpointId })

export const setWebhookEnabledInput = z.strictObject({ id: endpointId, enabled: z.boolean() })

export const webhookDeliveriesInput = z.strictObject({
  id: endpointId,
  limit: z.number().int().min(1).max(100).default(20),
})

export const redeliverInput = z.strictObject({ id: endpointId, delivery_id: id('a delivery id') })
