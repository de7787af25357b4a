import type pg from 'pg'
import { type TransferEvent, ZERO_ADDRESS } from '../events/types'
import { numericArray, varcharArray } from './pg-array'

/** Derived state of one token, as stored in `tokens`. */
export interface TokenState {
  owner: string
  burned: boolean
  transferCount: number
  mintedBlock: bigint | null
  lastTransferBlock: bigint | null
}

export const tokenKey = (collection: string, tokenId: bigint) => `${collection}:${tokenId}`

/** The collection address of a token key. */
export const collectionOfKey = (key: string) => key.slice(0, key.indexOf(':'))

/** A token key's collection address and decimal token id, split as strings: no BigInt round trip. */
export function splitTokenKey(key: string): [collection: string, tokenId: string] {
  const at = key.indexOf(':')
  return [key.slice(0, at), key.slice(at + 1)]
}

/** Token keys as the two array parameters (collection addresses, decimal token ids) of a bulk statement. */
export function tokenKeyArrays(keys: Iterable<string>): [collections: Buffer, tokenIds: Buffer] {
  const collections: string[] = []
  const ids: string[] = []
  for (const key of keys) {
    const [collection, id] = splitTokenKey(key)
    collections.push(collection)
    ids.push(id)
  }
  return [varcharArray(collections), numericArray(ids)]
}

export async function loadTokenStates(
  client: pg.PoolClient,
  keys: string[],
): Promise<Map<string, TokenState>> {
  const states = new Map<string, TokenState>()
  if (keys.length === 0) return states
  // One unique-index lookup per key, whatever the table's statistics say: as
  // a join, the planner hashed a sequential scan of every token for each batch
  // of ~1,000 keys up to ~200,000 tokens (a LIMIT keeps the subquery a lookup).
  const { rows } = await client.query<TokenStateRow>(
    `SELECT t.collection_address, t.token_id::text AS token_id, t.current_owner, t.is_burned, t.transfer_count,
            t.minted_block::text AS minted_block, t.last_transfer_block::text AS last_transfer_block
       FROM unnest($1::varchar[], $2::numeric[]) AS k(c, id)
       CROSS JOIN LATERAL (
         SELECT collection_address, token_id, current_owner, is_burned, transfer_count, minted_block,
                last_transfer_block
           FROM tokens WHERE collection_address = k.c AND token_id = k.id LIMIT 1) AS t`,
    tokenKeyArrays(keys),
  )
  for (const row of rows) states.set(tokenKey(row.collection_address, BigInt(row.token_id)), rowToState(row))
  return states
}

/** The distinct token keys of `events`. */
export const tokenKeysOf = (events: TransferEvent[]): string[] => [
  ...new Set(events.map((e) => tokenKey(e.collection, e.tokenId))),
]

/** Events in chain order with their token keys (tokenKey), computed once per batch. */
export interface KeyedEvents {
  events: TransferEvent[]
  keys: string[]
}

export const withKeys = (events: TransferEvent[]): KeyedEvents => ({
  events,
  keys: events.map((e) => tokenKey(e.collection, e.tokenId)),
})

/** New state of each touched token when the events come after all stored history. */
export function foldTransfers(
  old: Map<string, TokenState>,
  { events, keys }: KeyedEvents,
): Map<string, TokenState> {
  const next = new Map<string, TokenState>()
  for (let i = 0; i < events.length; i++) {
    const e = events[i]!
    const key = keys[i]!
    const prev = next.get(key) ?? old.get(key)
    const isMint = e.from === ZERO_ADDRESS
    next.set(key, {
      owner: e.to,
      burned: e.to === ZERO_ADDRESS,
      transferCount: (prev?.transferCount ?? 0) + 1,
      mintedBlock: prev?.mintedBlock ?? (isMint ? e.blockNumber : null),
      lastTransferBlock: e.blockNumber,
    })
  }
  return next
}

