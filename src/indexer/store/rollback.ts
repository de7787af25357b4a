import type pg from 'pg'
import { withWriteTransaction } from './db'
import { writeTokenStates } from './derived-state'
import { readIndexerState, truncateIndexedRanges, updateProgress } from './state'
import { loadTokenStates, recomputeTokenStates, tokenKey } from './token-state'

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
  return withWriteTransaction(pool, async (client) => {
    await readIndexerState(client, ctx.network, true)
    const { rows } = await client.query(
      `SELECT DISTINCT collection_address, token_id::text FROM transfers
        WHERE block_number > $1 AND source = 'rpc'`,
      [ancestor.toString()],
    )
    const keys = rows.map((r) => tokenKey(r.collection_address, BigInt(r.token_id)))
    const collections = [...new Set(rows.map((r) => r.collection_address as string))]
    const old = await loadTokenStates(client, keys)
    const deleted = await client.query("DELETE FROM transfers WHERE block_number > $1 AND source = 'rpc'", [
      ancestor.toString(),
    ])
    const next = await recomputeTokenStates(client, keys)
    await writeTokenStates(client, old, next)
    await dropEmptyCollections(client, collections)

    await client.query('DELETE FROM blocks WHERE number > $1', [ancestor.toString()])
    await truncateIndexedRanges(client, ancestor)
    const progress = await updateProgress(client, {
      network: ctx.network,
      startBlock: ctx.startBlock,
      lastSeenBlock: ctx.lastSeenBlock,
      chainConfirmedBlock: ctx.chainConfirmedBlock,
    })
    return { ...progress, deletedTransfers: deleted.rowCount ?? 0, affectedTokens: keys.length }
  })
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
