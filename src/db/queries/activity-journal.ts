/**
 * activity_journal: the last day's changes to the canonical transfers in
 * commit order, written by triggers on transfers (prisma/migrations/
 * 20261129100000_activity_journal; docs/push.md). Push delivery (the live
 * stream and webhooks) reads it by sequence number; an entry's `seq` is its
 * event id.
 */

import type { StandardFilter } from './collections'
import { isoSql, microsSql, type ReadDb } from './sql'
import type { TransferRow } from './transfers'

/** PostgreSQL channel: new journal entries were committed. */
export const ACTIVITY_JOURNAL_CHANNEL = 'activity_journal'
/** PostgreSQL channel: the indexer's head moved (the payload is the new head). */
export const INDEXER_HEAD_CHANNEL = 'indexer_head'
/** How long entries are kept (and which blocks are journaled at all: at most this old). */
export const JOURNAL_RETENTION_MS = 24 * 60 * 60 * 1000

export type JournalKind = 'added' | 'removed'

/** One entry: the transfer as TransferRow (id: the transfers row's id), its block hash and collection name. */
export type JournalEntry = TransferRow & {
  seq: string
  kind: JournalKind
  block_hash: string | null
  collection_name: string | null
  recorded_at: string
  /** The indexer's head when the entry was recorded. */
  head_block: string
}

/** Whether an entry is of the standards a consumer asked for (ERC-1155 entries carry an amount). */
export function ofStandard(entry: Pick<JournalEntry, 'amount'>, standard: StandardFilter): boolean {
  if (standard === 'all') return true
  return (entry.amount !== null) === (standard === 'ERC1155')
}

/**
 * Entries after `after` (a seq), oldest first, at most `limit`, optionally of
 * one collection, one event type and the standards asked for (absent: all).
 * `through` caps the seq read (a reader that must not pass a point it
 * already fixed).
 */
export async function readJournal(
  db: ReadDb,
  options: {
    after: bigint
    limit: number
    collection?: string | undefined
    eventType?: string | undefined
    standard?: StandardFilter | undefined
    through?: bigint
  },
): Promise<JournalEntry[]> {
  const params: unknown[] = [options.after.toString(), options.limit]
  const where = ['j.seq > $1']
  if (options.through !== undefined) {
    params.push(options.through.toString())
    where.push(`j.seq <= $${params.length}`)
  }
  if (options.collection !== undefined) {
    params.push(options.collection)
    where.push(`j.collection_address = $${params.length}`)
  }
  if (options.eventType !== undefined) {
    params.push(options.eventType)
    where.push(`j.event_type = $${params.length}`)
  }
  if (options.standard === 'ERC721') where.push('j.amount IS NULL')
  if (options.standard === 'ERC1155') where.push('j.amount IS NOT NULL')
  const { rows } = await db.pool.query<JournalEntry>(
    `SELECT j.seq::text AS seq, j.kind, j.transfer_id::text AS id, j.collection_address,
            j.token_id::text AS token_id, j.from_address, j.to_address, j.event_type,
            j.block_number::text AS block_number, j.block_hash, j.log_index, j.batch_index,
            j.transaction_hash, ${isoSql('j.block_timestamp')} AS block_timestamp,
            ${microsSql('j.block_timestamp')} AS block_us, ${isoSql('j.recorded_at')} AS recorded_at,
            j.head_block::text AS head_block, j.amount::text AS amount, c.name AS collection_name
       FROM activity_journal j LEFT JOIN collections c ON c.address = j.collection_address
      WHERE ${where.join(' AND ')}
      ORDER BY j.seq
      LIMIT $2`,
    params,
  )
  return rows
}

/** The journal's ends: the newest seq (0 when empty) and the oldest one kept (null when empty). */
export async function journalBounds(db: ReadDb): Promise<{ newest: bigint; oldest: bigint | null }> {
  const { rows } = await db.pool.query<{ newest: string | null; oldest: string | null }>(
    `SELECT (SELECT max(seq) FROM activity_journal)::text AS newest,
            (SELECT min(seq) FROM activity_journal)::text AS oldest`,
  )
  const row = rows[0]
  return { newest: BigInt(row?.newest ?? '0'), oldest: row?.oldest == null ? null : BigInt(row.oldest) }
}

/** Deletes entries older than the retention; returns how many. */
export async function pruneJournal(db: ReadDb, retentionMs = JOURNAL_RETENTION_MS): Promise<number> {
  const { rowCount } = await db.pool.query(
    `DELETE FROM activity_journal WHERE recorded_at < now() - $1 * interval '1 millisecond'`,
    [retentionMs],
  )
  return rowCount ?? 0
}

/** A removal as a consumer deciding on an addition needs it. */
export type JournalRemoval = Pick<
  JournalEntry,
  'seq' | 'transaction_hash' | 'log_index' | 'batch_index' | 'block_hash' | 'head_block'
>

/** The removals journaled for the events these entries name (by identity), in seq order. */
export async function removalsOf(
  db: ReadDb,
  events: Array<Pick<JournalEntry, 'transaction_hash' | 'log_index' | 'batch_index'>>,
): Promise<JournalRemoval[]> {
  if (events.length === 0) return []
  const { rows } = await db.pool.query(
    `SELECT j.seq::text AS seq, j.transaction_hash, j.log_index, j.batch_index, j.block_hash,
            j.head_block::text AS head_block
       FROM activity_journal j
       JOIN unnest($1::varchar[], $2::int4[], $3::int4[]) AS e(transaction_hash, log_index, batch_index)
         ON j.transaction_hash = e.transaction_hash AND j.log_index = e.log_index AND j.batch_index = e.batch_index
      WHERE j.kind = 'removed'
      ORDER BY j.seq`,
    [events.map((e) => e.transaction_hash), events.map((e) => e.log_index), events.map((e) => e.batch_index)],
  )
  return rows
}
