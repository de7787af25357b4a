import { z } from 'zod'
import { MAX_ALLOWED_ORIGINS, MAX_ORIGIN_LENGTH } from '@/lib/origins'
import { SCOPES } from '@/lib/scopes'
import { MAX_GRACE_SECONDS } from '@/server/api/portal/keys/api-keys'
import { AUDIT_ACTIONS } from '@/server/portal-auth/audit'

/** Ids are PostgreSQL bigints: a larger number is bad input here, not an error in the database. */
const INT64_MAX = 9223372036854775807n
// abort: the range check runs only on digits (zod goes on after a failed check, and BigInt('abc') throws).
const keyId = z
  .string()
  .regex(/^[1-9][0-9]{0,18}$/, { message: 'must be a key id', abort: true })
  .refine((v) => BigInt(v) <= INT64_MAX, 'must be a key id')

export const createKeyInput = z.strictObject({
  name: z.string().trim().min(1, 'must not be empty').max(64, 'must be at most 64 characters'),
  /** Default: all six read scopes. */
  scopes: z.array(z.enum(SCOPES)).min(1).max(SCOPES.length).optional(),
  /** Browser origins allowed to use the key (empty by default: server-side only). */
  allowed_origins: z
    .array(z.string().max(MAX_ORIGIN_LENGTH, `an origin has at most ${MAX_ORIGIN_LENGTH} characters`))
    .max(MAX_ALLOWED_ORIGINS, `at most ${MAX_ALLOWED_ORIGINS} origins per key`)
    .optional(),
})

/** New scopes and/or allowed origins of a key, checked as at creation (at least one of the two). */
export const updateKeyInput = z
  .strictObject({
    id: keyId,
    scopes: createKeyInput.shape.scopes,
    allowed_origins: createKeyInput.shape.allowed_origins,
  })
  .refine((u) => u.scopes !== undefined || u.allowed_origins !== undefined, {
    message: 'give scopes, allowed_origins or both',
  })

export const rotateKeyInput = z.strictObject({
  id: keyId,
  /** How long the old secret keeps working: 0 (default) = stops at once; at most 7 days. */
  grace_seconds: z.number().int().min(0).max(MAX_GRACE_SECONDS).optional(),
})

export const revokeKeyInput = z.strictObject({ id: keyId })

export const keyUsageInput = z.strictObject({ id: keyId })

/** The audit trail starts with the service: an earlier instant (year 0000 among them, which PostgreSQL rejects) is a mistake. */
const EARLIEST_AUDIT_TIME = Date.parse('1970-01-01T00:00:00Z')

const auditTime = z.iso
  .datetime({ offset: true })
  .refine((t) => Date.parse(t) >= EARLIEST_AUDIT_TIME, { message: 'must not be before 1970-01-01' })

/** Which events: one key's, one action's, from (inclusive) to (exclusive) — the list's and the export's. */
const auditFilter = {
  key_id: keyId.optional(),
  action: z.enum(AUDIT_ACTIONS).optional(),
  from: auditTime.optional(),
  to: auditTime.optional(),
}

const fromBeforeTo = (f: { from?: string | undefined; to?: string | undefined }) =>
  !f.from || !f.to || Date.parse(f.from) < Date.parse(f.to)
const FROM_BEFORE_TO = { message: 'from must be before to', path: ['to'] }

export const auditEventsInput = z
  .strictObject({
    limit: z.number().int().min(1).max(100).default(20),
    /** next_cursor of the previous page. */
    cursor: keyId.optional(),
    ...auditFilter,
  })
  .refine(fromBeforeTo, FROM_BEFORE_TO)
  .default({ limit: 20 })

export const auditExportInput = z
  .strictObject({ format: z.enum(['csv', 'json']), ...auditFilter })
  .refine(fromBeforeTo, FROM_BEFORE_TO)
