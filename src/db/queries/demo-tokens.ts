/** demo_tokens: the try-it page's short-lived tokens, by SHA-256 hash (src/server/credentials/demo-tokens.ts). */
import type { Database } from '@/db/database'

export async function insertDemoToken(
  db: Database,
  token: { tokenHash: string; clientIp: string; issuedAt: Date; expiresAt: Date },
): Promise<void> {
  await db.prisma.demoToken.create({ data: token })
}

export async function deleteDemoTokensExpiredBefore(db: Database, before: Date): Promise<void> {
  await db.prisma.demoToken.deleteMany({ where: { expiresAt: { lt: before } } })
}

/** The token with this SHA-256 hash: one indexed read over the pool, as the key lookup (./api-keys.ts). */
export async function findDemoTokenByHash(
  db: Database,
  hash: string,
): Promise<{ id: bigint; tokenHash: string; expiresAt: Date } | null> {
  const { rows } = await db.pool.query<{ id: string; token_hash: string; expires_at: Date }>(
    'SELECT id::text AS id, token_hash, expires_at FROM demo_tokens WHERE token_hash = $1',
    [hash],
  )
  const row = rows[0]
  return row ? { id: BigInt(row.id), tokenHash: row.token_hash, expiresAt: row.expires_at } : null
}
