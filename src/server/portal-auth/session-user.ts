import type { Session } from 'next-auth'

/** The signed-in portal user (a wallet), as checked against the database for the current request. */
export interface SessionUser {
  /** users.id */
  id: bigint
  /** Lowercase wallet address. */
  address: string
}

/**
 * The user of a session as next-auth answered it, or null. The session
 * callback has already checked the portal session's row and its user
 * (./auth-options.ts); this only reads the answer.
 */
export function sessionUserOf(session: Session | null): SessionUser | null {
  const claimed = session?.user
  if (!claimed?.id || !/^[0-9]{1,19}$/.test(claimed.id) || !claimed.address) return null
  return { id: BigInt(claimed.id), address: claimed.address }
}
