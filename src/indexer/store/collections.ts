/**
 * What the metadata queue reads and writes of collections
 * (metadata/collection-info.ts): the collections still to be read, their
 * name, symbol, contractURI document and deploy facts, and the image that
 * stands in for one the contract does not declare.
 */
import type { Hex } from 'viem'
import type { Queryable } from './db'

export interface PendingCollectionRow {
  address: Hex
  first_seen_block: string | null
  metadata_attempts: number
  /** Requests to read it again so far: the read's result is written only while they are these. */
  metadata_requests: number
}

/**
 * Collections to read (collections_metadata_queue_idx): those never read in the order they
 * were found; then those asked again (ERC-7572), the oldest request first, so that a contract
 * asking in every block keeps neither unnamed collections (not listed until named) nor other
 * re-reads waiting; then those whose last read failed and whose retry is due.
 */
export async function pendingCollections(db: Queryable, limit: number): Promise<PendingCollectionRow[]> {
  const { rows } = await db.query<PendingCollectionRow>(
    `(SELECT address, first_seen_block::text, metadata_attempts, metadata_requests FROM collections
       WHERE metadata_status = 'pending' AND metadata_next_attempt_at IS NULL ORDER BY id LIMIT $1)
     UNION ALL
     (SELECT address, first_seen_block::text, metadata_attempts, metadata_requests FROM collections
       WHERE metadata_status = 'pending' AND metadata_next_attempt_at IS NOT NULL
       ORDER BY metadata_next_attempt_at LIMIT $1)
     UNION ALL
     (SELECT address, first_seen_block::text, metadata_attempts, metadata_requests FROM collections
       WHERE metadata_status = 'failed' AND metadata_next_attempt_at <= now()
       ORDER BY metadata_next_attempt_at LIMIT $1)
     LIMIT $1`,
    [limit],
  )
  return rows
}

/** The collection a read was taken for, and the requests it answers (PendingCollectionRow). */
export interface CollectionRead {
  address: Hex
  requests: number
}

/**
 * A read failed (an RPC error, not an answer): read again at `retryAt`; what is stored stays.
 * Not written when a request came since the read began (the collection is already due again).
 */
export async function markCollectionFailed(
  db: Queryable,
  read: CollectionRead,
  retryAt: Date,
): Promise<void> {
  await db.query(
    `UPDATE collections SET metadata_status = 'failed', metadata_attempts = metadata_attempts + 1,
            metadata_next_attempt_at = $3, updated_at = now()
      WHERE address = $1 AND metadata_requests = $2`,
    [read.address, read.requests, retryAt],
  )
}

/**
 * ERC-7572 ContractURIUpdated: read the collections again (what is stored is served meanwhile),
 * queued by the time asked (pendingCollections); one never read keeps its place.
 */
export async function markCollectionsStale(db: Queryable, addresses: string[]): Promise<void> {
  if (addresses.length === 0) return
  await db.query(
    `UPDATE collections SET metadata_status = 'pending', metadata_attempts = 0,
            metadata_requests = metadata_requests + 1,
            metadata_next_attempt_at = CASE WHEN metadata_status = 'pending' AND metadata_next_attempt_at IS NULL
                                            THEN NULL ELSE clock_timestamp() END,
            updated_at = now()
      WHERE address = ANY($1::varchar[])`,
    [addresses],
  )
}

/** What a collection says about itself (null: not known; deploy facts keep a stored value then). */
export interface CollectionInfo {
  name: string
  symbol: string | null
  contractUri: string | null
  description: string | null
  /** Declared by the contract (contractURI): replaces the image; null keeps the stored one. */
  image: string | null
  deployBlock: string | null
  creatorAddress: string | null
  deployTxHash: string | null
  /** false: the contractURI document was not read (its host failed): the stored description stays. */
  documentRead: boolean
  /** Read again then (metadata_status failed, attempts counted); null: read (ok). */
  retryAt: Date | null
}

/**
 * Stores a collection's info and marks it read (metadata_status ok), or to be read again at
 * info.retryAt. When a request came since the read began (ERC-7572, a refresh), what the read
 * saw may be older than what was asked for: its info is stored (a contract that asks in every
 * block still gets named) but the collection stays due, as the request left it.
 */
export async function saveCollectionInfo(
  db: Queryable,
  read: CollectionRead,
  info: CollectionInfo,
): Promise<void> {
  await db.query(
    `UPDATE collections SET name = $2, symbol = $3, listed = ($2 <> '' OR coalesce($3, '') <> ''),
            contract_uri = $4, description = CASE WHEN $10 THEN $5 ELSE description END,
            image_url = CASE WHEN $6::text IS NOT NULL THEN $6 ELSE image_url END,
            image_source = CASE WHEN $6::text IS NOT NULL THEN 'contract' ELSE image_source END,
            deploy_block = coalesce($7, deploy_block), creator_address = coalesce($8, creator_address),
            deploy_tx_hash = coalesce($9, deploy_tx_hash),
            metadata_status = CASE WHEN metadata_requests <> $12 THEN metadata_status
                                   WHEN $11::timestamptz IS NULL THEN 'ok' ELSE 'failed' END,
            metadata_attempts = CASE WHEN metadata_requests <> $12 THEN metadata_attempts
                                     WHEN $11::timestamptz IS NULL THEN 0 ELSE metadata_attempts + 1 END,
            metadata_next_attempt_at = CASE WHEN metadata_requests <> $12 THEN metadata_next_attempt_at
                                            ELSE $11 END,
            updated_at = now()
      WHERE address = $1`,
    [
      read.address,
      info.name,
      info.symbol,
      info.contractUri,
      info.description,
      info.image,
      info.deployBlock,
      info.creatorAddress,
      info.deployTxHash,
      info.documentRead,
      info.retryAt,
      read.requests,
    ],
  )
}

/**
 * Collection image from its lowest token id that has one, unless the contract declares its own;
 * none when no token has one any more (a rollback took the token away).
 * The contract test is also on the updated row: a contract image committed while this statement
 * waited for the row is re-checked there (READ COMMITTED re-evaluates only the updated row).
 */
export async function refreshFallbackImages(db: Queryable, collections: string[]): Promise<void> {
  if (collections.length === 0) return
  await db.query(
    `UPDATE collections c SET image_url = low.image_url, updated_at = now(),
            image_source = CASE WHEN low.image_url IS NOT NULL THEN 'token' END
       FROM (SELECT c2.address, (SELECT t.image_url FROM tokens t
                                  WHERE t.collection_address = c2.address AND t.image_url IS NOT NULL
                                  ORDER BY t.token_id LIMIT 1) AS image_url
               FROM collections c2
              WHERE c2.address = ANY($1::varchar[]) AND c2.image_source IS DISTINCT FROM 'contract') AS low
      WHERE c.address = low.address AND (low.image_url IS NOT NULL OR c.image_source = 'token')
        AND c.image_url IS DISTINCT FROM low.image_url
        AND c.image_source IS DISTINCT FROM 'contract'`,
    [collections],
  )
}

/** Which of `addresses` are stored as collections of `standard`. */
export async function collectionsOfStandard(
  db: Queryable,
  addresses: string[],
  standard: string,
): Promise<Set<string>> {
  if (addresses.length === 0) return new Set()
  const { rows } = await db.query<{ address: string }>(
    'SELECT address FROM collections WHERE address = ANY($1::varchar[]) AND standard = $2',
    [addresses, standard],
  )
  return new Set(rows.map((r) => r.address))
}
