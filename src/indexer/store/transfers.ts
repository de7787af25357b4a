import type pg from 'pg'
import { transferEventType } from '@/lib/schemas'
import {
  type CollectionStandard,
  eventType,
  type MetadataUpdateEvent,
  type TransferEvent,
} from '../events/types'
import { markCollectionsStale } from './collections'
import { insertIfAllNew, type Queryable } from './db'
import { int4Array, int8Array, numericArray, timestamptzArray, varcharArray } from './pg-array'
import { copyNumber, copyOrInsert, copyRows, copyText, copyTimestamp } from './pg-copy'
import { storeUriEvents } from './uri-events'

export const eventIdentity = (e: { transactionHash: string; logIndex: number; batchIndex: number }) =>
  `${e.transactionHash}:${e.logIndex}:${e.batchIndex}`

/**
 * Chain order: block (timestamp first, so imported rows of unknown block 0
 * fall in place by time), log index, position inside an ERC-2309 range.
 */
export function compareChainOrder(a: TransferEvent, b: TransferEvent): number {
  if (a.blockTimestamp !== b.blockTimestamp) return a.blockTimestamp < b.blockTimestamp ? -1 : 1
  if (a.blockNumber !== b.blockNumber) return a.blockNumber < b.blockNumber ? -1 : 1
  if (a.logIndex !== b.logIndex) return a.logIndex - b.logIndex
  return a.batchIndex - b.batchIndex
}

/** Rows per INSERT statement: keeps parameter arrays and statement memory bounded. */
const CHUNK = 5_000

const INSERT_TRANSFERS = `
  INSERT INTO transfers (collection_address, token_id, from_address, to_address, event_type, block_number,
                         block_hash, block_timestamp, transaction_hash, log_index, batch_index, source, amount)
  SELECT c, id, f, t, et, bn, bh, ts, tx, li, bi, $12, am
    FROM unnest($1::varchar[], $2::numeric[], $3::varchar[], $4::varchar[], $5::varchar[], $6::bigint[],
                $7::varchar[], $8::timestamptz[], $9::varchar[], $10::int[], $11::int[], $13::numeric[])
         AS r(c, id, f, t, et, bn, bh, ts, tx, li, bi, am)`

const COPY_TRANSFERS = `
  COPY transfers (collection_address, token_id, from_address, to_address, event_type, block_number,
                  block_hash, block_timestamp, transaction_hash, log_index, batch_index, source, amount) FROM STDIN`

/**
 * Bulk insert. Rows are inserted in the given order, so ids follow chain
 * order when the caller passes events in chain order. Returns the events
 * that were new.
 *
 * A batch from the chain holds only new events: it is copied in as it is
 * (COPY, or a multi-row INSERT from unnest'ed arrays where the server takes
 * no COPY; insertIfAllNew). When an event is already stored or repeated in the batch
 * (an import run again, a file that repeats a row), the batch is inserted
 * again with ON CONFLICT DO NOTHING on the event identity, keeping the first
 * occurrence of each.
 */
export async function insertTransfers(
  client: pg.PoolClient,
  events: TransferEvent[],
  source: 'rpc' | 'import' = 'rpc',
): Promise<TransferEvent[]> {
  const allNew = await insertIfAllNew(client, () =>
    copyOrInsert(
      client,
      () => copyRows(client, COPY_TRANSFERS, transferLines(events, source)),
      async () => {
        for (let i = 0; i < events.length; i += CHUNK) {
          await client.query(INSERT_TRANSFERS, transferParams(events.slice(i, i + CHUNK), source))
        }
      },
    ),
  )
  return allNew ? events : insertNewOnly(client, events, source)
}

/** COPY lines of COPY_TRANSFERS; a block's transfers share one formatted timestamp. */
function* transferLines(events: TransferEvent[], source: 'rpc' | 'import'): Generator<string> {
  let seconds = -1n
  let timestamp = ''
  for (const e of events) {
    if (e.blockTimestamp !== seconds) {
      seconds = e.blockTimestamp
      timestamp = copyTimestamp(seconds)
    }
    yield `${copyText(e.collection)}\t${e.tokenId}\t${copyText(e.from)}\t${copyText(e.to)}\t${eventType(e.from, e.to)}\t${e.blockNumber}\t${copyText(e.blockHash)}\t${timestamp}\t${copyText(e.transactionHash)}\t${e.logIndex}\t${e.batchIndex}\t${source}\t${copyNumber(e.amount ?? null)}\n`
  }
}

