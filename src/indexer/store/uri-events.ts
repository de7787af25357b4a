import type pg from 'pg'
import type { MetadataUpdateEvent } from '../events/types'
import type { Queryable } from './db'
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

/** What uriKey reads: a decoded URI event (uriKeysOf) or a stored row (storedUriKeys). */
interface UriKeyFields {
  transactionHash: string
  logIndex: number
  collection: string
  tokenId: bigint | string
  blockNumber: bigint | string
  uri: string
}

/**
 * A URI event's identity and content in one string. Verification compares
 * them with the transfers' keys: erc1155_uris is chain data, so a URI event a
 * faulty read left out of a stored block is repaired like a transfer
 * (docs/indexer.md, "Verification").
 */
const uriKey = (u: UriKeyFields) =>
  `uri:${u.transactionHash}:${u.logIndex}:${u.collection}:${u.tokenId}:${u.blockNumber}:${u.uri}`

/** Keys (uriKey) of the URI events among decoded `updates`. */
export function uriKeysOf(updates: MetadataUpdateEvent[]): string[] {
  const out: string[] = []
  for (const u of updates) {
    if (!u.uri) continue
    out.push(
      uriKey({
        transactionHash: u.uri.transactionHash,
        logIndex: u.uri.logIndex,
        collection: u.collection,
        tokenId: u.fromTokenId,
        blockNumber: u.blockNumber,
        uri: u.uri.value,
      }),
    )
  }
  return out
}

/** Keys (uriKey) of the stored URI events of blocks [fromBlock, toBlock] (erc1155_uris_block_idx). */
export async function storedUriKeys(
  db: Queryable,
  range: { fromBlock: bigint; toBlock: bigint },
): Promise<string[]> {
  const { rows } = await db.query<UriKeyFields>(
    `SELECT transaction_hash AS "transactionHash", log_index AS "logIndex", collection_address AS collection,
            token_id::text AS "tokenId", block_number::text AS "blockNumber", uri
       FROM erc1155_uris WHERE block_number BETWEEN $1 AND $2`,
    [range.fromBlock.toString(), range.toBlock.toString()],
  )
  return rows.map(uriKey)
}
