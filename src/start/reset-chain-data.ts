/**
 * When the embedded devnet had to create its chain anew (no usable saved
 * state), everything indexed from the earlier chain is void — and the demo
 * contracts come back at the same addresses, so stale rows would look valid.
 * Chain data is cleared before the indexer starts; accounts, keys, audit
 * trail and stored media (content-addressed) are kept.
 */
import { truncateChainData } from '@/db/queries/chain-data'

export async function resetChainData(databaseUrl: string): Promise<void> {
  await truncateChainData(databaseUrl)
}
