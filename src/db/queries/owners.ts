/**
 * Ownership views (docs/api.md, "Ownership views"): a collection's holders, a
 * wallet's collections and transfers, and the snapshots at a past block.
 *
 * Current state is read from the derived tables the indexer keeps in step with
 * the transfers (collection_holders, token_balances), each list a keyset page
 * on one index range:
 *  - a collection's holders: collection_holders_count_idx (collection_address,
 *    token_count DESC, owner);
 *  - a wallet's collections: collection_holders_owner_idx (owner,
 *    collection_address);
 *  - a wallet's transfers: transfers_from_feed_idx and transfers_to_feed_idx
 *    (address, block_timestamp DESC, id DESC), two ranges merged.
 *
 * A snapshot at block B is computed from the canonical transfers with
 * block_number <= B in chain order — (block_timestamp, block_number, log_index,
 * batch_index, id), the order the indexer derives current state in
 * (src/indexer/store/token-state.ts) — so the snapshot at the head is the
 * current state. Imported rows (block_number 0: history from before the
 * indexed window whose block is unknown) count at every block, in their time
 * order. ERC-1155 balances are sums of amounts in minus amounts out.
 */
import type pg from 'pg'
import { ZERO_ADDRESS } from '@/lib/schemas'
import type { CollectionHistoryRow } from './collections'
import { HISTORY_STAMP_SQL } from './indexer-state'
import { MEDIA_JOINS } from './media'
import {
  type BeforeKey,
  fromMicrosSql,
  inClientTransaction,
  microsInt8Sql,
  queryOnGenericPlan,
  type ReadDb,
} from './sql'
import type { NftColumnOptions, NftRow } from './tokens'
import { nftColumns } from './tokens'
import { TRANSFER_COLUMNS, type TransferRow } from './transfers'

/**
 * Sort memory of a snapshot computation (one statement per snapshot, not per
 * page): a collection's history sorts in memory instead of spilling to disk
 * (measured on the bench index: 10,000 tokens, 100,000 transfers, 0.6 s
 * instead of 0.8–1.1 s with the default 4 MB).
 */
export const SNAPSHOT_WORK_MEM = '64MB'

/**
 * A snapshot statement may run this many times the pool's statement timeout
 * (DB_STATEMENT_TIMEOUT_MS: 5 s by default). It runs once per snapshot, its
 * result is kept (the snapshot cache, single flight, at most
 * SNAPSHOT_COMPUTATIONS at a time), and a snapshot that outlives the timeout
 * would outlive it on every retry: the middle of the history of a collection
 * of 1,500,000 tokens takes 7–9 s on the bench's scale 3 (docs/api.md, "Snapshots").
 */
export const SNAPSHOT_TIMEOUT_FACTOR = 6

/** The confirmed history a snapshot is asked of: the indexer state as the request read it. */
export interface SnapshotBasis {
  network: string
  /** indexer_state.history_rewritten_at (HISTORY_STAMP_SQL), the key its snapshots are kept under. */
  historyRewrittenAt: string
}

/**
 * The confirmed history was rewritten (a reorganisation deeper than CONFIRMATIONS, a repair)
 * after the request read the indexer state and before its snapshot's transaction began: the
 * snapshot would describe the new history under the old one's key, or a block no longer
 * confirmed. Nothing is kept; the request may be retried at once.
 */
export class HistoryRewrittenMeanwhile extends Error {
  override name = 'HistoryRewrittenMeanwhile'
}

/** Runs one statement of a snapshot's transaction: its text and values, or a named (prepared) statement. */
export type SnapshotRun = <Row extends pg.QueryResultRow>(
  sql: string | NamedStatement,
  params?: unknown[],
) => Promise<Row[]>

type NamedStatement = pg.QueryConfig & { name: string }

/**
 * Runs a snapshot's statements in one read-only REPEATABLE READ transaction,
 * with SNAPSHOT_WORK_MEM and SNAPSHOT_TIMEOUT_FACTOR times the statement
 * timeout: the statements that bound the block and the one that computes
 * the snapshot see one state of the database, whatever the indexer commits
 * meanwhile, and with a `basis`, that state is the request's (its
 * history_rewritten_at, read in the same transaction first; otherwise
 * HistoryRewrittenMeanwhile). Memoize is off: every way reads each token or
 * holder once, so its cache only missed (10 % of a token-by-token snapshot
 * of 1,500,000 tokens). `genericPlans`: named statements run on their one
 * generic plan, as queryOnGenericPlan runs them. The settings and the basis
 * are one statement, the transaction's first.
 */
export function inSnapshotTransaction<T>(
  db: ReadDb,
  basis: SnapshotBasis | undefined,
  work: (run: SnapshotRun) => Promise<T>,
  options: { genericPlans?: boolean } = {},
): Promise<T> {
  return inClientTransaction(db, 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY', async (client) => {
    const generic = options.genericPlans ? `, set_config('plan_cache_mode', 'force_generic_plan', true)` : ''
    const stamp = basis
      ? `, (SELECT ${HISTORY_STAMP_SQL} FROM indexer_state WHERE network = $1) AS stamp`
      : ''
    const { rows: settings } = await client.query<{ ms: string; stamp?: string | null }>(
      `SELECT set_config('work_mem', '${SNAPSHOT_WORK_MEM}', true), set_config('enable_memoize', 'off', true),
              set_config('statement_timeout', t.ms::text, true)${generic}, t.ms${stamp}
         FROM (SELECT (extract(epoch FROM current_setting('statement_timeout')::interval)
                 * 1000 * ${SNAPSHOT_TIMEOUT_FACTOR})::int8 AS ms) t`,
      basis ? [basis.network] : [],
    )
    if (basis && (settings[0]?.stamp ?? '') !== basis.historyRewrittenAt)
      throw new HistoryRewrittenMeanwhile(
        'The confirmed history was rewritten while the snapshot was asked for.',
      )
    // The client's own bound (db/pool.ts: twice the statement timeout) stretched the same way.
    const timeout = Number(settings[0]!.ms)
    return work(
      async (sql, params) =>
        (
          await client.query({
            ...(typeof sql === 'string' ? { text: sql, values: params } : sql),
            ...(timeout > 0 ? { query_timeout: 2 * timeout } : {}),
          })
        ).rows,
    )
  })
}

/** The chain order of transfers, newest first (as the indexer's rebuild of a token's state). */
export const CHAIN_ORDER_DESC = `tr.block_timestamp DESC, tr.block_number DESC, tr.log_index DESC,
  tr.batch_index DESC, tr.id DESC`

// ───────────────────────── current state ─────────────────────────

/** A collection (no row at all: unknown), then one of its holders (owner null when it has none). */
export interface CollectionOwnerRow extends CollectionHistoryRow {
  collection_standard: string
  owner: string | null
  token_count: number | null
  /** ERC-1155 collections: the owner's balances summed over the collection's tokens. */
  balance: string | null
}

/**
 * One round trip: the collection (for its standard and coverage) and a page
 * of its holders, most tokens first, then by owner (bytewise), after the
 * cursor. Mixed directions have no row comparison: after a cursor the page is
 * the rest of its count, then the smaller counts, each one range of
 * collection_holders_count_idx. An ERC-1155 holder's balance is the sum of its
 * token_balances in the collection (token_balances_owner_idx, one range).
 */