async function insertNewOnly(
  client: pg.PoolClient,
  events: TransferEvent[],
  source: 'rpc' | 'import',
): Promise<TransferEvent[]> {
  const inserted: TransferEvent[] = []
  const seen = new Set<string>()
  // One event per identity: the first occurrence counts.
  const unique = events.filter((e) => {
    const id = eventIdentity(e)
    if (seen.has(id)) return false
    seen.add(id)
    return true
  })
  for (let i = 0; i < unique.length; i += CHUNK) {
    const chunk = unique.slice(i, i + CHUNK)
    const { rows } = await client.query<{ transaction_hash: string; log_index: number; batch_index: number }>(
      `${INSERT_TRANSFERS}
       ON CONFLICT (transaction_hash, log_index, batch_index) DO NOTHING
       RETURNING transaction_hash, log_index, batch_index`,
      transferParams(chunk, source),
    )
    const fresh = new Set(
      rows.map((r) =>
        eventIdentity({
          transactionHash: r.transaction_hash,
          logIndex: r.log_index,
          batchIndex: r.batch_index,
        }),
      ),
    )
    for (const e of chunk) if (fresh.has(eventIdentity(e))) inserted.push(e)
  }
  return inserted
}

function transferParams(chunk: TransferEvent[], source: 'rpc' | 'import'): unknown[] {
  return [
    varcharArray(chunk.map((e) => e.collection)),
    numericArray(chunk.map((e) => e.tokenId)),
    varcharArray(chunk.map((e) => e.from)),
    varcharArray(chunk.map((e) => e.to)),
    varcharArray(chunk.map((e) => eventType(e.from, e.to))),
    int8Array(chunk.map((e) => e.blockNumber)),
    varcharArray(chunk.map((e) => e.blockHash)),
    timestamptzArray(chunk.map((e) => e.blockTimestamp)),
    varcharArray(chunk.map((e) => e.transactionHash)),
    int4Array(chunk.map((e) => e.logIndex)),
    int4Array(chunk.map((e) => e.batchIndex)),
    source,
    numericArray(chunk.map((e) => e.amount ?? null)),
  ]
}

/** Creates the collection rows of newly seen contracts; created_at is the first time indexed. */
export async function ensureCollections(
  client: pg.PoolClient,
  collections: Map<string, { standard: CollectionStandard; firstSeenBlock: bigint }>,
): Promise<void> {
  if (collections.size === 0) return
  const entries = [...collections]
  await client.query(
    `INSERT INTO collections (address, standard, first_seen_block)
     SELECT * FROM unnest($1::varchar[], $2::varchar[], $3::bigint[])
     ON CONFLICT (address) DO UPDATE
       SET first_seen_block = LEAST(collections.first_seen_block, excluded.first_seen_block)
       WHERE collections.first_seen_block IS NULL OR excluded.first_seen_block < collections.first_seen_block`,
    [
      varcharArray(entries.map(([a]) => a)),
      varcharArray(entries.map(([, c]) => c.standard)),
      int8Array(entries.map(([, c]) => c.firstSeenBlock)),
    ],
  )
}

export function collectionsOf(events: TransferEvent[]) {
  const out = new Map<string, { standard: CollectionStandard; firstSeenBlock: bigint }>()
  for (const e of events) {
    const seen = out.get(e.collection)
    if (!seen || e.blockNumber < seen.firstSeenBlock)
      out.set(e.collection, { standard: e.standard, firstSeenBlock: e.blockNumber })
  }
  return out
}

/**
 * ERC-4906 and ERC-1155 URI: queue the named tokens for a metadata refetch
 * (a URI event's value is stored first: it is the token's URI from then on).
 * ERC-7572 (an update of the collection itself): read the collection again.
 */
export async function markMetadataStale(client: pg.PoolClient, all: MetadataUpdateEvent[]): Promise<void> {
  await markCollectionsStale(client, [...new Set(all.filter((u) => u.contract).map((u) => u.collection))])
  await storeUriEvents(client, all)
  const updates = mergeTokenRanges(all.filter((u) => !u.contract))
  if (updates.length === 0) return
  await client.query(
    `UPDATE tokens t SET metadata_status = 'pending', metadata_attempts = 0, metadata_next_attempt_at = now(),
            metadata_recheck_at = NULL, updated_at = now()
       FROM unnest($1::varchar[], $2::numeric[], $3::numeric[]) AS u(c, lo, hi)
      WHERE t.collection_address = u.c AND t.token_id BETWEEN u.lo AND u.hi`,
    [
      varcharArray(updates.map((u) => u.collection)),
      numericArray(updates.map((u) => u.fromTokenId)),
      numericArray(updates.map((u) => u.toTokenId)),
    ],
  )
}

/**
 * The token ranges of ERC-4906 / URI events, merged per collection where they overlap or touch:
 * a contract can emit the same whole-collection BatchMetadataUpdate a thousand times in one
 * block for little gas, and the UPDATE joins every range with every token it names.
 */
