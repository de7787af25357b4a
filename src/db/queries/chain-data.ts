/**
 * The chain data: every table the indexer fills from the chain. Accounts,
 * keys, the audit trail and stored media (content-addressed) are not chain
 * data and survive a reset.
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
  // Push delivery's record of changes to the transfers above (docs/push.md).
  'activity_journal',
]

/** Empties the chain tables (identities restart) over a connection of its own. */
export async function truncateChainData(databaseUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  try {
    await client.query(`TRUNCATE ${CHAIN_TABLES.join(', ')} RESTART IDENTITY`)
  } finally {
    await client.end()
  }
}