export async function selectCollectionOwners(
  db: ReadDb,
  page: { address: string; after?: { tokenCount: number; owner: string } | undefined; rows: number },
): Promise<CollectionOwnerRow[]> {
  const params: unknown[] = [page.address, page.rows]
  let holders = `SELECT h.owner, h.token_count FROM collection_holders h
                  WHERE h.collection_address = $1 AND h.token_count > 0
                  ORDER BY h.token_count DESC, h.owner LIMIT $2`
  if (page.after !== undefined) {
    params.push(page.after.tokenCount, page.after.owner)
    holders = `SELECT * FROM (
        (SELECT h.owner, h.token_count FROM collection_holders h
          WHERE h.collection_address = $1 AND h.token_count = $3::int AND h.owner > $4::varchar
          ORDER BY h.owner LIMIT $2)
        UNION ALL
        (SELECT h.owner, h.token_count FROM collection_holders h
          WHERE h.collection_address = $1 AND h.token_count > 0 AND h.token_count < $3::int
          ORDER BY h.token_count DESC, h.owner LIMIT $2)
      ) q ORDER BY q.token_count DESC, q.owner LIMIT $2`
  }
  const { rows } = await db.pool.query<CollectionOwnerRow>(
    `SELECT c.standard AS collection_standard, c.deploy_block::text AS deploy_block,
            c.first_seen_block::text AS first_seen_block, p.owner, p.token_count, p.balance
       FROM collections c
       LEFT JOIN LATERAL (
         SELECT h.owner, h.token_count,
                CASE WHEN c.standard = 'ERC1155' THEN
                  (SELECT sum(b.balance)::text FROM token_balances b
                    WHERE b.owner = h.owner AND b.collection_address = $1 AND b.balance > 0) END AS balance
           FROM (${holders}) h
       ) p ON true
      WHERE c.address = $1
      ORDER BY p.token_count DESC, p.owner`,
    params,
  )
  return rows
}

export interface OwnerCollectionRow {
  collection_address: string
  token_count: number
  name: string | null
  symbol: string | null
  standard: string | null
  /** ERC-1155 collections: the owner's balances summed over the collection's tokens. */
  balance: string | null
}

/**
 * The collections of which `owner` holds a token (ERC-721) or a positive
 * balance of a token (ERC-1155), by collection address, after the cursor
 * (collection_holders_owner_idx, index-only), with each collection's names
 * and standard looked up by key (a LATERAL per row: never a hash of every
 * collection).
 */
export async function selectOwnerCollections(
  db: ReadDb,
  page: { owner: string; after?: string | undefined; rows: number },
): Promise<OwnerCollectionRow[]> {
  const params: unknown[] = [page.owner, page.rows]
  const where = ['h.owner = $1']
  if (page.after !== undefined) {
    params.push(page.after)
    where.push('h.collection_address > $3::varchar')
  }
  const { rows } = await db.pool.query<OwnerCollectionRow>(
    `SELECT h.collection_address, h.token_count, c.name, c.symbol, c.standard,
            CASE WHEN c.standard = 'ERC1155' THEN
              (SELECT sum(b.balance)::text FROM token_balances b
                WHERE b.owner = $1 AND b.collection_address = h.collection_address AND b.balance > 0) END AS balance
       FROM (SELECT h.collection_address, h.token_count FROM collection_holders h
              WHERE ${where.join(' AND ')} AND h.token_count > 0
              ORDER BY h.collection_address LIMIT $2) h
       LEFT JOIN LATERAL (
         SELECT c.name, c.symbol, c.standard FROM collections c WHERE c.address = h.collection_address LIMIT 1
       ) c ON true
      ORDER BY h.collection_address`,
    params,
  )
  return rows
}

export type TransferDirection = 'in' | 'out' | 'all'

/**
 * A wallet's transfers, newest first by (block_timestamp, id), before the
 * cursor: `out` is one range of transfers_from_feed_idx, `in` one of
 * transfers_to_feed_idx, `all` both merged, the second leaving out rows whose
 * from is the wallet (a self-transfer is in both ranges and listed once).
 * Each range reads at most `rows` entries; then the page's rows by primary key.
 */
export async function selectOwnerTransfers(
  db: ReadDb,
  page: { owner: string; direction: TransferDirection; before?: BeforeKey | undefined; rows: number },
): Promise<TransferRow[]> {
  const params: unknown[] = [page.owner, page.rows]
  const cursor: string[] = []
  if (page.before !== undefined) {
    params.push(page.before.timestamp, page.before.id)
    cursor.push('(tr.block_timestamp, tr.id) < ($3::timestamptz, $4::int8)')
  }
  const arm = (conditions: string[]) =>
    `SELECT tr.id, tr.block_timestamp FROM transfers tr WHERE ${[...conditions, ...cursor].join(' AND ')}
      ORDER BY tr.block_timestamp DESC, tr.id DESC LIMIT $2`
  const out = arm(['tr.from_address = $1'])
  const ids =
    page.direction === 'out'
      ? out
      : page.direction === 'in'
        ? arm(['tr.to_address = $1'])
        : `SELECT id FROM ((${out}) UNION ALL (${arm(['tr.to_address = $1', 'tr.from_address <> $1'])})) merged
            ORDER BY block_timestamp DESC, id DESC LIMIT $2`
  const { rows } = await db.pool.query<TransferRow>(
    `SELECT ${TRANSFER_COLUMNS} FROM (${ids}) page JOIN transfers tr ON tr.id = page.id
      ORDER BY tr.block_timestamp DESC, tr.id DESC`,
    params,
  )
  return rows
}

// ───────────────────────── snapshots at a past block ─────────────────────────

/** One holder of a collection at a block. */
export interface HolderAtRow {
  owner: string
  token_count: number
  /** ERC-1155 collections: the sum of the owner's balances; null on ERC-721 collections. */
  balance: string | null
}

/**
 * The ways to compute an ERC-721 collection's holders at a block
 * (docs/database.md, "Snapshots"); an ERC-1155 collection's are always
 * computed forward.
 *  - forward: from the collection's history up to the block;
 *  - back: from its holders now and its changes since the block;
 *  - per-token: from each of its tokens' last transfer up to the block.
 */
export type HoldersAtArm = 'forward' | 'back' | 'per-token'

/** What the choice of a way is made from: the block, the collection's span and its stored counters. */
export interface HoldersAtCostInputs {
  multi: boolean
  block: bigint
  /** The last block seen: the collection's history spans since..head. */
  head: bigint
  /** The collection's first block (first seen, or deployed). */
  since: bigint
  /** collections.total_transfers. */
  transfers: number
  /** The collection's tokens rows (ERC-721: collections.total_supply plus its burned tokens). */
  tokens: number
  /** collections.unique_holders: the rows of collection_holders the back way reads. */
  holders: number
  /**
   * Tokens that existed at the block, estimated by the collection's mints up
   * to it (at most `tokens`); unknown: all of them, at worst.
   */
  minted?: number | undefined
}

/**
 * What each way reads, in transfer rows of the forward way (its unit: each is
 * read from an index range and its heap row, then sorted), measured on
 * bench:seed's index (bench/RESULTS.md, "API: ownership views"):
 *  - BACK_ROW: a transfer since the block, on the back way;
 *  - BACK_TOKEN: a token those transfers touch (looked up in tokens, then
 *    probed for its owner at the block); taken as one per transfer, up to the
 *    collection's tokens;
 *  - HOLDER: a row of collection_holders, on the back way;
 *  - PROBE_MISS: a token on the per-token way that did not exist at the
 *    block (its entry in tokens_collection_token_key, a descent of
 *    transfers_token_feed_idx that finds nothing);
 *  - PROBE_HIT: a token that existed (also the heap row of its last
 *    transfer, and the sort of its transfers of that time into chain order).
 */
export const HOLDERS_AT_COST = { BACK_ROW: 1, BACK_TOKEN: 9, HOLDER: 1, PROBE_MISS: 2, PROBE_HIT: 7 } as const

/**
 * Estimated cost of each way. Activity is taken as even over the
 * collection's blocks: its history up to the block is that share of its
 * transfers, its changes since the rest. An ERC-1155 collection is computed
 * forward only.
 */
export function holdersAtCosts(i: HoldersAtCostInputs): Record<HoldersAtArm, number> {
  const span = i.head - i.since + 1n
  const upTo = i.block < i.since ? 0n : i.block >= i.head ? span : i.block - i.since + 1n
  const share = span > 0n ? Number(upTo) / Number(span) : 1
  const forward = i.transfers * share
  if (i.multi) return { forward, back: Number.POSITIVE_INFINITY, 'per-token': Number.POSITIVE_INFINITY }
  const c = HOLDERS_AT_COST
  const changes = i.transfers * (1 - share)
  const existed = Math.min(i.tokens, i.minted ?? i.tokens)
  return {
    forward,
    back: changes * c.BACK_ROW + Math.min(i.tokens, changes) * c.BACK_TOKEN + i.holders * c.HOLDER,
    'per-token': (i.tokens - existed) * c.PROBE_MISS + existed * c.PROBE_HIT,
  }
}

