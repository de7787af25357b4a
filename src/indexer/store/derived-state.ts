import type pg from 'pg'
import { type TransferEvent, ZERO_ADDRESS } from '../events/types'
import { CounterDeltas } from './collection-counters'
import { collectionsOfStandard } from './collections'
import { insertIfAllNew } from './db'
import { foldIntoBalances, rebuildMultiTokens } from './multi-token-state'
import { boolArray, int4Array, int8Array, varcharArray } from './pg-array'
import { copyBool, copyNumber, copyOrInsert, copyRows, copyText } from './pg-copy'
import {
  collectionOfKey,
  deleteTokens,
  foldTransfers,
  loadTokenStates,
  recomputeTokenStates,
  splitMintedFirst,
  splitTokenKey,
  type TokenState,
  tokenKeyArrays,
  withKeys,
} from './token-state'

/**
 * Token state after `events` that come after all stored history (a sync
 * commit appending to the chain). Tokens first minted here are created
 * without being read (createMintedTokens); the others, or all of them when
 * one of those exists after all, are read and folded.
 *
 * A collection's events are folded by its standard (the standard of the first
 * event seen from it), whatever each event's own, as rebuildTokens does: a
 * contract that emits both an ERC-721 Transfer and an ERC-1155 TransferSingle
 * for one id counts it once, the same way in every path (docs/indexer.md, "ERC-1155").
 */
export async function foldIntoTokens(client: pg.PoolClient, events: TransferEvent[]): Promise<void> {
  if (events.length === 0) return
  const multiCollections = await collectionsOfStandard(
    client,
    [...new Set(events.map((e) => e.collection))],
    'ERC1155',
  )
  if (multiCollections.size > 0) {
    await foldIntoBalances(
      client,
      events.filter((e) => multiCollections.has(e.collection)),
    )
    events = events.filter((e) => !multiCollections.has(e.collection))
  }
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

/**
 * Rebuilds tokens from their stored history (imports, gap fills, rollbacks) and moves the counters.
 * ERC-1155 tokens are those of ERC-1155 collections (as foldIntoTokens routes them).
 */
export async function rebuildTokens(client: pg.PoolClient, keys: string[]): Promise<void> {
  const multiCollections = await collectionsOfStandard(
    client,
    [...new Set(keys.map(collectionOfKey))],
    'ERC1155',
  )
  const multi = new Set(keys.filter((key) => multiCollections.has(collectionOfKey(key))))
  if (multi.size > 0) {
    await rebuildMultiTokens(client, [...multi])
    keys = keys.filter((key) => !multi.has(key))
  }
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
  const counters = new CounterDeltas()

  for (const [key, state] of next) {
    const before = old.get(key)
    const collection = collectionOfKey(key)
    if (state) {
      if (before) updates.push([key, state])
      else if (!created.has(key)) inserts.push([key, state])
    } else if (before) deletes.push(key)
    else continue
    const d = counters.of(collection)
    d.transfers += (state?.transferCount ?? 0) - (before?.transferCount ?? 0)
    if (before && isHeld(before)) {
      d.supply--
      counters.moveHolder(collection, before.owner, -1)
    }
    if (state && isHeld(state)) {
      d.supply++
      counters.moveHolder(collection, state.owner, +1)
    }
  }

  await writeTokens(client, inserts, 'new')
  await writeTokens(client, updates, 'stored')
  await deleteTokens(client, deletes)
  await counters.apply(client)
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