export function mergeTokenRanges(
  events: Pick<MetadataUpdateEvent, 'collection' | 'fromTokenId' | 'toTokenId'>[],
): { collection: string; fromTokenId: bigint; toTokenId: bigint }[] {
  const sorted = events
    .filter((e) => e.fromTokenId <= e.toTokenId)
    .map((e) => ({ collection: e.collection, fromTokenId: e.fromTokenId, toTokenId: e.toTokenId }))
    // Grouped by collection (any order of them), each group by its first token.
    .sort((a, b) =>
      a.collection !== b.collection
        ? a.collection.localeCompare(b.collection)
        : Number(a.fromTokenId > b.fromTokenId) - Number(a.fromTokenId < b.fromTokenId),
    )
  const out: typeof sorted = []
  for (const range of sorted) {
    const last = out.at(-1)
    if (last && last.collection === range.collection && range.fromTokenId <= last.toTokenId + 1n) {
      if (range.toTokenId > last.toTokenId) last.toTokenId = range.toTokenId
    } else out.push(range)
  }
  return out
}

/** What transferKey reads: a decoded log, or a stored row as storedTransferKeys selects it. */
export interface TransferKeyFields {
  transactionHash: string
  logIndex: number
  batchIndex: number
  collection: string
  tokenId: bigint | string
  from: string
  to: string
  blockNumber: bigint | string
  /** ERC-1155 rows only. */
  amount?: bigint | string | null
}

/** A transfer's identity and content in one string: stored rows and decoded logs compare by it. */
export const transferKey = (r: TransferKeyFields) =>
  `${r.transactionHash}:${r.logIndex}:${r.batchIndex}:${r.collection}:${r.tokenId}:${r.from}:${r.to}:${r.blockNumber}:${r.amount ?? ''}`

/**
 * Keys (transferKey) of the stored chain transfers of blocks [fromBlock,
 * toBlock], sorted. Found by time through the per-event-type feed indexes, as
 * a rollback finds them (no index leads with the block number): every block
 * of the range has a timestamp between its first and last block's.
 */
export async function storedTransferKeys(
  db: Queryable,
  range: { fromBlock: bigint; toBlock: bigint; since: bigint; until: bigint },
): Promise<string[]> {
  const { rows } = await db.query<TransferKeyFields>(
    `SELECT ${TRANSFER_KEY_COLUMNS}
       FROM transfers
      WHERE event_type = ANY ($1::varchar[]) AND source = 'rpc'
        AND block_timestamp BETWEEN to_timestamp($2) AND to_timestamp($3)
        AND block_number BETWEEN $4 AND $5`,
    [
      transferEventType.options,
      range.since.toString(),
      range.until.toString(),
      range.fromBlock.toString(),
      range.toBlock.toString(),
    ],
  )
  return rows.map(transferKey).sort()
}

const TRANSFER_KEY_COLUMNS = `transaction_hash AS "transactionHash", log_index AS "logIndex", batch_index AS "batchIndex",
  collection_address AS collection, token_id::text AS "tokenId", from_address AS "from",
  to_address AS "to", block_number::text AS "blockNumber", amount::text AS amount`

/** The stored transfers of these events' identities (transfers_event_key), as identity → transferKey. */
export async function storedTransferKeysByIdentity(
  db: Queryable,
  events: Array<{ transactionHash: string; logIndex: number; batchIndex: number }>,
): Promise<Map<string, string>> {
  if (events.length === 0) return new Map()
  const { rows } = await db.query<TransferKeyFields>(
    `SELECT ${TRANSFER_KEY_COLUMNS}
       FROM transfers t JOIN unnest($1::varchar[], $2::int4[], $3::int4[]) AS k(h, l, b)
         ON t.transaction_hash = k.h AND t.log_index = k.l AND t.batch_index = k.b`,
    [
      varcharArray(events.map((e) => e.transactionHash)),
      int4Array(events.map((e) => e.logIndex)),
      int4Array(events.map((e) => e.batchIndex)),
    ],
  )
  return new Map(rows.map((r) => [eventIdentity(r), transferKey(r)]))
}

/**
 * The time of the earliest transfer read from the chain (Unix seconds), or null before the
 * first: one index probe per event type (its feed index, from the oldest end).
 */
export async function earliestIndexedTimestamp(db: Queryable): Promise<bigint | null> {
  const { rows } = await db.query<{ at: string | null }>(
    `SELECT min(first)::text AS at FROM unnest($1::varchar[]) AS e(type),
            LATERAL (SELECT extract(epoch FROM t.block_timestamp)::bigint AS first FROM transfers t
                      WHERE t.event_type = e.type AND t.source = 'rpc'
                      ORDER BY t.block_timestamp LIMIT 1) f`,
    [transferEventType.options],
  )
  return rows[0]?.at == null ? null : BigInt(rows[0].at)
}
