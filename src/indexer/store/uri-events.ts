import type pg from 'pg'
import type { MetadataUpdateEvent } from '../events/types'
import { int4Array, int8Array, numericArray, varcharArray } from './pg-array'

/*
 * ERC-1155 URI events (erc1155_uris): the newest per token is its metadata
 * URI, ahead of uri(id) (docs/metadata.md, "ERC-1155"). They are chain data:
 * rows of blocks a reorganisation orphans go, and their tokens are fetched again.
 */

/** Stores the URI events among `updates` (a block read twice stores each once). */
export async function storeUriEvents(client: pg.PoolClient, updates: MetadataUpdateEvent[]): Promise<void> {
  const uris = updates.filter((u) => u.uri !== undefined)
  if (uris.length === 0) return
  await client.query(
    `INSERT INTO erc1155_uris (collection_address, token_id, block_number, log_index, transaction_hash, uri)
     SELECT * FROM unnest($1::varchar[], $2::numeric[], $3::bigint[], $4::int[], $5::varchar[], $6::varchar[])
     ON CONFLICT DO NOTHING`,
    [
      varcharArray(uris.map((u) => u.collection)),
      numericArray(uris.map((u) => u.fromTokenId)),
      int8Array(uris.map((u) => u.blockNumber)),
      int4Array(uris.map((u) => u.uri!.logIndex)),
      varcharArray(uris.map((u) => u.uri!.transactionHash)),
      varcharArray(uris.map((u) => u.uri!.value)),
    ],
  )
}

/** A rollback to `ancestor`: URI events of later blocks go; their tokens are queued for a refetch. */
export async function dropUriEventsAfter(client: pg.PoolClient, ancestor: bigint): Promise<void> {
  await client.query(
    `WITH gone AS (DELETE FROM erc1155_uris WHERE block_number > $1 RETURNING collection_address, token_id)
     UPDATE tokens t SET metadata_status = 'pending', metadata_attempts = 0, metadata_next_attempt_at = now(),
            metadata_recheck_at = NULL, updated_at = now()
       FROM gone WHERE t.collection_address = gone.collection_address AND t.token_id = gone.token_id`,
    [ancestor.toString()],
  )
}