/** The events of tokens whose first event here is a mint, apart from the rest. */
export function splitMintedFirst({ events, keys }: KeyedEvents): { minted: KeyedEvents; rest: KeyedEvents } {
  const mintedFirst = new Map<string, boolean>()
  const minted: KeyedEvents = { events: [], keys: [] }
  const rest: KeyedEvents = { events: [], keys: [] }
  for (let i = 0; i < events.length; i++) {
    const e = events[i]!
    const key = keys[i]!
    let isMinted = mintedFirst.get(key)
    if (isMinted === undefined) {
      isMinted = e.from === ZERO_ADDRESS
      mintedFirst.set(key, isMinted)
    }
    const to = isMinted ? minted : rest
    to.events.push(e)
    to.keys.push(key)
  }
  return { minted, rest }
}

/**
 * State of each token rebuilt from its stored history (after a rollback or an
 * import of older rows); null when no transfer of the token remains.
 */
export async function recomputeTokenStates(
  client: pg.PoolClient,
  keys: string[],
): Promise<Map<string, TokenState | null>> {
  const next = new Map<string, TokenState | null>()
  for (const key of keys) next.set(key, null)
  if (keys.length === 0) return next
  const { rows } = await client.query<TokenStateRow>(
    `WITH k AS (SELECT DISTINCT * FROM unnest($1::varchar[], $2::numeric[]) AS k(c, id)),
     history AS (
       SELECT tr.collection_address, tr.token_id, tr.to_address, tr.from_address, tr.block_number,
              row_number() OVER w AS rn,
              count(*) OVER (PARTITION BY tr.collection_address, tr.token_id) AS n,
              min(tr.block_number) FILTER (WHERE tr.from_address = $3)
                OVER (PARTITION BY tr.collection_address, tr.token_id) AS minted_block
         FROM transfers tr JOIN k ON tr.collection_address = k.c AND tr.token_id = k.id
       WINDOW w AS (PARTITION BY tr.collection_address, tr.token_id
                    ORDER BY tr.block_timestamp DESC, tr.block_number DESC, tr.log_index DESC,
                             tr.batch_index DESC, tr.id DESC))
     SELECT collection_address, token_id::text AS token_id, to_address AS current_owner,
            to_address = $3 AS is_burned, n AS transfer_count, minted_block::text AS minted_block,
            block_number::text AS last_transfer_block
       FROM history WHERE rn = 1`,
    [...tokenKeyArrays(keys), ZERO_ADDRESS],
  )
  for (const row of rows) next.set(tokenKey(row.collection_address, BigInt(row.token_id)), rowToState(row))
  return next
}

/** A token's state as both reads above select it (stored, or rebuilt from its transfers). */
interface TokenStateRow {
  collection_address: string
  token_id: string
  current_owner: string
  is_burned: boolean
  /** int4 when stored, int8 text when counted. */
  transfer_count: number | string
  minted_block: string | null
  last_transfer_block: string | null
}

function rowToState(row: TokenStateRow): TokenState {
  return {
    owner: row.current_owner,
    burned: row.is_burned,
    transferCount: Number(row.transfer_count),
    mintedBlock: row.minted_block === null ? null : BigInt(row.minted_block),
    lastTransferBlock: row.last_transfer_block === null ? null : BigInt(row.last_transfer_block),
  }
}

/** Deletes tokens that no longer have any transfer, with their metadata documents (token_documents has no foreign key). */
export async function deleteTokens(client: pg.PoolClient, keys: string[]): Promise<void> {
  if (keys.length === 0) return
  await client.query(
    `WITH gone AS (DELETE FROM tokens t USING unnest($1::varchar[], $2::numeric[]) AS k(c, id)
                    WHERE t.collection_address = k.c AND t.token_id = k.id RETURNING t.id)
     DELETE FROM token_documents d USING gone WHERE d.token_id = gone.id`,
    tokenKeyArrays(keys),
  )
}
