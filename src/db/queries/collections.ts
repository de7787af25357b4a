/**
 * The collections the /v1 read side lists and looks up. Counters and ids
 * leave PostgreSQL as text and stay strings (never JS numbers).
 */
import { type BeforeKey, isoSql, microsSql, type ReadDb, substringPattern } from './sql'

/** Columns of `collections` aliased `c`. */
export const COLLECTION_COLUMNS = `c.id::text AS id, c.address, c.name, c.symbol, c.description, c.image_url,
  c.total_supply::text AS total_supply, c.unique_holders::text AS unique_holders,
  c.total_transfers::text AS total_transfers, c.creator_address, c.deploy_tx_hash,
  ${isoSql('c.created_at')} AS created_at, ${microsSql('c.created_at')} AS created_us,
  c.deploy_block::text AS deploy_block, c.first_seen_block::text AS first_seen_block`

export interface CollectionRow {
  id: string
  address: string
  name: string
  symbol: string | null
  description: string | null
  image_url: string | null
  total_supply: string
  unique_holders: string
  total_transfers: string
  creator_address: string | null
  deploy_tx_hash: string | null
  created_at: string
  created_us: string
  deploy_block: string | null
  first_seen_block: string | null
}

/** A collection's history columns, as rows that read them beside another table carry them. */
export interface CollectionHistoryRow {
  deploy_block: string | null
  first_seen_block: string | null
}

export async function selectCollection(db: ReadDb, address: string): Promise<CollectionRow | undefined> {
  const { rows } = await db.pool.query<CollectionRow>(
    `SELECT ${COLLECTION_COLUMNS} FROM collections c WHERE c.address = $1`,
    [address],
  )
  return rows[0]
}

/**
 * Listed collections newest first by (created_at, id), at most `rows`:
 * all of them (the page's ids from collections_listed_created_idx alone, then
 * the rows), one `address` (exact), or those whose name or symbol contains
 * `search` (pg_trgm).
 */
export async function selectListedCollections(
  db: ReadDb,
  filter: {
    before?: BeforeKey | undefined
    address?: string | undefined
    search?: string | undefined
    rows: number
  },
): Promise<CollectionRow[]> {
  const params: unknown[] = []
  const where = listedWhere(filter.before, params)
  const param = (value: unknown) => {
    params.push(value)
    return `$${params.length}`
  }
  if (filter.address !== undefined) where.push(`c.address = ${param(filter.address)}`)
  if (filter.search !== undefined) {
    const pattern = param(substringPattern(filter.search))
    where.push(`(c.name ILIKE ${pattern} OR c.symbol ILIKE ${pattern})`)
  }
  const sql =
    filter.address === undefined && filter.search === undefined
      ? `SELECT ${COLLECTION_COLUMNS}
             FROM (SELECT c.id FROM collections c WHERE ${where.join(' AND ')}
                    ORDER BY c.created_at DESC, c.id DESC LIMIT ${param(filter.rows)}) page
             JOIN collections c ON c.id = page.id
            ORDER BY c.created_at DESC, c.id DESC`
      : `SELECT ${COLLECTION_COLUMNS} FROM collections c WHERE ${where.join(' AND ')}
            ORDER BY c.created_at DESC, c.id DESC LIMIT ${param(filter.rows)}`
  const { rows } = await db.pool.query<CollectionRow>(sql, params)
  return rows
}

/**
 * A bounded search: the next `window` listed collections in list order,
 * filtered by `search` on name or symbol. Returns up to `rows` matches
 * (`is_tail` false; in no particular order) and, when the window was full,
 * the last collection walked (`is_tail` true).
 */
export async function selectListedCollectionsWindow(
  db: ReadDb,
  filter: { before?: BeforeKey | undefined; search: string; window: number; rows: number },
): Promise<Array<CollectionRow & { is_tail: boolean }>> {
  const params: unknown[] = []
  const where = listedWhere(filter.before, params)
  const n = params.length
  const { rows } = await db.pool.query<CollectionRow & { is_tail: boolean }>(
    `WITH walk AS MATERIALIZED (
       SELECT c.id, c.created_at, c.name, c.symbol FROM collections c WHERE ${where.join(' AND ')}
        ORDER BY c.created_at DESC, c.id DESC LIMIT $${n + 1}),
     hits AS (
       SELECT id FROM walk WHERE name ILIKE $${n + 2} OR symbol ILIKE $${n + 2}
        ORDER BY created_at DESC, id DESC LIMIT $${n + 3}),
     tail AS (
       SELECT id FROM walk ORDER BY created_at ASC, id ASC LIMIT 1)
     SELECT ${COLLECTION_COLUMNS}, false AS is_tail FROM hits JOIN collections c ON c.id = hits.id
     UNION ALL
     SELECT ${COLLECTION_COLUMNS}, true AS is_tail FROM tail JOIN collections c ON c.id = tail.id
      WHERE (SELECT count(*) FROM walk) = $${n + 1}`,
    [...params, filter.window, substringPattern(filter.search), filter.rows],
  )
  return rows
}

/** The conditions of the list (listed, before the cursor); the cursor's values go to `params`. */
function listedWhere(before: BeforeKey | undefined, params: unknown[]): string[] {
  const where = ['c.listed']
  if (before !== undefined) {
    params.push(before.timestamp, before.id)
    where.push(`(c.created_at, c.id) < ($${params.length - 1}::timestamptz, $${params.length}::int8)`)
  }
  return where
}