/** The way of least estimated cost (on a tie: forward, then back, then per-token). */
export function chooseHoldersAtArm(i: HoldersAtCostInputs): HoldersAtArm {
  const costs = holdersAtCosts(i)
  let best: HoldersAtArm = 'forward'
  for (const arm of ['back', 'per-token'] as const) if (costs[arm] < costs[best]) best = arm
  return best
}

/**
 * Whether the tokens that existed at the block decide the way: the choice
 * differs between none and all of them having existed. Only then are the
 * mints up to the block counted (at most `tokens` index entries).
 */
export function mintsDecideArm(i: HoldersAtCostInputs): boolean {
  return chooseHoldersAtArm({ ...i, minted: 0 }) !== chooseHoldersAtArm({ ...i, minted: i.tokens })
}

/**
 * Every holder of a collection after block `block` was applied, most tokens
 * first, then by owner (bytewise). ERC-721: each token's owner is the
 * recipient of its last transfer at or before the block (burned: the zero
 * address, not a holder). ERC-1155: each (token, holder) balance is the sum of
 * amounts received minus amounts sent; a holder counts the tokens of which its
 * balance is positive. One statement bounds the block in time and reads the
 * collection's counters (and, when they decide the way, one counts the mints
 * up to the block), then one computes the holders the way of least estimated
 * cost (chooseHoldersAtArm; `arm` forces one, for tests: each gives the same
 * answer).
 */
export function selectCollectionOwnersAt(
  db: ReadDb,
  q: HoldersAtQuery & { basis?: SnapshotBasis },
): Promise<HolderAtRow[]> {
  return inSnapshotTransaction(db, q.basis, (run) => collectionOwnersAt(run, q))
}

interface HoldersAtQuery {
  address: string
  block: bigint
  multi: boolean
  head: bigint
  since: bigint
  arm?: HoldersAtArm
}

async function collectionOwnersAt(run: SnapshotRun, q: HoldersAtQuery): Promise<HolderAtRow[]> {
  const block = q.block.toString()
  const bounds = await blockBounds(run, q.address, block, q.multi)
  let arm = q.multi ? 'forward' : q.arm
  if (arm === undefined) {
    const inputs: HoldersAtCostInputs = {
      multi: q.multi,
      block: q.block,
      head: q.head,
      since: q.since,
      transfers: Number(bounds.transfers),
      tokens: Number(bounds.tokens),
      holders: Number(bounds.holders),
    }
    if (mintsDecideArm(inputs)) inputs.minted = await mintsUntil(run, q.address, bounds.until, bounds.tokens)
    arm = chooseHoldersAtArm(inputs)
  }
  const params = [q.address, block, ZERO_ADDRESS]
  if (arm === 'back') return run<HolderAtRow>(holdersBackFromNow, [...params, bounds.after])
  if (arm === 'per-token') return run<HolderAtRow>(holdersPerToken, [...params, bounds.until])
  const sql = q.multi
    ? `WITH history AS (
         SELECT tr.token_id, tr.from_address, tr.to_address, coalesce(tr.amount, 0) AS amount FROM transfers tr
          WHERE tr.collection_address = $1 AND tr.event_type = ANY(${EVENT_TYPES})
            AND tr.block_timestamp <= $4 AND tr.block_number <= $2
       ), moves AS (
         SELECT token_id, to_address AS owner, amount FROM history WHERE to_address <> $3
         UNION ALL
         SELECT token_id, from_address, -amount FROM history WHERE from_address <> $3
       ), held AS (
         SELECT owner, token_id, sum(amount) AS balance FROM moves
          GROUP BY owner, token_id HAVING sum(amount) > 0
       )
       SELECT owner, count(*)::int AS token_count, sum(balance)::text AS balance
         FROM held GROUP BY owner ORDER BY token_count DESC, owner`
    : `SELECT last.owner, count(*)::int AS token_count, NULL::text AS balance
         FROM (SELECT DISTINCT ON (tr.token_id) tr.to_address AS owner FROM transfers tr
                WHERE tr.collection_address = $1 AND tr.event_type = ANY(${EVENT_TYPES})
                  AND tr.block_timestamp <= $4 AND tr.block_number <= $2
                ORDER BY tr.token_id, ${CHAIN_ORDER_DESC}) last
        WHERE last.owner <> $3
        GROUP BY last.owner ORDER BY token_count DESC, last.owner`
  return run<HolderAtRow>(sql, [...params, bounds.until])
}

/** Every event type: a collection's transfers in time order are ranges of transfers_collection_event_type_feed_idx. */
const EVENT_TYPES = `ARRAY['mint', 'transfer', 'burn']::varchar[]`

/**
 * The collection's last transfer in chain order (block_timestamp, id) with
 * block_timestamp at or before `at` (a timestamptz expression): the last
 * entry of each event type's range, the latest of the three, as an int8
 * array: its time in microseconds, its block.
 */
const lastTransferAtOrBefore = (at: string) => `(
  SELECT ARRAY[p.us, p.block_number] FROM unnest(${EVENT_TYPES}) e CROSS JOIN LATERAL (
    SELECT ${microsInt8Sql('tr.block_timestamp')} AS us, tr.id, tr.block_number FROM transfers tr
     WHERE tr.collection_address = $1 AND tr.event_type = e AND tr.block_timestamp <= ${at}
     ORDER BY tr.block_timestamp DESC, tr.id DESC LIMIT 1) p
   ORDER BY p.us DESC, p.id DESC LIMIT 1)`

/**
 * Timestamps that bound a collection's transfers by block, so that its
 * history up to block B (`until`: no transfer of a block up to B is later)
 * or its changes since (`after`: no transfer of a later block is earlier) is
 * one time range per event type of transfers_collection_event_type_feed_idx
 * (the table has no index by block), and each token's last transfer up to B
 * one descent of transfers_token_feed_idx. The exact block condition stays
 * beside the bound.
 *
 * Block timestamps never decrease along the chain, and imported rows (block
 * 0) are older than the indexed window, so along the collection's transfers
 * in chain order the blocks up to B come first. A bisection on time finds
 * where they end: `lo` and `hi` (microseconds) such that every transfer at or
 * before `lo` is of a block up to B and every one after `hi` of a later
 * block, halved until they are a microsecond apart; each step is the last
 * transfer at or before the middle (an index descent per event type): of a
 * block up to B, the boundary is after the middle; otherwise it is at or
 * before that transfer. About log2 of the collection's time span in
 * microseconds steps (47 for 3 years), whatever its size.
 *
 * The same statement reads the counters the choice of a way is made from.
 */
