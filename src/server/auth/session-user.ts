/** The signed-in portal user (a wallet), as checked against the database for the current request. */
export interface SessionUser {
  /** users.id */
  id: bigint
  /** Lowercase wallet address. */
  address: string
}
