/**
 * The transfer feeds of the /v1 read side. The feeds are newest first by
 * (block_timestamp, id): ids are assigned in chain order by the indexer, so
 * inside a block the newest log comes first, and rows that arrive between
 * two pages sort before the cursor — pages never repeat or skip a row. Only
 * canonical rows are stored (the indexer deletes orphaned ones).
 */
import { transferEventType } from '@/lib/schemas'
import { type CollectionHistoryRow, collectionStandardSql, type StandardFilter } from './collections'
import { type BeforeKey, isoSql, microsSql, type ReadDb } from './sql'

/** Columns of `transfers` aliased `tr`. */
export const TRANSFER_COLUMNS = `tr.id::text AS id, tr.collection_address, tr.token_id::text AS token_id,
  tr.from_address, tr.to_address, tr.event_type, tr.block_number::text AS block_number, tr.log_index,
  tr.batch_index, tr.transaction_hash, ${isoSql('tr.block_timestamp')} AS block_timestamp,
  ${microsSql('tr.block_timestamp')} AS block_us, tr.amount::text AS amount`

export interface TransferRow {
  id: string
  collection_address: string
  token_id: string
  from_address: string
  to_address: string
  event_type: 'mint' | 'transfer' | 'burn'
  block_number: string
  log_index: number
  batch_index: number
  transaction_hash: string
  block_timestamp: string
  block_us: string
  /** ERC-1155 rows: the id/value pair's value; null on ERC-721 rows (amount 1). */
  amount: string | null
}

/**
 * The ids of one feed page (`page.id`), newest first by (block_timestamp,
 * id), read in index order from a per-event-type feed index
 * (transfers_event_type_feed_idx, transfers_collection_event_type_feed_idx).
 * `where` holds the other conditions on `tr` (collection, cursor).
 *
 * With `eventType` (a parameter placeholder) that index gives the page
 * directly. Without it, the page is the merge of the three event types'
 * pages, each at most `limit` ids from its own index: the feeds are indexed
 * per event type only, so that every stored transfer costs two feed-index
 * entries instead of four (docs/database.md).
 *
 * `standard` (docs/api.md, "ERC-1155"): ERC-1155 rows are those with an
 * amount. ERC721 (the specification's feed) walks the same full index and
 * checks each entry's row: the rows of a page are read anyway, and the newest
 * pages are rarely all-visible, so this costs about what the index-only walk
 * did (measured: docs/api.md, "How the queries stay fast at any depth"),
 * where probing the partial index per entry instead cost more to plan than it
 * saved. ERC1155 reads the partial index transfers_erc1155_feed_idx. (With a
 * collection, selectActivity checks the collection's standard instead.)
 */
function feedPageIds(
  where: string[],
  eventType: string | undefined,
  limit: string,
  standard: StandardFilter = 'all',
): string {
  const conditions = [...where]
  if (standard === 'ERC721') conditions.push('tr.amount IS NULL')
  if (standard === 'ERC1155') conditions.push('tr.amount IS NOT NULL')
  const arm = (type: string) =>
    `SELECT tr.id, tr.block_timestamp FROM transfers tr WHERE ${[`tr.event_type = ${type}`, ...conditions].join(' AND ')}
      ORDER BY tr.block_timestamp DESC, tr.id DESC LIMIT ${limit}`
  if (eventType !== undefined) return `(${arm(eventType)}) page`
  const arms = transferEventType.options.map((type) => `(${arm(`'${type}'`)})`).join(' UNION ALL ')
  return `(SELECT id FROM (${arms}) merged ORDER BY block_timestamp DESC, id DESC LIMIT ${limit}) page`
}

/** The collection's columns, then one transfer (all transfer columns null when the page is empty). */
export type TransferFeedRow = TransferRow &
  CollectionHistoryRow & {
    known: boolean
    id: string | null
    /** The collection's standard (collections.standard); null when it is unknown. */
    collection_standard: string | null
  }

/**
 * A collection's or one token's transfers (from
 * transfers_collection_event_type_feed_idx, the three event types merged, and
 * transfers_token_feed_idx), before the cursor. One round trip: the
 * collection's history (`known` false when it is unknown) beside the page.
 * The page's ids come from feed indexes alone (index-only scans of their
 * keys), then the rows by primary key: the planner has no reason to walk
 * another index and filter.
 */
