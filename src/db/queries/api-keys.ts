/**
 * api_keys and api_key_secrets: the statements of the portal's key management
 * (src/server/api/portal/keys/api-keys.ts), of credential verification and of
 * the CORS origin lookup (src/server/credentials). Rules (limits, scopes,
 * origins, who may see which key) stay with the callers.
 */
import type { Database } from '@/db/database'
import type { Tx } from './transaction'

/** Live secrets a key keeps at most (docs/portal.md, "Keys and audit trail"): a rotation past it ends the oldest's grace. */
export const MAX_LIVE_SECRETS_PER_KEY = 10

/** Revoked keys a listing shows beside the active ones: the newest (older ones stay in the audit trail). */
export const LISTED_REVOKED_KEYS = 50

/** What the portal shows of a key (with its secrets' prefixes and lifetimes). */
const keySelect = {
  id: true,
  name: true,
  scopes: true,
  allowedOrigins: true,
  status: true,
  createdAt: true,
  rotatedAt: true,
  revokedAt: true,
  lastUsedAt: true,
  // The newest: a key's live secrets are always its newest (an older one never outlives a newer
  // one), and rotation keeps at most MAX_LIVE_SECRETS_PER_KEY of them live.
  secrets: {
    select: { prefix: true, createdAt: true, expiresAt: true },
    orderBy: [{ createdAt: 'desc' as const }, { id: 'desc' as const }],
    take: MAX_LIVE_SECRETS_PER_KEY,
  },
}

export interface ApiKeyRecord {
  id: bigint
  name: string
  scopes: string[]
  allowedOrigins: string[]
  status: string
  createdAt: Date
  rotatedAt: Date | null
  revokedAt: Date | null
  lastUsedAt: Date | null
  secrets: { prefix: string; createdAt: Date; expiresAt: Date | null }[]
}

/**
 * A user's keys, newest first: every active one (MAX_ACTIVE_KEYS_PER_USER at most) and the
 * newest LISTED_REVOKED_KEYS revoked ones, so that a listing stays bounded however many keys
 * an account has created and revoked.
 */
