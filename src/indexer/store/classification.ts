/**
 * Verdicts on contracts that emitted the legacy Transfer shape
 * (sync/classify.ts): an NFT is a collection, anything else is recorded in
 * non_nft_contracts so it is probed once.
 */
import type { Queryable } from './db'

/** Of `addresses`: those already collections (true) and those already rejected (false). */
export async function knownVerdicts(db: Queryable, addresses: string[]): Promise<Map<string, boolean>> {
  const verdicts = new Map<string, boolean>()
  const known = await db.query<{ address: string }>(
    'SELECT address FROM collections WHERE address = ANY($1::varchar[])',
    [addresses],
  )
  for (const r of known.rows) verdicts.set(r.address, true)
  const rejected = await db.query<{ address: string }>(
    'SELECT address FROM non_nft_contracts WHERE address = ANY($1::varchar[])',
    [addresses],
  )
  for (const r of rejected.rows) verdicts.set(r.address, false)
  return verdicts
}

/** Records a contract that is not an NFT, and why (kept when already recorded). */
export async function rejectContract(db: Queryable, address: string, reason: string): Promise<void> {
  await db.query(
    'INSERT INTO non_nft_contracts (address, reason) VALUES ($1, $2) ON CONFLICT (address) DO NOTHING',
    [address, reason],
  )
}