async function blockBounds(
  run: SnapshotRun,
  address: string,
  block: string,
  multi: boolean,
): Promise<{ until: string; after: string; transfers: string; tokens: string; holders: string }> {
  const rows = await run<{
    until: string | null
    after: string | null
    transfers: string | null
    tokens: string | null
    holders: string | null
  }>(
    `WITH RECURSIVE ends AS (
       SELECT (${lastTransferAtOrBefore(`'infinity'::timestamptz`)}) AS newest,
              (SELECT ARRAY[p.us, p.block_number] FROM unnest(${EVENT_TYPES}) e CROSS JOIN LATERAL (
                 SELECT ${microsInt8Sql('tr.block_timestamp')} AS us, tr.id, tr.block_number FROM transfers tr
                  WHERE tr.collection_address = $1 AND tr.event_type = e
                  ORDER BY tr.block_timestamp, tr.id LIMIT 1) p
                ORDER BY p.us, p.id LIMIT 1) AS oldest
     ), search(lo, hi) AS (
       SELECT CASE WHEN newest[2] <= $2 THEN newest[1] ELSE oldest[1] - 1 END,
              CASE WHEN oldest[2] > $2 THEN oldest[1] - 1 ELSE newest[1] END
         FROM ends WHERE newest IS NOT NULL
       UNION ALL
       SELECT CASE WHEN m.probe[2] > $2 THEN s.lo ELSE m.mid END,
              CASE WHEN m.probe[2] > $2 THEN m.probe[1] ELSE s.hi END
         FROM search s
        CROSS JOIN LATERAL (SELECT s.lo + (s.hi - s.lo) / 2 AS mid) h
        CROSS JOIN LATERAL (SELECT h.mid, ${lastTransferAtOrBefore(fromMicrosSql('h.mid'))} AS probe) m
        WHERE s.hi - s.lo > 1
     )
     SELECT ${fromMicrosSql('min(s.hi)')}::text AS until, ${fromMicrosSql('max(s.lo) + 1')}::text AS after,
            c.total_transfers::text AS transfers, c.unique_holders::text AS holders,
            CASE WHEN $3 THEN c.total_supply::text ELSE
              (c.total_supply + (SELECT count(*) FROM tokens t
                                  WHERE t.collection_address = $1 AND t.is_burned))::text END AS tokens
       FROM (SELECT 1) one
       LEFT JOIN search s ON true
       LEFT JOIN collections c ON c.address = $1
      GROUP BY c.address, c.total_transfers, c.unique_holders, c.total_supply`,
    [address, block, multi],
  )
  const row = rows[0]
  return {
    // No transfer at all: nothing up to the block, nothing since.
    until: row?.until ?? '-infinity',
    after: row?.after ?? 'infinity',
    transfers: row?.transfers ?? '0',
    tokens: row?.tokens ?? '0',
    holders: row?.holders ?? '0',
  }
}

/**
 * The collection's mints at or before `until` (a bound of block B: its mints
 * up to B, and any of B's timestamp after it), counted up to `cap`: one range
 * of transfers_collection_event_type_feed_idx, index entries only where the
 * table's pages are all visible.
 */
async function mintsUntil(run: SnapshotRun, address: string, until: string, cap: string): Promise<number> {
  const rows = await run<{ n: string }>(
    `SELECT count(*)::text AS n FROM (
       SELECT 1 FROM transfers tr
        WHERE tr.collection_address = $1 AND tr.event_type = 'mint' AND tr.block_timestamp <= $2
        LIMIT $3) m`,
    [address, until, cap],
  )
  return Number(rows[0]?.n ?? 0)
}

/**
 * An ERC-721 collection's holders at block $2, back from its holders now
 * (collection_holders): each token transferred after the block leaves its
 * owner now (tokens.current_owner, unless burned) and returns to its owner at
 * the block (the recipient of its last transfer up to the block, when it
 * existed). The same answer as from the history up to the block (the owner
 * of a token is the recipient of its last transfer, whatever its `from`),
 * at the cost of the changes since.
 */
const holdersBackFromNow = `WITH changed AS (
    SELECT DISTINCT tr.token_id FROM transfers tr
     WHERE tr.collection_address = $1 AND tr.event_type = ANY(${EVENT_TYPES})
       AND tr.block_timestamp >= $4 AND tr.block_number > $2
  ), moves AS (
    SELECT t.current_owner AS owner, -1 AS n FROM changed c
      JOIN tokens t ON t.collection_address = $1 AND t.token_id = c.token_id AND NOT t.is_burned
    UNION ALL
    SELECT was.owner, 1 FROM changed c
     CROSS JOIN LATERAL (
       SELECT tr.to_address AS owner FROM transfers tr
        WHERE tr.collection_address = $1 AND tr.token_id = c.token_id AND tr.block_number <= $2
        ORDER BY ${CHAIN_ORDER_DESC} LIMIT 1) was
  )
  SELECT owner, sum(n)::int AS token_count, NULL::text AS balance FROM (
    SELECT h.owner, h.token_count AS n FROM collection_holders h
     WHERE h.collection_address = $1 AND h.token_count > 0
    UNION ALL
    SELECT owner, n FROM moves
  ) x
  WHERE owner <> $3
  GROUP BY owner HAVING sum(n) > 0
  ORDER BY token_count DESC, owner`

/**
 * An ERC-721 collection's holders at block $2, token by token: each of its
 * tokens rows (tokens_collection_token_key), then the token's last transfer
 * up to the block (transfers_token_feed_idx, one descent from the time bound
 * $4). A token has a row while any transfer of it is stored
 * (docs/indexer.md, "Derived state"), burned since or not; one without a
 * transfer up to the block did not exist yet and has no owner. The cost of
 * the collection's tokens, whatever the length of its history.
 */
const holdersPerToken = `SELECT last.owner, count(*)::int AS token_count, NULL::text AS balance
    FROM tokens t
   CROSS JOIN LATERAL (
     SELECT tr.to_address AS owner FROM transfers tr
      WHERE tr.collection_address = $1 AND tr.token_id = t.token_id
        AND tr.block_timestamp <= $4 AND tr.block_number <= $2
      ORDER BY ${CHAIN_ORDER_DESC} LIMIT 1) last
   WHERE t.collection_address = $1 AND last.owner <> $3
   GROUP BY last.owner ORDER BY token_count DESC, last.owner`

/** One token a wallet held at a block. */
export interface HoldingAtRow {
  /** tokens.id: the cursor's tie-breaker, as in the current holdings. */
  id: string
  collection_address: string
  token_id: string
  /** ERC-721: '1'; ERC-1155: the wallet's balance at the block. */
  balance: string
  /** An ERC-1155 token (its collection's standard). */
  multi: boolean
}

/**
 * The ways to compute a wallet's holdings at a block (docs/database.md,
 * "Snapshots"): forward, from its history up to the block; back, from its
 * holdings now and its transfers since the block.
 */
export type HoldingsAtArm = 'forward' | 'back'

/**
 * Back from now when the block is nearer the head than the coverage start
 * (a wallet has no stored counter of its history, so the blocks each way
 * spans stand for the rows it reads). The zero address too: its "holdings"
 * are the burned ERC-721 tokens, now one range of tokens_burned_erc721_idx.
 */
export function chooseHoldingsAtArm(q: {
  owner: string
  block: bigint
  head: bigint
  since: bigint
}): HoldingsAtArm {
  return q.head - q.block < q.block - q.since ? 'back' : 'forward'
}

/**
 * The tokens `owner` held after block `block` was applied, ordered by
 * (collection_address, token_id, id) as the current holdings; `arm` forces a
 * way (tests: both give the same answer), else chooseHoldingsAtArm picks it.
 *
 * Forward. ERC-721 (unless `standard` is ERC1155): the tokens the wallet
 * received at or before the block (transfers_to_feed_idx) whose last transfer
 * up to the block went to it (transfers_token_feed_idx, per token). ERC-1155
 * (unless `standard` is ERC721): the wallet's amounts in minus out per token
 * (both wallet indexes), positive sums only; the zero address holds none.
 *
 * Back. ERC-721: the tokens it holds now (tokens_owner_idx), but for those
 * with a transfer in or out of it since the block, whose owner at the block is
 * their last transfer up to it: a token none of whose transfers since the
 * block touched the wallet was held then exactly when it is held now.
 * ERC-1155: its balances now (token_balances_owner_idx, the sums of every
 * stored transfer) minus what it received since the block plus what it sent.
 * The cost of the holdings now and the changes since, not of the history.
 *
 * Each way finds ERC-721 holdings by their Transfer rows and by the rows
 * with an amount of ERC-721 collections (a contract that moved a token by a
 * TransferSingle alone, breaking EIP-721: the store folds every row of an
 * ERC-721 collection into its tokens), ERC-1155 ones by the rows with an
 * amount, and keeps a token only under its collection's standard
 * (docs/indexer.md, "ERC-1155"): a contract that tells each move in both
 * standards is held once.
 */
export function selectOwnerHoldingsAt(
  db: ReadDb,
  q: HoldingsAtQuery & { basis?: SnapshotBasis },
): Promise<HoldingAtRow[]> {
  return inSnapshotTransaction(db, q.basis, (run) => ownerHoldingsAt(run, q))
}