export async function findUserKeys(db: Database, userId: bigint): Promise<ApiKeyRecord[]> {
  const orderBy = [{ createdAt: 'desc' as const }, { id: 'desc' as const }]
  const [active, revoked] = await Promise.all([
    db.prisma.apiKey.findMany({ where: { userId, status: 'active' }, orderBy, select: keySelect }),
    db.prisma.apiKey.findMany({
      where: { userId, status: { not: 'active' } },
      orderBy,
      take: LISTED_REVOKED_KEYS,
      select: keySelect,
    }),
  ])
  return [...active, ...revoked].sort(
    (a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (b.id > a.id ? 1 : b.id < a.id ? -1 : 0),
  )
}

/** A user's key's last use; null when the key is not that user's. */
export function findOwnKeyLastUsed(
  db: Database,
  userId: bigint,
  keyId: bigint,
): Promise<{ lastUsedAt: Date | null } | null> {
  return db.prisma.apiKey.findFirst({ where: { id: keyId, userId }, select: { lastUsedAt: true } })
}

export interface KeySecretRecord {
  secretHash: string
  expiresAt: Date | null
  key: {
    id: bigint
    status: string
    scopes: string[]
    allowedOrigins: string[]
    user: { address: string }
  }
}

// Every API request whose credential is not in the verifier's cache (at most a second old) runs
// this lookup, so it is one indexed join over the pool rather than a Prisma query: about 0.2 ms
// of the web process's CPU against 1.0 ms (docs/auth.md, "Admission before waiting").
const KEY_SECRET_SQL = `SELECT s.secret_hash, s.expires_at, k.id::text AS key_id, k.status, k.scopes,
       k.allowed_origins, u.address
  FROM api_key_secrets s JOIN api_keys k ON k.id = s.key_id JOIN users u ON u.id = k.user_id
 WHERE s.secret_hash = $1`

/** The secret with this SHA-256 hash, with its key and the key's owner. */
export async function findKeySecretByHash(db: Database, hash: string): Promise<KeySecretRecord | null> {
  const { rows } = await db.pool.query<{
    secret_hash: string
    expires_at: Date | null
    key_id: string
    status: string
    scopes: string[]
    allowed_origins: string[]
    address: string
  }>(KEY_SECRET_SQL, [hash])
  const row = rows[0]
  if (!row) return null
  return {
    secretHash: row.secret_hash,
    expiresAt: row.expires_at,
    key: {
      id: BigInt(row.key_id),
      status: row.status,
      scopes: row.scopes,
      allowedOrigins: row.allowed_origins,
      user: { address: row.address },
    },
  }
}

// MATERIALIZED: under a bare EXISTS the planner expects an early match and scans the whole
// table for an origin no key has (measured: 65 ms at 200,000 keys, 0.8 ms through the index).
const ALLOWED_ORIGIN_SQL = `WITH keys AS MATERIALIZED (
  SELECT status FROM api_keys WHERE allowed_origins @> ARRAY[$1::text]
) SELECT EXISTS (SELECT 1 FROM keys WHERE status = 'active') AS allowed`

/** Whether some active key allows this (canonical) browser origin: one indexed query. */
export async function anyActiveKeyAllowsOrigin(db: Database, origin: string): Promise<boolean> {
  const result = await db.pool.query<{ allowed: boolean }>(ALLOWED_ORIGIN_SQL, [origin])
  return result.rows[0]?.allowed === true
}

/** Moves keys' last_used_at forward (never back), all in one statement. */
export async function recordKeysLastUsed(
  db: Database,
  uses: { ids: string[]; times: string[] },
): Promise<void> {
  await db.pool.query(
    `UPDATE api_keys SET last_used_at = v.t
             FROM unnest($1::bigint[], $2::timestamptz[]) AS v(id, t)
            WHERE api_keys.id = v.id AND (api_keys.last_used_at IS NULL OR api_keys.last_used_at < v.t)`,
    [uses.ids, uses.times],
  )
}

// ───────────── in a transaction (./transaction.ts) ─────────────

/**
 * The user's active keys, counted with the user's row locked until the transaction ends:
 * concurrent creations of one user count one after another, so no two pass the cap together.
 */
async function lockUserAndCountActiveKeys(tx: Tx, userId: bigint): Promise<number> {
  // NO KEY: rows that refer to the user (sessions, audit events) are not held up by it.
  await tx.$queryRaw`SELECT 1 FROM users WHERE id = ${userId} FOR NO KEY UPDATE`
  return tx.apiKey.count({ where: { userId, status: 'active' } })
}

function insertKeyWithSecret(
  tx: Tx,
  key: {
    userId: bigint
    name: string
    scopes: string[]
    allowedOrigins: string[]
    createdAt: Date
    secret: { secretHash: string; prefix: string }
  },
): Promise<ApiKeyRecord> {
  return tx.apiKey.create({
    data: {
      userId: key.userId,
      name: key.name,
      scopes: key.scopes,
      allowedOrigins: key.allowedOrigins,
      createdAt: key.createdAt,
      secrets: {
        create: { secretHash: key.secret.secretHash, prefix: key.secret.prefix, createdAt: key.createdAt },
      },
    },
    select: keySelect,
  })
}

/** Locks a user's key row (FOR UPDATE) and returns its status; undefined when not that user's. */
async function lockOwnKey(tx: Tx, userId: bigint, keyId: bigint): Promise<{ status: string } | undefined> {
  const rows = await tx.$queryRaw<{ status: string }[]>`
    SELECT status FROM api_keys WHERE id = ${keyId} AND user_id = ${userId} FOR UPDATE`
  return rows[0]
}

function findKeyAccess(tx: Tx, keyId: bigint): Promise<{ scopes: string[]; allowedOrigins: string[] }> {
  return tx.apiKey.findUniqueOrThrow({
    where: { id: keyId },
    select: { scopes: true, allowedOrigins: true },
  })
}

function findKey(tx: Tx, keyId: bigint): Promise<ApiKeyRecord> {
  return tx.apiKey.findUniqueOrThrow({ where: { id: keyId }, select: keySelect })
}

/** Sets the given fields of a key; absent ones stay. */
function updateKeyAccess(
  tx: Tx,
  keyId: bigint,
  change: { scopes?: string[] | undefined; allowedOrigins?: string[] | undefined },
): Promise<ApiKeyRecord> {
  return tx.apiKey.update({
    where: { id: keyId },
    data: {
      ...(change.scopes ? { scopes: change.scopes } : {}),
      ...(change.allowedOrigins ? { allowedOrigins: change.allowedOrigins } : {}),
    },
    select: keySelect,
  })
}

/** A key's secrets that still work at `now`, oldest first. */
function findLiveSecrets(
  tx: Tx,
  keyId: bigint,
  now: Date,
): Promise<{ id: bigint; prefix: string; expiresAt: Date | null }[]> {
  return tx.apiKeySecret.findMany({
    where: { keyId, OR: [{ expiresAt: null }, { expiresAt: { gt: now } }] },
    select: { id: true, prefix: true, expiresAt: true },
    orderBy: { id: 'asc' },
  })
}

async function setSecretExpiry(tx: Tx, secretId: bigint, expiresAt: Date): Promise<void> {
  await tx.apiKeySecret.update({ where: { id: secretId }, data: { expiresAt } })
}

async function insertSecret(
  tx: Tx,
  secret: { keyId: bigint; secretHash: string; prefix: string; createdAt: Date },
): Promise<void> {
  await tx.apiKeySecret.create({ data: secret })
}

function markKeyRotated(tx: Tx, keyId: bigint, at: Date): Promise<ApiKeyRecord> {
  return tx.apiKey.update({ where: { id: keyId }, data: { rotatedAt: at }, select: keySelect })
}

/** Ends, at `now`, every secret of a key that still works. */
async function expireLiveSecrets(tx: Tx, keyId: bigint, now: Date): Promise<void> {
  await tx.apiKeySecret.updateMany({
    where: { keyId, OR: [{ expiresAt: null }, { expiresAt: { gt: now } }] },
    data: { expiresAt: now },
  })
}

function markKeyRevoked(tx: Tx, keyId: bigint, at: Date): Promise<ApiKeyRecord> {
  return tx.apiKey.update({
    where: { id: keyId },
    data: { status: 'revoked', revokedAt: at },
    select: keySelect,
  })
}

export const apiKeyStatements = {
  lockUserAndCountActiveKeys,
  insertKeyWithSecret,
  lockOwnKey,
  findKeyAccess,
  findKey,
  updateKeyAccess,
  findLiveSecrets,
  setSecretExpiry,
  insertSecret,
  markKeyRotated,
  expireLiveSecrets,
  markKeyRevoked,
}
