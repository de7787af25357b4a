import type pg from 'pg'
import { type TransferEvent, ZERO_ADDRESS } from '../events/types'
import { CounterDeltas } from './collection-counters'
import { int4Array, int8Array, numericArray, varcharArray } from './pg-array'
import { deleteTokens, splitTokenKey, tokenKey, tokenKeyArrays } from './token-state'

/*
 * Derived state of ERC-1155 tokens (docs/database.md, "ERC-1155"):
 *  - token_balances: each holder's balance (rows of balance 0 deleted);
 *  - tokens: total_supply (minted minus burned), holder_count (balances > 0),
 *    transfer_count, minted_block, last_transfer_block; current_owner stays the
 *    zero address and is_burned = (total_supply <= 0);
 *  - the collection counters through CounterDeltas: a token counts in
 *    total_supply while its supply is positive, a holder's collection_holders
 *    count is the number of the collection's tokens it holds a positive balance of.
 * Every change is a sum, so appending a batch adds its deltas without reading
 * the stored state first; a rollback or a filled gap recomputes the touched
 * tokens from their stored history (rebuildMultiTokens).
 */

/** What a batch changes of one token: sums, applied on top of the stored state. */
interface TokenDelta {
  collection: string
  /** Decimal, as the database returns it. */
  tokenId: string
  supply: bigint
  holders: number
  transfers: number
  mintedBlock: bigint | null
  lastTransferBlock: bigint
  /** The balance change of each holder the batch moves. */
  owners: Map<string, bigint>
}

/**
 * Token state after the `events` of ERC-1155 collections that come after all
 * stored history (in chain order). An ERC-721 Transfer among them moves no
 * value (docs/indexer.md, "ERC-1155").
 */
export async function foldIntoBalances(client: pg.PoolClient, events: TransferEvent[]): Promise<void> {
  if (events.length === 0) return
  const tokens = new Map<string, TokenDelta>()
  for (const e of events) {
    const amount = e.amount ?? 0n
    const key = tokenKey(e.collection, e.tokenId)
    let t = tokens.get(key)
    if (!t) {
      t = {
        collection: e.collection,
        tokenId: e.tokenId.toString(),
        supply: 0n,
        holders: 0,
        transfers: 0,
        mintedBlock: null,
        lastTransferBlock: e.blockNumber,
        owners: new Map(),
      }
      tokens.set(key, t)
    }
    t.transfers++
    t.lastTransferBlock = e.blockNumber
    if (e.from === ZERO_ADDRESS) {
      t.supply += amount
      t.mintedBlock ??= e.blockNumber
    } else t.owners.set(e.from, (t.owners.get(e.from) ?? 0n) - amount)
    if (e.to === ZERO_ADDRESS) t.supply -= amount
    else t.owners.set(e.to, (t.owners.get(e.to) ?? 0n) + amount)
  }

  const counters = new CounterDeltas()
  await addToBalances(client, tokens, counters)

  const entries = [...tokens.values()]
  const { rows } = await client.query<{
    collection_address: string
    token_id: string
    total_supply: string
    created: boolean
  }>(
    `INSERT INTO tokens (collection_address, token_id, current_owner, is_burned, transfer_count, minted_block,
                         last_transfer_block, total_supply, holder_count)
     SELECT c, id, $8, s <= 0, n, mb, lb, s, h
       FROM unnest($1::varchar[], $2::numeric[], $3::numeric[], $4::int[], $5::bigint[], $6::bigint[], $7::int[])
            AS d(c, id, s, n, mb, lb, h)
     ON CONFLICT (collection_address, token_id) DO UPDATE SET
       total_supply = coalesce(tokens.total_supply, 0) + excluded.total_supply,
       holder_count = coalesce(tokens.holder_count, 0) + excluded.holder_count,
       is_burned = coalesce(tokens.total_supply, 0) + excluded.total_supply <= 0,
       transfer_count = tokens.transfer_count + excluded.transfer_count,
       minted_block = coalesce(tokens.minted_block, excluded.minted_block),
       last_transfer_block = excluded.last_transfer_block, updated_at = now()
     RETURNING collection_address, token_id::text AS token_id, total_supply::text AS total_supply,
               (xmax = 0) AS created`,
    [
      varcharArray(entries.map((t) => t.collection)),
      numericArray(entries.map((t) => t.tokenId)),
      numericArray(entries.map((t) => t.supply)),
      int4Array(entries.map((t) => t.transfers)),
      int8Array(entries.map((t) => t.mintedBlock)),
      int8Array(entries.map((t) => t.lastTransferBlock)),
      int4Array(entries.map((t) => t.holders)),
      ZERO_ADDRESS,
    ],
  )
  for (const row of rows) {
    const t = tokens.get(`${row.collection_address}:${row.token_id}`)!
    const after = BigInt(row.total_supply)
    const before = row.created ? 0n : after - t.supply
    const d = counters.of(row.collection_address)
    d.transfers += t.transfers
    d.supply += (after > 0n ? 1 : 0) - (before > 0n ? 1 : 0)
  }
  await counters.apply(client)
}