interface HoldingsAtQuery {
  owner: string
  block: bigint
  standard: 'ERC721' | 'ERC1155' | 'all'
  head: bigint
  since: bigint
  arm?: HoldingsAtArm
}

async function ownerHoldingsAt(run: SnapshotRun, q: HoldingsAtQuery): Promise<HoldingAtRow[]> {
  const arm = q.arm ?? chooseHoldingsAtArm(q)
  const back = arm === 'back'
  // The zero address's tokens now are the burned ERC-721 ones and every ERC-1155 token (whose row
  // names it as owner): its ERC-721 holdings are read from tokens_burned_erc721_idx (partial).
  const erc721Now = q.owner === ZERO_ADDRESS ? ' AND t.total_supply IS NULL' : ''
  const arms: string[] = []
  // The wallet's transfers since the block, by both wallet indexes: $3 bounds them in time.
  const since = (side: 'to_address' | 'from_address', kind: string) =>
    `tr.${side} = $1 AND tr.block_timestamp >= $3 AND tr.block_number > $2 AND ${kind}`
  // An ERC-721 move: a Transfer row, or a row with an amount of an ERC-721 collection (a contract
  // that told the move by a TransferSingle alone; the store folds it into the token like a Transfer).
  // The lookup runs for rows with an amount only, one probe of collections_address_key each: a
  // scalar subquery, which the planner never turns into a hash of every collection (as it may an EXISTS).
  const erc721Move = `(tr.amount IS NULL OR
      (SELECT c.standard FROM collections c WHERE c.address = tr.collection_address) = 'ERC721')`
  const lastOwnerIsWallet = `CROSS JOIN LATERAL (
         SELECT tr.to_address FROM transfers tr
          WHERE tr.collection_address = k.collection_address AND tr.token_id = k.token_id
            AND tr.block_number <= $2
          ORDER BY ${CHAIN_ORDER_DESC} LIMIT 1) last
       WHERE last.to_address = $1`
  if (q.standard !== 'ERC1155')
    arms.push(
      back
        ? `SELECT t.collection_address, t.token_id, 1::numeric AS balance, t.id, false AS multi FROM tokens t
            WHERE t.current_owner = $1${erc721Now} AND NOT EXISTS (
              SELECT 1 FROM changed c WHERE c.collection_address = t.collection_address AND c.token_id = t.token_id)
           UNION ALL
           SELECT k.collection_address, k.token_id, 1::numeric, NULL::int8, false FROM changed k ${lastOwnerIsWallet}`
        : `SELECT k.collection_address, k.token_id, 1::numeric AS balance, NULL::int8 AS id, false AS multi
             FROM (SELECT DISTINCT tr.collection_address, tr.token_id FROM transfers tr
                    WHERE tr.to_address = $1 AND tr.block_number <= $2 AND ${erc721Move}) k
           ${lastOwnerIsWallet}`,
    )
  // ERC-1155 moves are the rows with an amount; written as coalesce(amount, 0) <> 0 (a zero amount moves
  // nothing) so that the planner reads the wallet's ranges, never the whole partial index of ERC-1155
  // rows (transfers_erc1155_feed_idx, whose condition `amount IS NOT NULL` would otherwise match).
  const moved = 'coalesce(tr.amount, 0) <> 0'
  if (q.standard !== 'ERC721' && q.owner !== ZERO_ADDRESS)
    arms.push(
      `SELECT m.collection_address, m.token_id, sum(m.amount) AS balance, NULL::int8 AS id, true AS multi FROM (${
        back
          ? `SELECT b.collection_address, b.token_id, b.balance AS amount FROM token_balances b WHERE b.owner = $1
           UNION ALL
           SELECT tr.collection_address, tr.token_id, -tr.amount FROM transfers tr WHERE ${since('to_address', moved)}
           UNION ALL
           SELECT tr.collection_address, tr.token_id, tr.amount FROM transfers tr WHERE ${since('from_address', moved)}`
          : `SELECT tr.collection_address, tr.token_id, tr.amount FROM transfers tr
            WHERE tr.to_address = $1 AND tr.block_number <= $2 AND ${moved}
           UNION ALL
           SELECT tr.collection_address, tr.token_id, -tr.amount FROM transfers tr
            WHERE tr.from_address = $1 AND tr.block_number <= $2 AND ${moved}`
      }) m GROUP BY m.collection_address, m.token_id HAVING sum(m.amount) > 0`,
    )
  if (arms.length === 0) return []
  const changed = `changed AS MATERIALIZED (
      SELECT tr.collection_address, tr.token_id FROM transfers tr WHERE ${since('to_address', erc721Move)}
      UNION
      SELECT tr.collection_address, tr.token_id FROM transfers tr WHERE ${since('from_address', erc721Move)})`
  const params: unknown[] = [q.owner, q.block.toString()]
  if (back) params.push(await walletBound(run, q.owner, params[1] as string))
  return run<HoldingAtRow>(
    // Each held token's row by its key (tokens_collection_token_key) where the way did not read it:
    // LIMIT 1 keeps the lookup one per held token, never a hash of the whole tokens table. The
    // condition on total_supply, a column of the row only, keeps the planner from answering the
    // lookup from tokens_collection_live_idx alone (an index-only scan whose token_id is no leading
    // column, so it walks the token's whole collection: 0.4 ms per token instead of 0.004 on the
    // bench's 500,000-token collection). It keeps each arm to the tokens of its kind (the
    // collection's standard, as the indexer folds them: docs/indexer.md, "ERC-1155"): a contract
    // that tells each move in both standards has rows of both kinds, and is held by one.
    `${back && q.standard !== 'ERC1155' ? `WITH ${changed}` : ''}
     SELECT t.id::text AS id, h.collection_address, h.token_id::text AS token_id, h.balance::text AS balance,
            h.multi
       FROM (${arms.join(' UNION ALL ')}) h
      CROSS JOIN LATERAL (
        SELECT coalesce(h.id, (SELECT t.id FROM tokens t
                                WHERE t.collection_address = h.collection_address AND t.token_id = h.token_id
                                  AND (t.total_supply IS NOT NULL) = h.multi LIMIT 1)) AS id) t
      WHERE t.id IS NOT NULL
      ORDER BY h.collection_address, h.token_id, t.id`,
    params,
  )
}

/**
 * A timestamp at or before every transfer of a block after `block`: the
 * wallet's last transfer (in or out) up to the block, walking down each
 * wallet index from its newest (what the back way reads anyway); imported
 * rows (block 0) are older than the indexed window and left out. Block
 * timestamps never decrease along the chain.
 */
async function walletBound(run: SnapshotRun, owner: string, block: string): Promise<string> {
  const last = (side: string) => `(SELECT tr.block_timestamp FROM transfers tr
     WHERE tr.${side} = $1 AND tr.block_number <= $2 AND tr.block_number > 0
     ORDER BY tr.block_timestamp DESC, tr.id DESC LIMIT 1)`
  const rows = await run<{ bound: string | null }>(
    `SELECT greatest(${last('to_address')}, ${last('from_address')})::text AS bound`,
    [owner, block],
  )
  return rows[0]?.bound ?? '-infinity'
}

/** A token's state after a block, from its own transfers up to that block. */
export interface TokenStateAtRow {
  collection_address: string
  token_id: string
  /** Transfers of the token up to the block; 0: the token did not exist yet. */
  transfer_count: number
  /** Recipient of the last transfer up to the block (ERC-721: the owner, the zero address once burned). */
  last_to: string | null
  /** ERC-1155 tokens (of an ERC-1155 collection): minted minus burned up to the block; null on ERC-721 tokens. */
  total_supply: string | null
  /** ERC-1155 tokens: holders with a positive balance at the block. */
  holder_count: number | null
  /** ERC-1155 tokens: the holder of the whole supply at the block, when one holds it. */
  sole_holder: string | null
}

