/**
 * Portal API keys: create, list, update (scopes, origins), rotate, revoke. A key belongs to one wallet
 * user; every function here is scoped to that user, so a user can neither
 * see nor change another's keys (someone else's key id answers "not found").
 *
 * A key has one or more secrets (api_key_secrets); only SHA-256 hashes are
 * stored, and the secret itself is returned once, by create and rotate.
 * Rotation adds a new secret and ends the old ones at once or after a grace
 * period of up to 7 days. Revocation ends every secret at once. Each change
 * writes its audit event in the same transaction.
 */

import type { Database } from '@/db/database'
import { type ApiKeyRecord, findUserKeys, MAX_LIVE_SECRETS_PER_KEY } from '@/db/queries/api-keys'
import { type TxQueries, withTransaction } from '@/db/queries/transaction'
import { upsertUser } from '@/db/queries/users'
import { parseOrigin } from '@/lib/origins'
import { SCOPES, type Scope } from '@/lib/scopes'
import { generateApiKeySecret } from '@/server/credentials/secrets'
import { ApiError } from '@/server/errors/api-error'
import { type Actor, writeAuditEvent } from '@/server/portal-auth/audit'

export const MAX_ACTIVE_KEYS_PER_USER = 25
export const MAX_GRACE_SECONDS = 7 * 24 * 3600

export interface ApiKeySecretView {
  prefix: string
  created_at: string
  /** null: valid until the key is rotated or revoked. */
  expires_at: string | null
}

export interface ApiKeyView {
  id: string
  name: string
  /** Prefix of the newest secret. */
  prefix: string
  scopes: Scope[]
  allowed_origins: string[]
  status: 'active' | 'revoked'
  created_at: string
  rotated_at: string | null
  revoked_at: string | null
  last_used_at: string | null
  /** Secrets that still work (more than one during a rotation's grace period). */
  active_secrets: ApiKeySecretView[]
}

function view(row: ApiKeyRecord, now: Date): ApiKeyView {
  const newest = row.secrets.reduce<ApiKeyRecord['secrets'][number] | undefined>(
    (a, s) => (!a || s.createdAt >= a.createdAt ? s : a),
    undefined,
  )
  return {
    id: row.id.toString(),
    name: row.name,
    prefix: newest?.prefix ?? '',
    scopes: row.scopes.filter((s): s is Scope => (SCOPES as readonly string[]).includes(s)),
    allowed_origins: row.allowedOrigins,
    status: row.status === 'active' ? 'active' : 'revoked',
    created_at: row.createdAt.toISOString(),
    rotated_at: row.rotatedAt?.toISOString() ?? null,
    revoked_at: row.revokedAt?.toISOString() ?? null,
    last_used_at: row.lastUsedAt?.toISOString() ?? null,
    active_secrets:
      row.status === 'active'
        ? row.secrets
            .filter((s) => s.expiresAt === null || s.expiresAt > now)
            .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime())
            .map((s) => ({
              prefix: s.prefix,
              created_at: s.createdAt.toISOString(),
              expires_at: s.expiresAt?.toISOString() ?? null,
            }))
        : [],
  }
}

/** Normalizes an origin (`https://app.example.com[:port]`, no path); throws on anything else. */
export function normalizeOrigin(origin: string): string {
  const parsed = parseOrigin(origin)
  if ('problem' in parsed) throw new ApiError('INVALID_ARGUMENT', `'${origin}' ${parsed.problem}`)
  return parsed.origin
}

/** Scopes without repeats, in SCOPES order; at least one. */
function normalizeScopes(scopes: readonly Scope[]): Scope[] {
  const unique = [...new Set(scopes)].sort((a, b) => SCOPES.indexOf(a) - SCOPES.indexOf(b))
  if (unique.length === 0) throw new ApiError('INVALID_ARGUMENT', 'A key needs at least one scope.')
  return unique
}

function normalizeOrigins(origins: readonly string[]): string[] {
  return [...new Set(origins.map(normalizeOrigin))]
}

export async function listApiKeys(db: Database, userId: bigint, now = new Date()): Promise<ApiKeyView[]> {
  const rows = await findUserKeys(db, userId)
  return rows.map((r) => view(r, now))
}

export interface CreateKeyInput {
  name: string
  /** Default: all six read scopes. */
  scopes?: Scope[] | undefined
  /** Default: none (a key is a server-side secret; browsers are refused). */
  allowedOrigins?: string[] | undefined
}

/** Creates a key; the secret is in the result and nowhere else. */
export async function createApiKey(
  db: Database,
  actor: Actor,
  input: CreateKeyInput,
  now = new Date(),
): Promise<{ key: ApiKeyView; secret: string }> {
  const scopes = normalizeScopes(input.scopes ?? SCOPES)
  const allowedOrigins = normalizeOrigins(input.allowedOrigins ?? [])
  const { secret, prefix, hash } = generateApiKeySecret()
  const key = await withTransaction(db, async (q) => {
    const active = await q.apiKeys.lockUserAndCountActiveKeys(actor.userId)
    if (active >= MAX_ACTIVE_KEYS_PER_USER) {
      throw new ApiError(
        'INVALID_ARGUMENT',
        `At most ${MAX_ACTIVE_KEYS_PER_USER} active keys per account; revoke one first.`,
      )
    }
    const created = await q.apiKeys.insertKeyWithSecret({
      userId: actor.userId,
      name: input.name,
      scopes,
      allowedOrigins,
      createdAt: now,
      secret: { secretHash: hash, prefix },
    })
    await writeAuditEvent(q, actor, {
      action: 'key_created',
      keyId: created.id,
      keyPrefix: prefix,
      details: { name: input.name, scopes, allowed_origins: allowedOrigins },
      at: now,
    })
    return created
  })
  return { key: view(key, now), secret }
}

