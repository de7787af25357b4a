/**
 * When the embedded devnet had to create its chain anew (no usable saved
 * state), everything indexed from the earlier chain is void — and the demo
 * contracts come back at the same addresses, so stale rows would look valid.
 * Chain data is cleared before the indexer starts; accounts, keys, audit
 * trail and stored media (content-addressed) are kept.
 */
import pg from 'pg'

const CHAIN_TABLES = [
  'transfers',
  'tokens',
  'collection_holders',
  'collections',
  'non_nft_contracts',
  'blocks',
  'indexed_ranges',
  'indexer_state',
]

export async function resetChainData(databaseUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  try {
    await client.query(`TRUNCATE ${CHAIN_TABLES.join(', ')} RESTART IDENTITY`)
  } finally {
    await client.end()
  }
}
