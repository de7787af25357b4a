/** siwe_nonces: single-use sign-in nonces (src/server/portal-auth/siwe.ts). */
import type { Database } from '@/db/database'

export async function insertNonce(
  db: Database,
  nonce: { nonce: string; expiresAt: Date; createdAt: Date },
): Promise<void> {
  await db.prisma.siweNonce.create({ data: nonce })
}

export async function deleteNoncesExpiredBefore(db: Database, before: Date): Promise<void> {
  await db.prisma.siweNonce.deleteMany({ where: { expiresAt: { lt: before } } })
}

/** Deletes the nonce if it is live at `now` (DELETE … RETURNING: atomic); whether it was. */
export async function deleteLiveNonce(db: Database, nonce: string, now: Date): Promise<boolean> {
  const rows = await db.prisma.$queryRaw<{ nonce: string }[]>`
    DELETE FROM siwe_nonces WHERE nonce = ${nonce} AND expires_at > ${now} RETURNING nonce`
  return rows.length === 1
}