async function lockOwnKey(q: TxQueries, actor: Actor, keyId: bigint) {
  // Serializes concurrent rotations/revocations of one key.
  const row = await q.apiKeys.lockOwnKey(actor.userId, keyId)
  if (!row) throw new ApiError('NOT_FOUND', 'No such key.')
  return row
}

/**
 * Changes a key's scopes and/or allowed origins (validated as at creation),
 * audited with the values before and after. The caller clears its
 * credential cache; other processes see the change within CREDENTIAL_CACHE_MS.
 */
export async function updateApiKey(
  db: Database,
  actor: Actor,
  input: { keyId: bigint; scopes?: Scope[] | undefined; allowedOrigins?: string[] | undefined },
  now = new Date(),
): Promise<{ key: ApiKeyView }> {
  const scopes = input.scopes && normalizeScopes(input.scopes)
  const allowedOrigins = input.allowedOrigins && normalizeOrigins(input.allowedOrigins)
  const key = await withTransaction(db, async (q) => {
    const { status } = await lockOwnKey(q, actor, input.keyId)
    if (status !== 'active') throw new ApiError('CONFLICT', 'A revoked key cannot be changed.')
    const before = await q.apiKeys.findKeyAccess(input.keyId)
    const updated = await q.apiKeys.updateKeyAccess(input.keyId, { scopes, allowedOrigins })
    const current = view(updated, now)
    await writeAuditEvent(q, actor, {
      action: 'key_updated',
      keyId: input.keyId,
      keyPrefix: current.prefix,
      details: {
        before: { scopes: before.scopes, allowed_origins: before.allowedOrigins },
        after: { scopes: updated.scopes, allowed_origins: updated.allowedOrigins },
      },
      at: now,
    })
    return updated
  })
  return { key: view(key, now) }
}

/**
 * Issues a new secret. The old secrets stop working at once (graceSeconds 0,
 * the default) or after graceSeconds (at most 7 days); a secret already in a
 * grace period never gets longer.
 */
export async function rotateApiKey(
  db: Database,
  actor: Actor,
  input: { keyId: bigint; graceSeconds?: number | undefined },
  now = new Date(),
): Promise<{ key: ApiKeyView; secret: string }> {
  const grace = input.graceSeconds ?? 0
  if (!Number.isInteger(grace) || grace < 0 || grace > MAX_GRACE_SECONDS) {
    throw new ApiError('INVALID_ARGUMENT', `The grace period is 0 to ${MAX_GRACE_SECONDS} seconds (7 days).`)
  }
  const { secret, prefix, hash } = generateApiKeySecret()
  const oldExpiry = new Date(now.getTime() + grace * 1000)
  const key = await withTransaction(db, async (q) => {
    const { status } = await lockOwnKey(q, actor, input.keyId)
    if (status !== 'active') throw new ApiError('CONFLICT', 'A revoked key cannot be rotated.')
    const previous = await q.apiKeys.findLiveSecrets(input.keyId, now)
    // What each previous secret really gets: the grace period, or its own earlier end; the
    // oldest end now when the new one would leave more than MAX_LIVE_SECRETS_PER_KEY live.
    const ending = Math.max(0, previous.length + 1 - MAX_LIVE_SECRETS_PER_KEY)
    const applied: { prefix: string; expires_at: string }[] = []
    for (const [i, s] of previous.entries()) {
      const end = i < ending ? now : oldExpiry
      if (s.expiresAt === null || s.expiresAt > end) {
        await q.apiKeys.setSecretExpiry(s.id, end)
        applied.push({ prefix: s.prefix, expires_at: end.toISOString() })
      } else {
        applied.push({ prefix: s.prefix, expires_at: s.expiresAt.toISOString() })
      }
    }
    await q.apiKeys.insertSecret({ keyId: input.keyId, secretHash: hash, prefix, createdAt: now })
    const updated = await q.apiKeys.markKeyRotated(input.keyId, now)
    await writeAuditEvent(q, actor, {
      action: 'key_rotated',
      keyId: input.keyId,
      keyPrefix: prefix,
      details: {
        grace_seconds: grace,
        previous_prefixes: previous.map((s) => s.prefix),
        // Per secret: one shared time would claim a grace period the service did not give.
        previous_secrets: applied,
      },
      at: now,
    })
    return updated
  })
  return { key: view(key, now), secret }
}

/** Revokes a key: every secret is refused from now on (within 1 s on every web process). */
export async function revokeApiKey(
  db: Database,
  actor: Actor,
  input: { keyId: bigint },
  now = new Date(),
): Promise<{ key: ApiKeyView }> {
  const key = await withTransaction(db, async (q) => {
    const { status } = await lockOwnKey(q, actor, input.keyId)
    if (status !== 'active') {
      return q.apiKeys.findKey(input.keyId)
    }
    await q.apiKeys.expireLiveSecrets(input.keyId, now)
    const updated = await q.apiKeys.markKeyRevoked(input.keyId, now)
    const newest = updated.secrets.reduce((a, s) => (s.createdAt >= a.createdAt ? s : a), updated.secrets[0]!)
    await writeAuditEvent(q, actor, {
      action: 'key_revoked',
      keyId: input.keyId,
      keyPrefix: newest.prefix,
      at: now,
    })
    return updated
  })
  return { key: view(key, now) }
}

/** The user of a wallet address, created on first use (the portal's sign-in does the same). */
export async function ensureUser(db: Database, address: string): Promise<{ id: bigint; address: string }> {
  return upsertUser(db, address.toLowerCase())
}
