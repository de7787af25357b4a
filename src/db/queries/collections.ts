/**
 * The collections the /v1 read side lists and looks up. Counters and ids
 * leave PostgreSQL as text and stay strings (never JS numbers).
 */
import type { StandardParam } from '@/lib/schemas'
import { servedLocationSql } from './media'
import { type BeforeKey, isoSql, microsSql, type ReadDb, substringPattern } from './sql'

/** Columns of `collections` aliased `c`. */
export const COLLECTION_COLUMNS = `c.id::text AS id, c.address, c.name, c.symbol, c.description,
  ${servedLocationSql('c.image_url')} AS image_url,
  c.total_supply::text AS total_supply, c.unique_holders::text AS unique_holders,
  c.total_transfers::text AS total_transfers, c.creator_address, c.deploy_tx_hash,
  ${isoSql('c.created_at')} AS created_at, ${microsSql('c.created_at')} AS created_us,
  c.deploy_block::text AS deploy_block, c.first_seen_block::text AS first_seen_block, c.standard`

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
  /** 'ERC721', 'ERC721_LEGACY' or 'ERC1155' (the API shows the first two as ERC721). */
  standard: string
}

/** The token standards a list serves (docs/api.md, "ERC-1155"); 'ERC721' when the request names none. */
export type StandardFilter = StandardParam

/**
 * The condition on a collection (`alias`) that keeps the standards served:
 * ERC721 includes the legacy ERC-721 contracts. Null for all.
 */
export function collectionStandardSql(alias: string, standard: StandardFilter): string | null {
  if (standard === 'all') return null
  // IS DISTINCT FROM: a collection the row refers to but the table lacks reads as ERC-721, as before.
  return standard === 'ERC1155'
    ? `${alias}.standard = 'ERC1155'`
    : `${alias}.standard IS DISTINCT FROM 'ERC1155'`
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
 * the rows), or one `address` (exact).
 */
export async function selectListedCollections(
  db: ReadDb,
  filter: {
    before?: BeforeKey | undefined
    address?: string | undefined
    rows: number
    /** Default ERC721: the specification's list. */
    standard?: StandardFilter
  },
): Promise<CollectionRow[]> {
  const params: unknown[] = []
  const where = listedWhere(filter.before, params, filter.standard ?? 'ERC721')
  if (filter.address !== undefined) {
    params.push(filter.address)
    where.push(`c.address = $${params.length}`)
  }
  params.push(filter.rows)
  const limit = `$${params.length}`
  const sql =
    filter.address === undefined
      ? `SELECT ${COLLECTION_COLUMNS}
             FROM (SELECT c.id FROM collections c WHERE ${where.join(' AND ')}
                    ORDER BY c.created_at DESC, c.id DESC LIMIT ${limit}) page
             JOIN collections c ON c.id = page.id
            ORDER BY c.created_at DESC, c.id DESC`
      : `SELECT ${COLLECTION_COLUMNS} FROM collections c WHERE ${where.join(' AND ')}
            ORDER BY c.created_at DESC, c.id DESC LIMIT ${limit}`
  const { rows } = await db.pool.query<CollectionRow>(sql, params)
  return rows
}

/**
 * Listed collections whose name or symbol contains `search`, newest first by
 * (created_at, id), at most `rows`, in two parts (docs/database.md, "Collection search"):
 *  - near: the next `window` collections of the list, walked in order and
 *    filtered; a term that is not rare fills the page here and the walk stops
 *    early;
 *  - far: only when near holds fewer than `rows`, the matches older than the
 *    window, read through the trigram indexes alone (`collections_matching`:
 *    a bitmap of the matches, never a walk of the list) and sorted.
 */
export async function selectListedCollectionsMatching(
  db: ReadDb,
  filter: {
    before?: BeforeKey | undefined
    search: string
    rows: number
    window: number
    standard?: StandardFilter
  },
): Promise<CollectionRow[]> {
  const params: unknown[] = []
  const conditions = listedWhere(filter.before, params, filter.standard ?? 'ERC721')
  const listed = conditions.join(' AND ')
  // Where far starts: the window's end counted over every listed collection (the same
  // conditions without the standard's), read from the list index alone (index-only). It is never
  // older than the end of near's walk, which may reach further (near skips other standards):
  // near and far may then share matches, hence UNION.
  const ofStandard = collectionStandardSql('c', filter.standard ?? 'ERC721')
  const listedAny = conditions.filter((c) => c !== ofStandard).join(' AND ')
  const n = params.length
  const [pattern, rows, window] = [`$${n + 1}`, `$${n + 2}`, `$${n + 3}`]
  const { rows: found } = await db.pool.query<CollectionRow>(
    `WITH near AS MATERIALIZED (
       SELECT w.id, w.created_at FROM (
         SELECT c.id, c.created_at, c.name, c.symbol FROM collections c WHERE ${listed}
          ORDER BY c.created_at DESC, c.id DESC LIMIT ${window}) w
        WHERE w.name ILIKE ${pattern} OR w.symbol ILIKE ${pattern}
        ORDER BY w.created_at DESC, w.id DESC LIMIT ${rows}),
     window_end AS MATERIALIZED (
       SELECT c.created_at, c.id FROM collections c
        WHERE (SELECT count(*) FROM near) < ${rows} AND ${listedAny}
        ORDER BY c.created_at DESC, c.id DESC OFFSET ${window} - 1 LIMIT 1),
     far AS MATERIALIZED (
       SELECT c.id, c.created_at FROM collections_matching(${pattern}) c
        WHERE EXISTS (SELECT FROM window_end) AND ${listed}
          AND (c.created_at, c.id) < (SELECT created_at, id FROM window_end)),
     page AS (
       SELECT id, created_at FROM near
       UNION
       (SELECT id, created_at FROM far ORDER BY created_at DESC, id DESC LIMIT ${rows}))
     SELECT ${COLLECTION_COLUMNS}
       FROM (SELECT id, created_at FROM page ORDER BY created_at DESC, id DESC LIMIT ${rows}) p
       JOIN collections c ON c.id = p.id
      ORDER BY c.created_at DESC, c.id DESC`,
    [...params, substringPattern(filter.search), filter.rows, filter.window],
  )
  return found
}

/**
 * A bounded search: the next `window` listed collections in list order,
 * filtered by `search` on name or symbol. Returns up to `rows` matches
 * (`is_tail` false; in no particular order) and, when the window was full,
 * the last collection walked (`is_tail` true).
 */
export async function selectListedCollectionsWindow(
  db: ReadDb,
  filter: {
    before?: BeforeKey | undefined
    search: string
    window: number
    rows: number
    standard?: StandardFilter
  },
): Promise<Array<CollectionRow & { is_tail: boolean }>> {
  const params: unknown[] = []
  const where = listedWhere(filter.before, params, filter.standard ?? 'ERC721')
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

/**
 * The conditions of the list (listed, of the standards served, before the
 * cursor); the cursor's values go to `params`. ERC-1155 alone is read from
 * collections_erc1155_listed_idx (partial), the others from
 * collections_listed_created_idx, the standard checked on the row.
 */
function listedWhere(before: BeforeKey | undefined, params: unknown[], standard: StandardFilter): string[] {
  const where = ['c.listed']
  const ofStandard = collectionStandardSql('c', standard)
  if (ofStandard) where.push(ofStandard)
  if (before !== undefined) {
    params.push(before.timestamp, before.id)
    where.push(`(c.created_at, c.id) < ($${params.length - 1}::timestamptz, $${params.length}::int8)`)
  }
  return where
}
