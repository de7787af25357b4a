import { z } from 'zod'
import { SCOPES } from '@/lib/scopes'
import { MAX_GRACE_SECONDS } from '@/server/auth/api-keys'

/** Ids are PostgreSQL bigints: a larger number is bad input here, not an error in the database. */
const INT64_MAX = 9223372036854775807n
const keyId = z
  .string()
  .regex(/^[1-9][0-9]{0,18}$/, 'must be a key id')
  .refine((v) => BigInt(v) <= INT64_MAX, 'must be a key id')

export const createKeyInput = z.strictObject({
  name: z.string().trim().min(1, 'must not be empty').max(64, 'must be at most 64 characters'),
  /** Default: all six read scopes. */
  scopes: z.array(z.enum(SCOPES)).min(1).max(SCOPES.length).optional(),
  /** Browser origins allowed to use the key (empty by default: server-side only). */
  allowed_origins: z.array(z.string().max(200)).max(20).optional(),
})

export const rotateKeyInput = z.strictObject({
  id: keyId,
  /** How long the old secret keeps working: 0 (default) = stops at once; at most 7 days. */
  grace_seconds: z.number().int().min(0).max(MAX_GRACE_SECONDS).optional(),
})

export const revokeKeyInput = z.strictObject({ id: keyId })

export const keyUsageInput = z.strictObject({ id: keyId })

export const auditEventsInput = z
  .strictObject({
    limit: z.number().int().min(1).max(100).default(20),
    /** next_cursor of the previous page. */
    cursor: keyId.optional(),
  })
  .default({ limit: 20 })
