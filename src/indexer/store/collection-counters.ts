import type pg from 'pg'
import { int4Array, int8Array, varcharArray } from './pg-array'

interface CollectionDelta {
  supply: number
  holders: number
  transfers: number
}

/**
 * How a commit moves the collection counters (collections.total_supply,
 * unique_holders, total_transfers) and collection_holders, gathered while
 * token state is written and applied once at the end, so counters never
 * need a scan. Shared by ERC-721 tokens and ERC-1155 balances: a holder's
 * count is the number of the collection's tokens it holds.
 */
export class CounterDeltas {
  private readonly collections = new Map<string, CollectionDelta>()
  /** Per collection, each owner's change of token count. */
  private readonly holders = new Map<string, Map<string, number>>()

  /** The running delta of one collection. */
  of(collection: string): CollectionDelta {
    let d = this.collections.get(collection)
    if (!d) {
      d = { supply: 0, holders: 0, transfers: 0 }
      this.collections.set(collection, d)
    }
    return d
  }

  /** `owner` holds `by` more (or fewer) of the collection's tokens. */
  moveHolder(collection: string, owner: string, by: number) {
    let owners = this.holders.get(collection)
    if (!owners) {
      owners = new Map()
      this.holders.set(collection, owners)
    }
    owners.set(owner, (owners.get(owner) ?? 0) + by)
  }

  async apply(client: pg.PoolClient) {
    await applyHolderDeltas(client, this.holders, (c) => this.of(c))
    await applyCollectionDeltas(client, this.collections)
  }
}

/** collection_holders counts tokens per (collection, owner); a count crossing zero moves unique_holders. */
async function applyHolderDeltas(
  client: pg.PoolClient,
  holderDeltas: Map<string, Map<string, number>>,
  delta: (collection: string) => CollectionDelta,
) {
  const collections: string[] = []
  const owners: string[] = []
  const changes: number[] = []
  for (const [collection, byOwner] of holderDeltas) {
    for (const [owner, by] of byOwner) {
      if (by === 0) continue
      collections.push(collection)
      owners.push(owner)
      changes.push(by)
    }
  }
  if (changes.length === 0) return
  const { rows } = await client.query<{ collection_address: string; owner: string; token_count: number }>(
    `INSERT INTO collection_holders (collection_address, owner, token_count)
     SELECT * FROM unnest($1::varchar[], $2::varchar[], $3::int[])
     ON CONFLICT (collection_address, owner) DO UPDATE
       SET token_count = collection_holders.token_count + excluded.token_count
     RETURNING collection_address, owner, token_count`,
    [varcharArray(collections), varcharArray(owners), int4Array(changes)],
  )
  const emptied: Array<[string, string]> = []
  for (const row of rows) {
    const after = Number(row.token_count)
    const before = after - (holderDeltas.get(row.collection_address)?.get(row.owner) ?? 0)
    if (before <= 0 && after > 0) delta(row.collection_address).holders++
    if (before > 0 && after <= 0) delta(row.collection_address).holders--
    if (after <= 0) emptied.push([row.collection_address, row.owner])
  }
  if (emptied.length > 0) {
    await client.query(
      `DELETE FROM collection_holders h USING unnest($1::varchar[], $2::varchar[]) AS k(c, o)
        WHERE h.collection_address = k.c AND h.owner = k.o AND h.token_count <= 0`,
      [varcharArray(emptied.map(([c]) => c)), varcharArray(emptied.map(([, o]) => o))],
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
      varcharArray(entries.map(([a]) => a)),
      int8Array(entries.map(([, d]) => d.supply)),
      int8Array(entries.map(([, d]) => d.holders)),
      int8Array(entries.map(([, d]) => d.transfers)),
    ],
  )
}
