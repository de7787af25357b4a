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

export function findDemoTokenByHash(
  db: Database,
  hash: string,
): Promise<{ id: bigint; tokenHash: string; expiresAt: Date } | null> {
  return db.prisma.demoToken.findUnique({
    where: { tokenHash: hash },
    select: { id: true, tokenHash: true, expiresAt: true },
  })
}