/**
 * A long history, in transfers: at most this many are read of a token by the
 * first statement of selectTokenStatesAt, which computes a token with fewer
 * from them (its whole history, as every token was computed before there was
 * a back way: at about 6 µs a transfer warm, a millisecond or two, less than
 * the planning of the second statement, which takes the others). Every
 * ERC-721 token of bench:seed is below it (the busiest has 141).
 */
export const TOKEN_STATE_LONG = 256

/**
 * A long history's newest transfers read before its way is chosen (the
 * second statement of selectTokenStatesAt): when one is up to the block, the
 * token is taken back from now.
 */
export const TOKEN_STATE_PROBE = 16

/**
 * What a transfer after the block costs the back way, in transfers read
 * forward (each one heap row): its own row, and for an ERC-1155 token also
 * the balances now of its sender and recipient (a primary-key descent of
 * token_balances each, about four buffers).
 */
export const TOKEN_STATE_BACK_COST = { ERC721: 1, ERC1155: 9 } as const

/** A way forced (tests: each gives the same answer as the other). */
export type TokenStateWay = 'forward' | 'back'

/**
 * The state of each given token after block `block`, as its transfers up to
 * the block say (docs/database.md, "Snapshots"), at the cost of the smaller
 * side of each token's history around the block. A token without a transfer
 * up to the block has no row.
 *
 * A first statement reads each token's newest TOKEN_STATE_LONG transfers
 * (transfers_token_feed_idx, newest first, one range per token) and computes
 * a token with fewer from them, its whole history. The tokens with more (an
 * edition of thousands of holders, a token traded all day), and those the
 * caller knows to have more (`transfers`, its stored transfer_count: they
 * skip the first statement), are computed by a second statement, each one of
 * two ways, which give the same answer:
 *  - forward: from its transfers up to the block (a time range of
 *    transfers_token_feed_idx ending at a bound of the block);
 *  - back from now: from its stored state (tokens.transfer_count and, for an
 *    ERC-1155 token, total_supply and holder_count; token_balances) and its
 *    transfers after the block (a time range from a bound of the block): the
 *    transfer count less those, the supply less what they minted net, each
 *    owner they touched at its balance now (a primary-key lookup) less its net
 *    change, holder_count moved by the owners whose balance crossed zero, the
 *    sole holder (when one remains) among them or else the first other holder
 *    of token_balances_holders_idx, and the recipient of the last transfer up
 *    to the block (the block's bound is that transfer's time).
 * Its newest TOKEN_STATE_PROBE transfers are read first: one up to the block
 * among them, it is taken back from now. Otherwise walks from both ends of
 * its history (newest first to a transfer up to the block, oldest first to
 * one after it), four times longer each step while they are at most an eighth
 * of its stored transfer count, then one walk of its newest half, find where
 * the block falls; a boundary found on the newest side is taken back from now
 * when the transfers since (counted on the index) cost less that way
 * (TOKEN_STATE_BACK_COST) than those up to it forward. Block timestamps never
 * decrease along the chain and imported rows are older than the indexed
 * window, so a token's transfers up to the block are its oldest by time and
 * the boundary is a timestamp.
 *
 * Each way reads a token's rows as the indexer folds them, by its
 * collection's standard (`multi`: ERC-1155) whatever each row's own kind
 * (docs/indexer.md, "ERC-1155"): every row moves an ERC-721 token to its
 * recipient; a row without an amount (an ERC-721 Transfer beside the
 * TransferSingle) moves nothing of an ERC-1155 token.
 *
 * With a `basis` (the API), the statements run in the snapshot's own
 * transaction (inSnapshotTransaction): the history they read is the one
 * whose block the request checked, else HistoryRewrittenMeanwhile.
 */
export async function selectTokenStatesAt(db: ReadDb, q: TokenStatesAtQuery): Promise<TokenStateAtRow[]> {
  if (q.keys.length === 0) return []
  if (q.basis === undefined) return tokenStatesAt((statement) => queryOnGenericPlan(db, statement), q)
  // As queryOnGenericPlan: one plan per connection (docs/database.md, "Prepared statements").
  return inSnapshotTransaction(db, q.basis, (run) => tokenStatesAt(run, q), { genericPlans: true })
}

interface TokenStatesAtQuery {
  keys: Array<{ collection: string; tokenId: string; multi: boolean; transfers?: number | undefined }>
  block: bigint
  way?: TokenStateWay
  /** TOKEN_STATE_LONG and TOKEN_STATE_PROBE unless given (tests: small histories take every path). */
  long?: number
  probe?: number
  basis?: SnapshotBasis
}

async function tokenStatesAt(
  query: <R extends pg.QueryResultRow>(statement: NamedStatement) => Promise<R[]>,
  q: TokenStatesAtQuery,
): Promise<TokenStateAtRow[]> {
  type Keys = TokenStatesAtQuery['keys']
  const params = (keys: Keys, rows: number | null) => [
    keys.map((k) => k.collection),
    keys.map((k) => k.tokenId),
    q.block.toString(),
    ZERO_ADDRESS,
    rows,
  ]
  const kinds = (keys: Keys) => keys.map((k) => k.multi)
  const probe = q.probe ?? TOKEN_STATE_PROBE
  const longWay = async (keys: Keys, back: boolean) =>
    keys.length === 0
      ? []
      : await query<TokenStateAtRow>({
          name: 'token_states_at_long',
          text: longTokenStatesAt,
          values: [...params(keys, back ? 1 : probe), back, kinds(keys)],
        })
  // Back: every token with a transfer is "long", and taken back from now.
  if (q.way === 'back') return longWay(q.keys, true)
  // Forward: every history is "short" (LIMIT NULL).
  const long = q.way === 'forward' ? null : (q.long ?? TOKEN_STATE_LONG)
  const known = long === null ? [] : q.keys.filter((k) => (k.transfers ?? 0) >= long)
  const rest = long === null ? q.keys : q.keys.filter((k) => (k.transfers ?? 0) < long)
  const [first, knownStates] = await Promise.all([
    rest.length === 0
      ? []
      : query<TokenStateAtRow & { long: boolean; multi: boolean }>({
          name: 'token_states_at_short',
          text: shortTokenStatesAt,
          values: [...params(rest, long), kinds(rest)],
        }),
    longWay(known, false),
  ])
  const states: TokenStateAtRow[] = knownStates
  const found: Keys = []
  for (const { long: isLong, multi, ...state } of first)
    if (isLong) found.push({ collection: state.collection_address, tokenId: state.token_id, multi })
    else states.push(state)
  states.push(...(await longWay(found, false)))
  return states
}

/**
 * The second statement's start: $1, $2 the tokens, $7 whether each is
 * ERC-1155, $3 the block, $4 the zero address, $5 the probe; each token's
 * newest $5 transfers, and whether it has that many (a long history), as the
 * first statement read them.
 */
const probed = `k AS (SELECT DISTINCT * FROM unnest($1::varchar[], $2::numeric[], $7::bool[]) AS k(c, tok, multi)),
  probe AS MATERIALIZED (
    SELECT k.c, k.tok, p.* FROM k CROSS JOIN LATERAL (
      SELECT tr.id, tr.block_timestamp, tr.block_number, tr.log_index, tr.batch_index,
             tr.from_address, tr.to_address, tr.amount
        FROM transfers tr WHERE tr.collection_address = k.c AND tr.token_id = k.tok
       ORDER BY tr.block_timestamp DESC, tr.id DESC LIMIT $5::int8) p
  ),
  sized AS (
    SELECT c, tok, count(*) >= $5::int8 AS long,
           max(block_timestamp) FILTER (WHERE block_number <= $3) AS t_last, min(block_timestamp) AS t_oldest
      FROM probe GROUP BY c, tok
  )`

/** A short history up to the block: the probe's rows. */
const shortHistory = `SELECT p.* FROM probe p JOIN sized s ON s.c = p.c AND s.tok = p.tok
   WHERE s.long IS NOT TRUE AND p.block_number <= $3`

/**
 * Each token's state from `history` (its transfers up to the block, columns as
 * the probe's), in chain order: the transfer count, the last recipient; for
 * ERC-1155 tokens (k.multi: of an ERC-1155 collection, whose rows without an
 * amount move nothing) the supply, the holders and a sole one.
 */
