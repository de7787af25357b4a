import type pg from 'pg'
import { type TransferEvent, ZERO_ADDRESS } from '../events/types'
import { insertIfAllNew } from './db'
import { boolArray, int4Array, int8Array, varcharArray } from './pg-array'
import { copyBool, copyNumber, copyOrInsert, copyRows, copyText } from './pg-copy'
import {
  collectionOfKey,
  foldTransfers,
  loadTokenStates,
  recomputeTokenStates,
  splitMintedFirst,
  splitTokenKey,
  type TokenState,
  tokenKeyArrays,
  withKeys,
} from './token-state'

interface CollectionDelta {
  supply: number
  holders: number
  transfers: number
}

/**
 * Token state after `events` that come after all stored history (a sync
 * commit appending to the chain). Tokens first minted here are created
 * without being read (createMintedTokens); the others, or all of them when
 * one of those exists after all, are read and folded.
 */
export async function foldIntoTokens(client: pg.PoolClient, events: TransferEvent[]): Promise<void> {
  const all = withKeys(events)
  const { minted, rest } = splitMintedFirst(all)
  const created = foldTransfers(new Map(), minted)
  const allCreated = await createMintedTokens(client, created)
  const toRead = allCreated ? rest : all
  const old = await loadTokenStates(client, [...new Set(toRead.keys)])
  const next: Map<string, TokenState | null> = foldTransfers(old, toRead)
  if (allCreated) for (const [key, state] of created) next.set(key, state)
  await writeTokenStates(client, old, next, allCreated ? new Set(created.keys()) : undefined)
}

/** Rebuilds tokens from their stored history (imports, gap fills, rollbacks) and moves the counters. */
export async function rebuildTokens(client: pg.PoolClient, keys: string[]): Promise<void> {
  const old = await loadTokenStates(client, keys)
  await writeTokenStates(client, old, await recomputeTokenStates(client, keys))
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
  /** Keys of `next` whose rows createMintedTokens already inserted: counted, not written again. */
  created: ReadonlySet<string> = NO_KEYS,
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
    if (state) {
      if (before) updates.push([key, state])
      else if (!created.has(key)) inserts.push([key, state])
    } else if (before) deletes.push(key)
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
      // Their metadata documents go with them (token_documents has no foreign key).
      `WITH gone AS (DELETE FROM tokens t USING unnest($1::varchar[], $2::numeric[]) AS k(c, id)
                      WHERE t.collection_address = k.c AND t.token_id = k.id RETURNING t.id)
       DELETE FROM token_documents d USING gone WHERE d.token_id = gone.id`,
      tokenKeyArrays(deletes),
    )
  }
  await applyHolderDeltas(client, holderDeltas, delta)
  await applyCollectionDeltas(client, deltas)
}

const isHeld = (s: TokenState) => !s.burned && s.owner !== ZERO_ADDRESS
const NO_KEYS: ReadonlySet<string> = new Set()

/**
 * Inserts tokens whose first event in a batch is a mint, without reading
 * them first: in a backfill most tokens are new, and this saves an index
 * probe per token. Returns false, having inserted nothing, when any of them
 * exists after all (a burned token minted again, a contract that mints
 * twice): the caller then reads and folds them like every other token.
 */
function createMintedTokens(client: pg.PoolClient, states: Map<string, TokenState>): Promise<boolean> {
  return insertIfAllNew(client, () => writeTokens(client, [...states], 'new'))
}

const ON_CONFLICT = {
  // Not stored: read under the writers' lock in this transaction, or a unique violation says otherwise.
  new: '',
  stored: `ON CONFLICT (collection_address, token_id) DO UPDATE SET
             current_owner = excluded.current_owner, is_burned = excluded.is_burned,
             transfer_count = excluded.transfer_count, minted_block = excluded.minted_block,
             last_transfer_block = excluded.last_transfer_block, updated_at = now()`,
}

const TOKEN_COLUMNS =
  'collection_address, token_id, current_owner, is_burned, transfer_count, minted_block, last_transfer_block'

/**
 * Tokens not stored yet are plainly copied in (most tokens of a backfill are
 * new; a plain insert is a fifth cheaper than an upsert, COPY cheaper again:
 * store/pg-copy.ts); stored ones are upserted.
 */
async function writeTokens(
  client: pg.PoolClient,
  rows: Array<[string, TokenState]>,
  kind: keyof typeof ON_CONFLICT,
): Promise<void> {
  if (rows.length === 0) return
  const insert = async () => {
    await client.query(
      `INSERT INTO tokens (${TOKEN_COLUMNS})
       SELECT * FROM unnest($1::varchar[], $2::numeric[], $3::varchar[], $4::bool[], $5::int[], $6::bigint[], $7::bigint[])
       ${ON_CONFLICT[kind]}`,
      [
        ...tokenKeyArrays(rows.map(([key]) => key)),
        varcharArray(rows.map(([, s]) => s.owner)),
        boolArray(rows.map(([, s]) => s.burned)),
        int4Array(rows.map(([, s]) => s.transferCount)),
        int8Array(rows.map(([, s]) => s.mintedBlock)),
        int8Array(rows.map(([, s]) => s.lastTransferBlock)),
      ],
    )
  }
  if (kind === 'stored') return insert()
  await copyOrInsert(
    client,
    () => copyRows(client, `COPY tokens (${TOKEN_COLUMNS}) FROM STDIN`, tokenLines(rows)),
    insert,
  )
}

/** COPY lines of new tokens. */
function* tokenLines(rows: Array<[string, TokenState]>): Generator<string> {
  for (const [key, s] of rows) {
    const [collection, tokenId] = splitTokenKey(key)
    yield `${copyText(collection)}\t${tokenId}\t${copyText(s.owner)}\t${copyBool(s.burned)}\t${s.transferCount}\t${copyNumber(s.mintedBlock)}\t${copyNumber(s.lastTransferBlock)}\n`
  }
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
  const { rows } = await client.query<{ collection_address: string; owner: string; token_count: number }>(
    `INSERT INTO collection_holders (collection_address, owner, token_count)
     SELECT * FROM unnest($1::varchar[], $2::varchar[], $3::int[])
     ON CONFLICT (collection_address, owner) DO UPDATE
       SET token_count = collection_holders.token_count + excluded.token_count
     RETURNING collection_address, owner, token_count`,
    [
      varcharArray(split.map(([c]) => c)),
      varcharArray(split.map(([, o]) => o)),
      int4Array(entries.map(([, by]) => by)),
    ],
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
