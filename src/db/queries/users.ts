/** users: portal accounts, one per wallet address (lowercase). */
import type { Database } from '@/db/database'
import type { Tx } from './transaction'

export interface UserRecord {
  id: bigint
  address: string
}

/** The user of an address, created on first use; an existing one is left as it is. */
export async function upsertUser(db: Database, address: string): Promise<UserRecord> {
  const user = await db.prisma.user.upsert({
    where: { address },
    create: { address },
    update: {},
  })
  return { id: user.id, address: user.address }
}

/** The id of an address's user, or null. */
export function findUserIdByAddress(db: Database, address: string): Promise<{ id: bigint } | null> {
  return db.prisma.user.findUnique({ where: { address }, select: { id: true } })
}

/** Creates or updates the user of a sign-in, stamping its time. */
async function upsertSignedInUser(tx: Tx, address: string, at: Date): Promise<UserRecord> {
  const user = await tx.user.upsert({
    where: { address },
    create: { address, lastSignInAt: at },
    update: { lastSignInAt: at },
  })
  return { id: user.id, address: user.address }
}

export const userStatements = { upsertSignedInUser }