const forwardStates = (history: string) => `h AS (
    SELECT tr.c, tr.tok, tr.from_address, tr.to_address, tr.amount,
           row_number() OVER (PARTITION BY tr.c, tr.tok ORDER BY ${CHAIN_ORDER_DESC}) AS rn
      FROM (${history}) tr
  ),
  balances AS (
    SELECT m.c, m.tok, m.owner, sum(m.amount) AS balance FROM (
      SELECT c, tok, to_address AS owner, amount FROM h WHERE amount IS NOT NULL AND to_address <> $4
      UNION ALL
      SELECT c, tok, from_address, -amount FROM h WHERE amount IS NOT NULL AND from_address <> $4
    ) m GROUP BY m.c, m.tok, m.owner HAVING sum(m.amount) > 0
  ),
  holders AS (
    SELECT c, tok, count(*)::int AS holder_count, min(owner) AS some_owner, sum(balance) AS held
      FROM balances GROUP BY c, tok
  ),
  tokens_at AS (
    SELECT h.c, h.tok, count(*)::int AS transfer_count,
           min(h.to_address) FILTER (WHERE h.rn = 1) AS last_to,
           bool_or(k.multi) AS multi,
           coalesce(sum(h.amount) FILTER (WHERE h.from_address = $4), 0)
             - coalesce(sum(h.amount) FILTER (WHERE h.to_address = $4), 0) AS supply
      FROM h JOIN k ON k.c = h.c AND k.tok = h.tok GROUP BY h.c, h.tok
  )
  SELECT s.c AS collection_address, s.tok::text AS token_id, s.transfer_count, s.last_to,
         CASE WHEN s.multi THEN s.supply::text END AS total_supply,
         CASE WHEN s.multi THEN coalesce(o.holder_count, 0) END AS holder_count,
         CASE WHEN s.multi AND o.holder_count = 1 AND o.held = s.supply THEN o.some_owner END AS sole_holder
    FROM tokens_at s
    LEFT JOIN holders o ON o.c = s.c AND o.tok = s.tok`

/**
 * The first statement: each token's newest $5 transfers, one range of
 * transfers_token_feed_idx, in one window pass (those up to the block first,
 * in chain order); the state of a token with fewer (its whole history), and
 * the others named (`long` and `multi`, nothing else), as the query over every history
 * did before there was a back way.
 */
const shortTokenStatesAt = `WITH k AS (SELECT DISTINCT * FROM unnest($1::varchar[], $2::numeric[], $6::bool[]) AS k(c, tok, multi)),
  h AS (
    SELECT k.c, k.tok, k.multi, tr.from_address, tr.to_address, tr.amount, tr.block_number <= $3 AS up_to,
           row_number() OVER w AS rn
      FROM k CROSS JOIN LATERAL (
        SELECT tr.id, tr.block_timestamp, tr.block_number, tr.log_index, tr.batch_index,
               tr.from_address, tr.to_address, tr.amount
          FROM transfers tr WHERE tr.collection_address = k.c AND tr.token_id = k.tok
         ORDER BY tr.block_timestamp DESC, tr.id DESC LIMIT $5::int8) tr
    WINDOW w AS (PARTITION BY k.c, k.tok ORDER BY tr.block_number <= $3 DESC, ${CHAIN_ORDER_DESC})
  ),
  balances AS (
    SELECT m.c, m.tok, m.owner, sum(m.amount) AS balance FROM (
      SELECT c, tok, to_address AS owner, amount FROM h WHERE up_to AND amount IS NOT NULL AND to_address <> $4
      UNION ALL
      SELECT c, tok, from_address, -amount FROM h WHERE up_to AND amount IS NOT NULL AND from_address <> $4
    ) m GROUP BY m.c, m.tok, m.owner HAVING sum(m.amount) > 0
  ),
  holders AS (
    SELECT c, tok, count(*)::int AS holder_count, min(owner) AS some_owner, sum(balance) AS held
      FROM balances GROUP BY c, tok
  ),
  tokens_at AS (
    SELECT c, tok, (count(*) FILTER (WHERE up_to))::int AS transfer_count,
           min(to_address) FILTER (WHERE rn = 1 AND up_to) AS last_to,
           bool_or(multi) AS multi,
           coalesce(sum(amount) FILTER (WHERE up_to AND from_address = $4), 0)
             - coalesce(sum(amount) FILTER (WHERE up_to AND to_address = $4), 0) AS supply,
           coalesce(count(*) >= $5::int8, false) AS long
      FROM h GROUP BY c, tok
     HAVING count(*) FILTER (WHERE up_to) > 0 OR count(*) >= $5::int8
  )
  SELECT s.c AS collection_address, s.tok::text AS token_id, s.transfer_count, s.last_to,
         CASE WHEN s.multi THEN s.supply::text END AS total_supply,
         CASE WHEN s.multi THEN coalesce(o.holder_count, 0) END AS holder_count,
         CASE WHEN s.multi AND o.holder_count = 1 AND o.held = s.supply THEN o.some_owner END AS sole_holder,
         s.long, s.multi
    FROM tokens_at s
    LEFT JOIN holders o ON o.c = s.c AND o.tok = s.tok`

/** A walk of a token's transfers from one end, `rows` at most: the first timestamp whose block matches. */
const walk = (token: string, order: 'DESC' | 'ASC', rows: string, block: string) => `(
  SELECT w.block_timestamp FROM (
    SELECT tr.block_timestamp, tr.block_number FROM transfers tr
     WHERE tr.collection_address = ${token}.c AND tr.token_id = ${token}.tok
     ORDER BY tr.block_timestamp ${order}, tr.id ${order} LIMIT ${rows}) w
   WHERE w.block_number ${block} LIMIT 1)`