/**
 * Adds the tokens' balance changes to token_balances. A balance that turns positive
 * or returns to zero moves the token's holder count and the holder's collection
 * count; a balance of zero is deleted.
 */
async function addToBalances(
  client: pg.PoolClient,
  tokens: Map<string, TokenDelta>,
  counters: CounterDeltas,
) {
  const collections: string[] = []
  const tokenIds: string[] = []
  const owners: string[] = []
  const changes: bigint[] = []
  for (const t of tokens.values()) {
    for (const [owner, by] of t.owners) {
      if (by === 0n) continue
      collections.push(t.collection)
      tokenIds.push(t.tokenId)
      owners.push(owner)
      changes.push(by)
    }
  }
  if (changes.length === 0) return
  const { rows } = await client.query<BalanceRow>(
    `INSERT INTO token_balances (collection_address, token_id, owner, balance)
     SELECT * FROM unnest($1::varchar[], $2::numeric[], $3::varchar[], $4::numeric[])
     ON CONFLICT (collection_address, token_id, owner) DO UPDATE
       SET balance = token_balances.balance + excluded.balance
     RETURNING collection_address, token_id::text AS token_id, owner, balance::text AS balance`,
    [varcharArray(collections), numericArray(tokenIds), varcharArray(owners), numericArray(changes)],
  )
  const emptied: BalanceRow[] = []
  for (const row of rows) {
    const t = tokens.get(`${row.collection_address}:${row.token_id}`)!
    const after = BigInt(row.balance)
    const before = after - t.owners.get(row.owner)!
    const by = (after > 0n ? 1 : 0) - (before > 0n ? 1 : 0)
    if (by !== 0) {
      t.holders += by
      counters.moveHolder(row.collection_address, row.owner, by)
    }
    if (after === 0n) emptied.push(row)
  }
  await deleteBalances(client, emptied)
}

interface BalanceRow {
  collection_address: string
  token_id: string
  owner: string
  balance: string
}

async function deleteBalances(client: pg.PoolClient, rows: BalanceRow[]) {
  if (rows.length === 0) return
  await client.query(
    `DELETE FROM token_balances b USING unnest($1::varchar[], $2::numeric[], $3::varchar[]) AS k(c, id, o)
      WHERE b.collection_address = k.c AND b.token_id = k.id AND b.owner = k.o AND b.balance = 0`,
    [
      varcharArray(rows.map((r) => r.collection_address)),
      numericArray(rows.map((r) => r.token_id)),
      varcharArray(rows.map((r) => r.owner)),
    ],
  )
}

interface StoredToken {
  supply: bigint
  transfers: number
}

/**
 * Recomputes ERC-1155 tokens from their stored transfers (after a rollback,
 * an import or a filled gap), a row without an amount (an ERC-721 Transfer)
 * moving nothing, as foldIntoBalances: balances, supply, holder count, and the
 * collection counters by the difference from what was stored. A token with
 * no transfer left is deleted with its metadata document.
 */
