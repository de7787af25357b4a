import type pg from 'pg'
import { ZERO_ADDRESS } from '../events/types'
import { pgArray } from './db'
import { collectionOfKey, type TokenState, tokenKeyArrays } from './token-state'

interface CollectionDelta {
  supply: number
  holders: number
  transfers: number
}

/**
 * Writes the new state of touched tokens (null = the token no longer has any
 * transfer) and moves the collection counters by the difference between old
 * and new states, so counters never need a scan:
 *  - total_supply: tokens observed and not burned;
 *  - unique_holders: distinct owners of those tokens (via collection_holders);
 *  - total_transfers: transfer rows of the collection.
 * `old` is the stored state of every key of `next`, read in this transaction
 * under the writers' lock.
 */
export async function writeTokenStates(
  client: pg.PoolClient,
  old: Map<string, TokenState>,
  next: Map<string, TokenState | null>,
): Promise<void> {
  const inserts: Array<[string, TokenState]> = []
  const updates: Array<[string, TokenState]> = []
  const deletes: string[] = []
  const deltas = new Map<string, CollectionDelta>()
  const holderDeltas = new Map<string, number>()
  const delta = (collection: string) => {
    const d = deltas.get(collection) ?? { supply: 0, holders: 0, transfers: 0 }
    deltas.set(collection, d)
    return d
  }
  const moveHolder = (collection: string, owner: string, by: number) => {
    const key = `${collection}:${owner}`
    holderDeltas.set(key, (holderDeltas.get(key) ?? 0) + by)
  }

  for (const [key, state] of next) {
    const before = old.get(key)
    const collection = collectionOfKey(key)
    if (state) (before ? updates : inserts).push([key, state])
    else if (before) deletes.push(key)
    else continue
    const d = delta(collection)
    d.transfers += (state?.transferCount ?? 0) - (before?.transferCount ?? 0)
    if (before && isHeld(before)) {
      d.supply--
      moveHolder(collection, before.owner, -1)
    }
    if (state && isHeld(state)) {
      d.supply++
      moveHolder(collection, state.owner, +1)
    }
  }

  await writeTokens(client, inserts, 'new')
  await writeTokens(client, updates, 'stored')
  if (deletes.length > 0) {
    await client.query(
      `DELETE FROM tokens t USING unnest($1::varchar[], $2::numeric[]) AS k(c, id)
        WHERE t.collection_address = k.c AND t.token_id = k.id`,
      tokenKeyArrays(deletes),
    )
  }
  await applyHolderDeltas(client, holderDeltas, delta)
  await applyCollectionDeltas(client, deltas)
}

const isHeld = (s: TokenState) => !s.burned && s.owner !== ZERO_ADDRESS

/**
 * Tokens not stored yet are plainly inserted (a fifth cheaper than an upsert,
 * and most tokens of a backfill are new); stored ones are upserted. `old` is
 * read under the writers' lock in the same transaction, so "not stored" holds.
 */
async function writeTokens(client: pg.PoolClient, rows: Array<[string, TokenState]>, kind: 'new' | 'stored') {
  if (rows.length === 0) return
  await client.query(
    `INSERT INTO tokens (collection_address, token_id, current_owner, is_burned, transfer_count,
                         minted_block, last_transfer_block)
     SELECT * FROM unnest($1::varchar[], $2::numeric[], $3::varchar[], $4::bool[], $5::int[], $6::bigint[], $7::bigint[])
     ${
       kind === 'stored'
         ? `ON CONFLICT (collection_address, token_id) DO UPDATE SET
              current_owner = excluded.current_owner, is_burned = excluded.is_burned,
              transfer_count = excluded.transfer_count, minted_block = excluded.minted_block,
              last_transfer_block = excluded.last_transfer_block, updated_at = now()`
         : ''
     }`,
    [
      ...tokenKeyArrays(rows.map(([key]) => key)),
      pgArray(rows.map(([, s]) => s.owner)),
      pgArray(rows.map(([, s]) => s.burned)),
      pgArray(rows.map(([, s]) => s.transferCount)),
      pgArray(rows.map(([, s]) => s.mintedBlock ?? null)),
      pgArray(rows.map(([, s]) => s.lastTransferBlock ?? null)),
    ],
  )
}

/** collection_holders counts tokens per (collection, owner); a count crossing zero moves unique_holders. */
async function applyHolderDeltas(
  client: pg.PoolClient,
  holderDeltas: Map<string, number>,
  delta: (collection: string) => CollectionDelta,
) {
  const entries = [...holderDeltas].filter(([, by]) => by !== 0)
  if (entries.length === 0) return
  const split = entries.map(([key]) => key.split(':') as [string, string])
  const { rows } = await client.query(
    `INSERT INTO collection_holders (collection_address, owner, token_count)
     SELECT * FROM unnest($1::varchar[], $2::varchar[], $3::int[])
     ON CONFLICT (collection_address, owner) DO UPDATE
       SET token_count = collection_holders.token_count + excluded.token_count
     RETURNING collection_address, owner, token_count`,
    [pgArray(split.map(([c]) => c)), pgArray(split.map(([, o]) => o)), pgArray(entries.map(([, by]) => by))],
  )
  const emptied: Array<[string, string]> = []
  for (const row of rows) {
    const after = Number(row.token_count)
    const before = after - (holderDeltas.get(`${row.collection_address}:${row.owner}`) ?? 0)
    if (before <= 0 && after > 0) delta(row.collection_address).holders++
    if (before > 0 && after <= 0) delta(row.collection_address).holders--
    if (after <= 0) emptied.push([row.collection_address, row.owner])
  }
  if (emptied.length > 0) {
    await client.query(
      `DELETE FROM collection_holders h USING unnest($1::varchar[], $2::varchar[]) AS k(c, o)
        WHERE h.collection_address = k.c AND h.owner = k.o AND h.token_count <= 0`,
      [pgArray(emptied.map(([c]) => c)), pgArray(emptied.map(([, o]) => o))],
    )
  }
}

async function applyCollectionDeltas(client: pg.PoolClient, deltas: Map<string, CollectionDelta>) {
  const entries = [...deltas].filter(([, d]) => d.supply !== 0 || d.holders !== 0 || d.transfers !== 0)
  if (entries.length === 0) return
  await client.query(
    `UPDATE collections c
        SET total_supply = c.total_supply + d.supply, unique_holders = c.unique_holders + d.holders,
            total_transfers = c.total_transfers + d.transfers, updated_at = now()
       FROM unnest($1::varchar[], $2::bigint[], $3::bigint[], $4::bigint[]) AS d(address, supply, holders, transfers)
      WHERE c.address = d.address`,
    [
      pgArray(entries.map(([a]) => a)),
      pgArray(entries.map(([, d]) => d.supply)),
      pgArray(entries.map(([, d]) => d.holders)),
      pgArray(entries.map(([, d]) => d.transfers)),
    ],
  )
}