/** The second statement, for the long histories ($6: back forced, the probe then 1). */
const longTokenStatesAt = `WITH RECURSIVE ${probed},
  -- A long history's stored state, and whether it is of the token's kind (else: forward, all of it;
  -- only a token rolled back and indexed again between the caller's read and this one).
  stored AS MATERIALIZED (
    SELECT s.c, s.tok, s.t_last, s.t_oldest, t.n, t.total_supply, t.holder_count,
           coalesce(t.n IS NOT NULL AND (t.total_supply IS NOT NULL) = k.multi, false) AS same_kind
      FROM sized s
      JOIN k ON k.c = s.c AND k.tok = s.tok
      LEFT JOIN LATERAL (
        SELECT t.transfer_count::int8 AS n, t.total_supply, t.holder_count FROM tokens t
         WHERE t.collection_address = s.c AND t.token_id = s.tok LIMIT 1) t ON true
     WHERE s.long
  ),
  -- No transfer up to the block among the newest: walks from both ends, four times longer each step.
  search (c, tok, n, step, t_last, t_first) AS (
    SELECT c, tok, n, 0, NULL::timestamptz, NULL::timestamptz FROM stored
     WHERE same_kind AND t_last IS NULL AND NOT $6::boolean
    UNION ALL
    SELECT s.c, s.tok, s.n, s.step + 1,
           ${walk('s', 'DESC', '$5::int8 << (2 * s.step + 2)', '<= $3')},
           ${walk('s', 'ASC', '$5::int8 << (2 * s.step + 2)', '> $3')}
      FROM search s
     WHERE s.t_last IS NULL AND s.t_first IS NULL AND ($5::int8 << (2 * s.step + 2)) * 8 <= s.n
  ),
  found AS (SELECT c, tok, t_last, t_first FROM search WHERE t_last IS NOT NULL OR t_first IS NOT NULL),
  -- t_last: the time of the last transfer up to the block, found on the newest side (else one walk
  -- of the newest half, or of all of it when back is forced); t_first: found on the oldest side.
  ways AS MATERIALIZED (
    SELECT st.c, st.tok, st.n, st.total_supply, st.holder_count, st.same_kind, st.t_oldest,
           st.t_last IS NOT NULL AS in_probe, f.t_first AS found_first,
           CASE WHEN NOT st.same_kind THEN NULL
                WHEN st.t_last IS NOT NULL THEN st.t_last
                WHEN f.c IS NOT NULL THEN f.t_last
                WHEN $6::boolean OR (st.n + 1) / 2 > $5::int8 THEN
                  ${walk('st', 'DESC', 'CASE WHEN $6::boolean THEN NULL ELSE (st.n + 1) / 2 END', '<= $3')}
           END AS t_last
      FROM stored st LEFT JOIN found f ON f.c = st.c AND f.tok = st.tok
  ),
  -- The way: back from now (t_last) when the transfers since cost less than those up to the block;
  -- else forward, up to t_first, a time no transfer up to the block is after.
  bounds AS MATERIALIZED (
    SELECT w.c, w.tok, w.n, w.total_supply, w.holder_count,
           CASE WHEN w.t_last IS NOT NULL AND (w.in_probe OR $6::boolean OR
                  (SELECT count(*) FROM transfers tr
                    WHERE tr.collection_address = w.c AND tr.token_id = w.tok AND tr.block_timestamp >= w.t_last)
                    * CASE WHEN w.total_supply IS NULL THEN ${TOKEN_STATE_BACK_COST.ERC721 + 1}
                           ELSE ${TOKEN_STATE_BACK_COST.ERC1155 + 1} END < w.n)
                THEN w.t_last END AS t_last,
           CASE WHEN NOT w.same_kind THEN 'infinity'::timestamptz
                WHEN w.t_last IS NOT NULL THEN w.t_last
                WHEN w.found_first IS NOT NULL THEN w.found_first
                WHEN $6::boolean THEN '-infinity'::timestamptz
                -- The newest half are all after the block.
                WHEN (w.n + 1) / 2 > $5::int8 THEN coalesce(
                  (SELECT tr.block_timestamp FROM transfers tr
                    WHERE tr.collection_address = w.c AND tr.token_id = w.tok
                    ORDER BY tr.block_timestamp DESC, tr.id DESC OFFSET (w.n + 1) / 2 - 1 LIMIT 1),
                  'infinity'::timestamptz)
                ELSE w.t_oldest END AS t_first
      FROM ways w
  ),
  -- The transfers since, each moving its amount on an ERC-1155 token, none without one (an ERC-721
  -- Transfer beside the TransferSingle: docs/indexer.md, "ERC-1155"), as the indexer folded them.
  after AS MATERIALIZED (
    SELECT b.c, b.tok, b.total_supply IS NOT NULL AS multi, a.from_address, a.to_address,
           coalesce(a.amount, 0) AS amount FROM bounds b CROSS JOIN LATERAL (
      SELECT tr.from_address, tr.to_address, tr.amount FROM transfers tr
       WHERE tr.collection_address = b.c AND tr.token_id = b.tok
         AND tr.block_timestamp >= b.t_last AND tr.block_number > $3) a
     WHERE b.t_last IS NOT NULL
  ),
  changes AS MATERIALIZED (
    SELECT b.c, b.tok, b.t_last, b.total_supply IS NOT NULL AS multi, b.holder_count,
           b.n - count(a.to_address) AS transfer_count,
           b.total_supply - coalesce(sum(a.amount) FILTER (WHERE a.from_address = $4), 0)
             + coalesce(sum(a.amount) FILTER (WHERE a.to_address = $4), 0) AS supply
      FROM bounds b LEFT JOIN after a ON a.c = b.c AND a.tok = b.tok
     WHERE b.t_last IS NOT NULL
     GROUP BY b.c, b.tok, b.t_last, b.n, b.total_supply, b.holder_count
  ),
  -- Each owner the transfers since moved: its balance now and at the block. The balance now is the
  -- first entry of token_balances_pkey from its key (a row comparison only that index answers in
  -- order): a plain equality let the planner read token_balances_holders_idx, index only, with the
  -- owner as a filter, which walks every holder of the token (20,000 per owner on bench:seed's edition).
  moved AS MATERIALIZED (
    SELECT d.c, d.tok, d.owner, coalesce(b.balance, 0) AS now, coalesce(b.balance, 0) - d.v AS was
      FROM (SELECT m.c, m.tok, m.owner, sum(m.v) AS v FROM (
              SELECT a.c, a.tok, a.to_address AS owner, a.amount AS v FROM after a
               WHERE a.multi AND a.to_address <> $4
              UNION ALL
              SELECT a.c, a.tok, a.from_address, -a.amount FROM after a
               WHERE a.multi AND a.from_address <> $4) m
            GROUP BY m.c, m.tok, m.owner) d
      LEFT JOIN LATERAL (
        SELECT s.balance FROM (
          SELECT b.collection_address, b.token_id, b.owner, b.balance FROM token_balances b
           WHERE (b.collection_address, b.token_id, b.owner) >= (d.c, d.tok, d.owner)
           ORDER BY b.collection_address, b.token_id, b.owner LIMIT 1) s
         WHERE s.collection_address = d.c AND s.token_id = d.tok AND s.owner = d.owner) b ON true
  ),
  ${forwardStates(`${shortHistory}
        UNION ALL
        SELECT f.c, f.tok, r.* FROM bounds f CROSS JOIN LATERAL (
            SELECT tr.id, tr.block_timestamp, tr.block_number, tr.log_index, tr.batch_index,
                   tr.from_address, tr.to_address, tr.amount FROM transfers tr
             WHERE tr.collection_address = f.c AND tr.token_id = f.tok
               AND tr.block_timestamp <= f.t_first AND tr.block_number <= $3) r
         WHERE f.t_last IS NULL`)}
  UNION ALL
  SELECT b.c, b.tok::text, b.transfer_count::int, last.to_address,
         CASE WHEN b.multi THEN b.supply::text END,
         CASE WHEN b.multi THEN b.holders::int END,
         CASE WHEN b.multi AND b.holders = 1 THEN (
           SELECT x.owner FROM (
             (SELECT m.owner, m.was AS balance FROM moved m WHERE m.c = b.c AND m.tok = b.tok AND m.was > 0 LIMIT 1)
             UNION ALL
             (SELECT tb.owner, tb.balance FROM token_balances tb
               WHERE tb.collection_address = b.c AND tb.token_id = b.tok AND tb.balance > 0
                 AND NOT EXISTS (SELECT 1 FROM moved m WHERE m.c = tb.collection_address AND m.tok = tb.token_id
                                                         AND m.owner = tb.owner)
               ORDER BY tb.balance DESC, tb.owner LIMIT 1)
           ) x WHERE x.balance = b.supply LIMIT 1) END
    FROM (SELECT ch.*, ch.holder_count + coalesce(
                   (SELECT sum((m.was > 0)::int - (m.now > 0)::int) FROM moved m WHERE m.c = ch.c AND m.tok = ch.tok),
                   0) AS holders
            FROM changes ch) b
    -- The recipient of the last transfer up to the block: of those of t_last's time, the last in chain order.
    CROSS JOIN LATERAL (
      SELECT tr.to_address FROM transfers tr
       WHERE tr.collection_address = b.c AND tr.token_id = b.tok
         AND tr.block_timestamp = b.t_last AND tr.block_number <= $3
       ORDER BY ${CHAIN_ORDER_DESC} LIMIT 1) last`

/**
 * Tokens by their ids (a snapshot page), with the collection's names, in
 * (collection_address, token_id, id) order: today's metadata, the caller puts
 * the state at the block in.
 */
export async function selectTokensByIds(
  db: ReadDb,
  q: NftColumnOptions & { ids: string[] },
): Promise<NftRow[]> {
  if (q.ids.length === 0) return []
  const { rows } = await db.pool.query<NftRow>(
    `SELECT ${nftColumns(q)}, c.name AS collection_name, c.symbol AS collection_symbol
       FROM tokens t
       LEFT JOIN collections c ON c.address = t.collection_address
       ${MEDIA_JOINS}
      WHERE t.id = ANY($1::int8[])
      ORDER BY t.collection_address, t.token_id, t.id`,
    [q.ids],
  )
  return rows
}