export async function rebuildMultiTokens(client: pg.PoolClient, keys: string[]): Promise<void> {
  if (keys.length === 0) return
  const params = tokenKeyArrays(keys)
  const oldTokens = await readTokens(client, params)
  const oldHeld = await heldBy(
    client.query<BalanceRow>(
      `DELETE FROM token_balances b USING unnest($1::varchar[], $2::numeric[]) AS k(c, id)
        WHERE b.collection_address = k.c AND b.token_id = k.id
        RETURNING b.collection_address, b.token_id::text AS token_id, b.owner, b.balance::text AS balance`,
      params,
    ),
  )
  const newHeld = await heldBy(
    client.query<BalanceRow>(
      `WITH k AS (SELECT DISTINCT * FROM unnest($1::varchar[], $2::numeric[]) AS k(c, id)),
       moves AS (
         SELECT tr.collection_address, tr.token_id, tr.to_address AS owner, coalesce(tr.amount, 0) AS v
           FROM transfers tr JOIN k ON tr.collection_address = k.c AND tr.token_id = k.id
          WHERE tr.to_address <> $3
         UNION ALL
         SELECT tr.collection_address, tr.token_id, tr.from_address, -coalesce(tr.amount, 0)
           FROM transfers tr JOIN k ON tr.collection_address = k.c AND tr.token_id = k.id
          WHERE tr.from_address <> $3)
       INSERT INTO token_balances (collection_address, token_id, owner, balance)
       SELECT collection_address, token_id, owner, sum(v) FROM moves
        GROUP BY collection_address, token_id, owner HAVING sum(v) <> 0
       RETURNING collection_address, token_id::text AS token_id, owner, balance::text AS balance`,
      [...params, ZERO_ADDRESS],
    ),
  )
  const { rows } = await client.query<{
    collection_address: string
    token_id: string
    supply: string
    n: string
  }>(
    `WITH k AS (SELECT DISTINCT * FROM unnest($1::varchar[], $2::numeric[]) AS k(c, id)),
     agg AS (
       SELECT tr.collection_address, tr.token_id,
              sum(CASE WHEN tr.from_address = $3 THEN coalesce(tr.amount, 0) ELSE 0 END)
                - sum(CASE WHEN tr.to_address = $3 THEN coalesce(tr.amount, 0) ELSE 0 END) AS supply,
              count(*) AS n,
              min(tr.block_number) FILTER (WHERE tr.from_address = $3) AS minted_block,
              max(tr.block_number) AS last_transfer_block
         FROM transfers tr JOIN k ON tr.collection_address = k.c AND tr.token_id = k.id
        GROUP BY tr.collection_address, tr.token_id)
     INSERT INTO tokens AS t (collection_address, token_id, current_owner, is_burned, transfer_count, minted_block,
                              last_transfer_block, total_supply, holder_count)
     SELECT collection_address, token_id, $3, supply <= 0, n, minted_block, last_transfer_block, supply,
            (SELECT count(*) FROM token_balances b
              WHERE b.collection_address = agg.collection_address AND b.token_id = agg.token_id AND b.balance > 0)
       FROM agg
     ON CONFLICT (collection_address, token_id) DO UPDATE SET
       current_owner = excluded.current_owner, is_burned = excluded.is_burned,
       transfer_count = excluded.transfer_count, minted_block = excluded.minted_block,
       last_transfer_block = excluded.last_transfer_block, total_supply = excluded.total_supply,
       holder_count = excluded.holder_count, updated_at = now()
     RETURNING collection_address, token_id::text AS token_id, total_supply::text AS supply,
               transfer_count::text AS n`,
    [...params, ZERO_ADDRESS],
  )
  const newTokens = new Map<string, StoredToken>()
  for (const r of rows)
    newTokens.set(`${r.collection_address}:${r.token_id}`, {
      supply: BigInt(r.supply),
      transfers: Number(r.n),
    })
  const gone = keys.filter((key) => oldTokens.has(key) && !newTokens.has(key))
  await deleteTokens(client, gone)

  const counters = new CounterDeltas()
  for (const key of new Set(keys)) {
    const [collection] = splitTokenKey(key)
    const before = oldTokens.get(key)
    const after = newTokens.get(key)
    const d = counters.of(collection)
    d.transfers += (after?.transfers ?? 0) - (before?.transfers ?? 0)
    d.supply += ((after?.supply ?? 0n) > 0n ? 1 : 0) - ((before?.supply ?? 0n) > 0n ? 1 : 0)
  }
  for (const [holder, count] of oldHeld) counters.moveHolder(...splitHolder(holder), -count)
  for (const [holder, count] of newHeld) counters.moveHolder(...splitHolder(holder), count)
  await counters.apply(client)
}

/** Tokens held with a positive balance, per `collection|owner`. */
async function heldBy(query: Promise<pg.QueryResult<BalanceRow>>): Promise<Map<string, number>> {
  const held = new Map<string, number>()
  for (const row of (await query).rows) {
    if (BigInt(row.balance) <= 0n) continue
    const key = `${row.collection_address}|${row.owner}`
    held.set(key, (held.get(key) ?? 0) + 1)
  }
  return held
}

const splitHolder = (key: string) => key.split('|') as [string, string]

async function readTokens(
  client: pg.PoolClient,
  params: [Buffer, Buffer],
): Promise<Map<string, StoredToken>> {
  const { rows } = await client.query<{
    collection_address: string
    token_id: string
    supply: string
    n: number
  }>(
    `SELECT t.collection_address, t.token_id::text AS token_id, t.total_supply::text AS supply, t.transfer_count AS n
       FROM unnest($1::varchar[], $2::numeric[]) AS k(c, id)
       JOIN tokens t ON t.collection_address = k.c AND t.token_id = k.id AND t.total_supply IS NOT NULL`,
    params,
  )
  return new Map(
    rows.map((r) => [
      `${r.collection_address}:${r.token_id}`,
      { supply: BigInt(r.supply), transfers: Number(r.n) },
    ]),
  )
}