export async function selectTransferFeed(
  db: ReadDb,
  page: { collection: string; tokenId?: string | undefined; before?: BeforeKey | undefined; rows: number },
): Promise<TransferFeedRow[]> {
  const params: unknown[] = [page.collection]
  const where = ['tr.collection_address = $1']
  if (page.tokenId !== undefined) {
    params.push(page.tokenId)
    where.push(`tr.token_id = $${params.length}::numeric`)
  }
  if (page.before !== undefined) {
    params.push(page.before.timestamp, page.before.id)
    where.push(`(tr.block_timestamp, tr.id) < ($${params.length - 1}::timestamptz, $${params.length}::int8)`)
  }
  params.push(page.rows)
  const ids =
    page.tokenId !== undefined
      ? `(SELECT tr.id FROM transfers tr WHERE ${where.join(' AND ')}
           ORDER BY tr.block_timestamp DESC, tr.id DESC LIMIT $${params.length}) page`
      : feedPageIds(where, undefined, `$${params.length}`)
  const sql = `
    SELECT c.address IS NOT NULL AS known, c.deploy_block::text AS deploy_block, c.first_seen_block::text AS first_seen_block,
           c.standard AS collection_standard, p.*
      FROM (VALUES (1)) AS one(x)
      LEFT JOIN collections c ON c.address = $1
      LEFT JOIN LATERAL (
        SELECT ${TRANSFER_COLUMNS} FROM ${ids} JOIN transfers tr ON tr.id = page.id
      ) p ON true
     ORDER BY p.block_us::int8 DESC, p.id::int8 DESC`
  const { rows } = await db.pool.query<TransferFeedRow>(sql, params)
  return rows
}

export type ActivityRow = TransferRow & {
  collection_name: string | null
  /** Only with a collection filter: */
  known?: boolean
  deploy_block?: string | null
  first_seen_block?: string | null
}

/**
 * Every transfer, optionally of one collection and/or one event type, before
 * the cursor, from the per-event-type feed indexes
 * (transfers_event_type_feed_idx, transfers_collection_event_type_feed_idx),
 * each with its collection's name. With a collection filter, the statement
 * also reads that collection (its name, and its history for coverage): the
 * first row then says whether it is `known`, and an empty page is one row
 * whose transfer columns are null.
 */
export async function selectActivity(
  db: ReadDb,
  page: {
    collection?: string | undefined
    eventType?: string | undefined
    before?: BeforeKey | undefined
    rows: number
    /** Default ERC721: the specification's feed. */
    standard?: StandardFilter
  },
): Promise<ActivityRow[]> {
  const params: unknown[] = []
  const where: string[] = []
  const standard = page.standard ?? 'ERC721'
  if (page.collection !== undefined) {
    params.push(page.collection)
    where.push(`tr.collection_address = $${params.length}`)
    // One collection's rows are of its standard: the collection (c, read beside the page) decides, once,
    // and the page stays an index-only walk of its feed index.
    const ofStandard = collectionStandardSql('c', standard)
    if (ofStandard) where.push(ofStandard)
  }
  let eventType: string | undefined
  if (page.eventType !== undefined) {
    params.push(page.eventType)
    eventType = `$${params.length}`
  }
  if (page.before !== undefined) {
    params.push(page.before.timestamp, page.before.id)
    where.push(`(tr.block_timestamp, tr.id) < ($${params.length - 1}::timestamptz, $${params.length}::int8)`)
  }
  params.push(page.rows)
  // The page's ids from the feed indexes alone, then the rows by primary key
  // (as selectTransferFeed).
  const ids = `SELECT ${TRANSFER_COLUMNS}
      FROM ${feedPageIds(where, eventType, `$${params.length}`, page.collection === undefined ? standard : 'all')}
      JOIN transfers tr ON tr.id = page.id`
  const sql =
    page.collection === undefined
      ? `SELECT p.*, c.name AS collection_name FROM (${ids}) p
           LEFT JOIN collections c ON c.address = p.collection_address
          ORDER BY p.block_us::int8 DESC, p.id::int8 DESC`
      : `SELECT c.address IS NOT NULL AS known, c.name AS collection_name,
                c.deploy_block::text AS deploy_block, c.first_seen_block::text AS first_seen_block, p.*
           FROM (VALUES (1)) AS one(x)
           LEFT JOIN collections c ON c.address = $1
           LEFT JOIN LATERAL (${ids}) p ON true
          ORDER BY p.block_us::int8 DESC, p.id::int8 DESC`
  const { rows } = await db.pool.query<ActivityRow>(sql, params)
  return rows
}
