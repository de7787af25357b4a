import type pg from 'pg'
import { transferEventType } from '@/lib/schemas'
import { refreshFallbackImages } from './collections'
import { withWriteTransaction } from './db'
import { rebuildTokens } from './derived-state'
import { readIndexerState, truncateIndexedRanges, updateProgress } from './state'
import { tokenKey } from './token-state'
import { dropUriEventsAfter } from './uri-events'

export interface RollbackContext {
  network: string
  startBlock: bigint
  lastSeenBlock: bigint
  chainConfirmedBlock: bigint
}

/**
 * Undoes everything ingested from the chain after `ancestor` in ONE
 * transaction: deletes the orphaned transfers and block hashes, rebuilds the
 * affected tokens (owner, burned flag, counts) and collection counters from
 * the history that remains, and moves indexed_ranges and indexer_state back.
 * Imported rows (source 'import') are history from outside the chain's RPC
 * and stay.
 */
export async function rollbackAfter(pool: pg.Pool, ctx: RollbackContext, ancestor: bigint) {
  return withWriteTransaction(pool, (client) => rollbackWithin(client, ctx, ancestor))
}

/** The rollback inside a transaction the caller holds with the writers' lock (a repair commits in the same one). */
export async function rollbackWithin(client: pg.PoolClient, ctx: RollbackContext, ancestor: bigint) {
  await readIndexerState(client, ctx.network, true)
  const orphaned = await orphanedTransfers(client, ancestor)
  const { rows } = await client.query<{ collection_address: string; token_id: string }>(
    `SELECT DISTINCT collection_address, token_id::text FROM transfers WHERE ${orphaned.where}`,
    orphaned.params,
  )
  const keys = rows.map((r) => tokenKey(r.collection_address, BigInt(r.token_id)))
  const collections = [...new Set(rows.map((r) => r.collection_address))]
  const deleted = await client.query(`DELETE FROM transfers WHERE ${orphaned.where}`, orphaned.params)
  await rebuildTokens(client, keys)
  await dropEmptyCollections(client, collections)
  // A token the fallback image came from may be gone.
  await refreshFallbackImages(client, collections)
  await dropUriEventsAfter(client, ancestor)

  await client.query('DELETE FROM blocks WHERE number > $1', [ancestor.toString()])
  await truncateIndexedRanges(client, ancestor)
  const progress = await updateProgress(client, {
    network: ctx.network,
    startBlock: ctx.startBlock,
    lastSeenBlock: ctx.lastSeenBlock,
    chainConfirmedBlock: ctx.chainConfirmedBlock,
    rolledBackTo: ancestor,
  })
  return { ...progress, deletedTransfers: deleted.rowCount ?? 0, affectedTokens: keys.length }
}

/**
 * The condition that selects the chain's transfers after `ancestor`. No index
 * leads with the block number (every stored transfer would pay for one only
 * reorganisations use); the rows are found through the per-event-type feed
 * index by time instead: a block's timestamp is never below its parent's (a
 * consensus rule of Ethereum and of the EVM chains built like it), so every
 * block after the ancestor has at least the ancestor's timestamp. The
 * ancestor is a stored block (src/indexer/sync/reorg.ts), except when no
 * stored block is on the chain any more: then everything ingested goes.
 */
async function orphanedTransfers(client: pg.PoolClient, ancestor: bigint) {
  const { rows } = await client.query<{ timestamp: Date }>('SELECT timestamp FROM blocks WHERE number = $1', [
    ancestor.toString(),
  ])
  const since = rows[0]?.timestamp ?? null
  return {
    where: `event_type = ANY ($3::varchar[]) AND block_timestamp >= coalesce($2::timestamptz, '-infinity')
            AND block_number > $1 AND source = 'rpc'`,
    params: [ancestor.toString(), since, transferEventType.options],
  }
}

/** A collection exists only while it has transfers; first_seen_block follows the remaining history. */
async function dropEmptyCollections(client: pg.PoolClient, collections: string[]) {
  if (collections.length === 0) return
  await client.query(
    `UPDATE collections c SET first_seen_block = (SELECT min(block_number) FROM transfers t WHERE t.collection_address = c.address)
      WHERE c.address = ANY($1::varchar[])`,
    [collections],
  )
  await client.query(
    `DELETE FROM collections c WHERE c.address = ANY($1::varchar[]) AND c.total_transfers = 0
        AND NOT EXISTS (SELECT 1 FROM transfers t WHERE t.collection_address = c.address)`,
    [collections],
  )
}
