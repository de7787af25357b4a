/**
 * The tokens the /v1 read side reads: one by its key, a collection's in token
 * order, an owner's across collections.
 *
 * `media_type` comes from the media store's own records: the image location
 * is looked up in media_sources by its SHA-256 (MEDIA_JOINS, as GET /v1/media
 * looks it up), so a media_url is only ever given out when GET /v1/media
 * will serve it.
 */

import type { CollectionHistoryRow } from './collections'
import { ANIMATION_MEDIA_TYPE, MEDIA_JOINS } from './media'
import { isoSql, type ReadDb } from './sql'
import { traitFilterSql } from './traits'

export interface TokenAttributeRow {
  trait_type: string
  value: string | number | boolean
  display_type?: string
}

/** Output columns over `t` (tokens), `ms`/`mo` (media joins); the caller adds collection_name/symbol. */
export const NFT_COLUMNS = `t.id::text AS id, t.collection_address, t.token_id::text AS token_id, t.current_owner,
  t.is_burned, t.transfer_count, t.metadata_uri, t.image_url, t.name, t.metadata_status, mo.media_type`

/**
 * The document's normalized fields (include_metadata=true): read only when asked for. The stored
 * animation's media type is looked up like the image's (ANIMATION_MEDIA_TYPE), a subquery so that
 * every query selecting these columns needs no join of its own.
 */
export const NFT_DOCUMENT_COLUMNS = `t.description, t.attributes, t.animation_url, t.external_url,
  t.background_color, ${isoSql('t.metadata_updated_at')} AS metadata_updated_at,
  ${ANIMATION_MEDIA_TYPE} AS animation_media_type`

const nftColumns = (withDocument: boolean) =>
  withDocument ? `${NFT_COLUMNS}, ${NFT_DOCUMENT_COLUMNS}` : NFT_COLUMNS

export interface NftRow {
  id: string
  collection_address: string
  token_id: string
  current_owner: string
  is_burned: boolean
  transfer_count: number
  metadata_uri: string | null
  image_url: string | null
  name: string | null
  metadata_status: string
  media_type: string | null
  // NFT_DOCUMENT_COLUMNS: present only when selected.
  description?: string | null
  /** Parsed jsonb: [{ trait_type, value, display_type? }] as the indexer normalized them. */
  attributes?: TokenAttributeRow[] | null
  animation_url?: string | null
  /** Sniffed type of the stored animation_url bytes; null when not stored. */
  animation_media_type?: string | null
  external_url?: string | null
  background_color?: string | null
  /** RFC 3339, when the document these fields come from was fetched. */
  metadata_updated_at?: string | null
  collection_name: string | null
  collection_symbol: string | null
}

export async function selectToken(
  db: ReadDb,
  key: { address: string; tokenId: string; withDocument?: boolean },
): Promise<NftRow | undefined> {
  const { rows } = await db.pool.query<NftRow>(
    `SELECT ${nftColumns(key.withDocument ?? false)}, c.name AS collection_name, c.symbol AS collection_symbol
       FROM tokens t
       LEFT JOIN collections c ON c.address = t.collection_address
       ${MEDIA_JOINS}
      WHERE t.collection_address = $1 AND t.token_id = $2::numeric`,
    [key.address, key.tokenId],
  )
  return rows[0]
}

/** The collection's columns, then one of its tokens (all token columns null when it has none). */
export type CollectionNftRow = NftRow &
  CollectionHistoryRow & {
    id: string | null
  }

/**
 * One round trip: a collection (for names and coverage) and a page of its
 * tokens in (token_id, id) order, token ids compared as numbers, after the
 * cursor. No row at all: the collection is unknown. Without burned tokens the
 * page is read from tokens_collection_live_idx (collection, is_burned,
 * token_id, id); with them, from the unique (collection, token_id) key — a
 * token id appears once per collection, so that order is the same
 * (token_id, id) order. That key has no id: the page is bounded by token_id
 * alone and the cursor's own token may come back (one row more is read);
 * the caller drops it.
 */
export async function selectCollectionTokens(
  db: ReadDb,
  page: {
    address: string
    includeBurned: boolean
    after?: { tokenId: string; id: number } | undefined
    rows: number
    /** Also the document's normalized fields (NFT_DOCUMENT_COLUMNS). */
    withDocument?: boolean
    /**
     * Trait filters (docs/api.md, "Traits"): per trait type, the jsonb
     * documents of which the attributes must contain one; all types must
     * match. Only tokens with metadata_status 'ok' match a filter.
     */
    traits?: string[][] | undefined
  },
): Promise<CollectionNftRow[]> {
  const { includeBurned, after } = page
  const params: unknown[] = [page.address]
  // $1, not the lateral c.address: the planner then knows the collection.
  const where = ['t.collection_address = $1']
  if (!includeBurned) where.push('NOT t.is_burned')
  if (after && !includeBurned) {
    params.push(after.tokenId, after.id)
    where.push('(t.token_id, t.id) > ($2::numeric, $3::int8)')
  } else if (after) {
    params.push(after.tokenId)
    where.push('t.token_id >= $2::numeric')
  }
  // The keyset order and cursor stay as without filters.
  const filters = page.traits?.length
    ? [`t.metadata_status = 'ok'`, ...traitFilterSql(params, page.traits)]
    : []
  // One extra row when the cursor's own token may come back.
  params.push(page.rows + (after && includeBurned ? 1 : 0))
  // token_id is unique per collection, so ordering by it alone is the (token_id, id) order.
  const order = includeBurned ? 't.token_id' : 't.token_id, t.id'
  const ids = filters.length
    ? filteredPageIds({ where, filters, includeBurned, limit: `$${params.length}` })
    : `SELECT t.id FROM tokens t WHERE ${where.join(' AND ')} ORDER BY ${order} LIMIT $${params.length}`
  const sql = `
    SELECT c.name AS collection_name, c.symbol AS collection_symbol,
           c.deploy_block::text AS deploy_block, c.first_seen_block::text AS first_seen_block, p.*
      FROM collections c
      LEFT JOIN LATERAL (
        SELECT ${nftColumns(page.withDocument ?? false)}
          FROM (${ids}) page
          JOIN tokens t ON t.id = page.id
          ${MEDIA_JOINS}
      ) p ON true
     WHERE c.address = $1
     ORDER BY p.token_id::numeric, p.id::int8`
  const { rows } = await db.pool.query<CollectionNftRow>(sql, params)
  return rows
}

/** Tokens walked in order before a trait-filtered page falls back to the matching tokens (docs/api.md, "Traits"). */
export const FILTER_WINDOW = 256

/**
 * A trait-filtered page's token ids in token order. PostgreSQL cannot
 * estimate jsonb containment within one collection (it multiplies the
 * collection's share by the value's share of all tokens), so the plan is
 * fixed here: the first FILTER_WINDOW tokens after the cursor are walked in
 * order (tokens_collection_live_idx) and filtered, which fills the page when
 * the filter is not rare; only when it does not, the matching tokens after
 * that window are taken from tokens_attributes_idx and sorted.
 */
function filteredPageIds(q: {
  where: string[]
  filters: string[]
  includeBurned: boolean
  limit: string
}): string {
  const base = q.where.join(' AND ')
  const filters = q.filters.join(' AND ')
  const order = q.includeBurned ? 't.token_id' : 't.token_id, t.id'
  const afterEdge = q.includeBurned ? 't.token_id > e.token_id' : '(t.token_id, t.id) > (e.token_id, e.id)'
  return `
    WITH near AS MATERIALIZED (
      SELECT t.id, t.token_id
        FROM (SELECT t.id, t.token_id, t.attributes, t.metadata_status FROM tokens t
               WHERE ${base} ORDER BY ${order} LIMIT ${FILTER_WINDOW}) t
       WHERE ${filters} ORDER BY ${order} LIMIT ${q.limit}
    ), edge AS MATERIALIZED (
      SELECT t.token_id, t.id FROM tokens t WHERE ${base} ORDER BY ${order} OFFSET ${FILTER_WINDOW - 1} LIMIT 1
    )
    SELECT u.id FROM (
      SELECT id, token_id FROM near
      UNION ALL
      (SELECT t.id, t.token_id FROM tokens t, edge e
        WHERE (SELECT count(*) FROM near) < ${q.limit} AND ${base} AND ${filters} AND ${afterEdge}
        ORDER BY ${order} LIMIT ${q.limit})
    ) u ORDER BY u.token_id, u.id LIMIT ${q.limit}`
}

/**
 * The tokens whose current owner is `owner`, ordered across collections by
 * (collection_address, token_id, id), token ids compared as numbers
 * (tokens_owner_idx), after the cursor.
 */
export async function selectOwnerTokens(
  db: ReadDb,
  page: {
    owner: string
    after?: { collection: string; tokenId: string; id: number } | undefined
    rows: number
    /** Also the document's normalized fields (NFT_DOCUMENT_COLUMNS). */
    withDocument?: boolean
  },
): Promise<NftRow[]> {
  const params: unknown[] = [page.owner]
  const where = ['t.current_owner = $1']
  if (page.after !== undefined) {
    params.push(page.after.collection, page.after.tokenId, page.after.id)
    where.push('(t.collection_address, t.token_id, t.id) > ($2::varchar, $3::numeric, $4::int8)')
  }
  params.push(page.rows)
  const sql = `
    SELECT ${nftColumns(page.withDocument ?? false)}, c.name AS collection_name, c.symbol AS collection_symbol
      FROM (SELECT t.id FROM tokens t WHERE ${where.join(' AND ')}
             ORDER BY t.collection_address, t.token_id, t.id LIMIT $${params.length}) page
      JOIN tokens t ON t.id = page.id
      LEFT JOIN collections c ON c.address = t.collection_address
      ${MEDIA_JOINS}
     ORDER BY t.collection_address, t.token_id, t.id`
  const { rows } = await db.pool.query<NftRow>(sql, params)
  return rows
}

/** A token's stored metadata document (token_documents), with the token's key. */
export interface TokenDocumentRow {
  collection_address: string
  token_id: string
  metadata_status: string
  source_uri: string
  /** RFC 3339. */
  fetched_at: string
  document: Record<string, unknown>
}

/**
 * The document of one token as fetched, or undefined when the token is
 * unknown or no document was ever fetched for it.
 */
export async function selectTokenDocument(
  db: ReadDb,
  key: { address: string; tokenId: string },
): Promise<TokenDocumentRow | undefined> {
  const { rows } = await db.pool.query<TokenDocumentRow>(
    `SELECT t.collection_address, t.token_id::text AS token_id, t.metadata_status, d.source_uri,
            ${isoSql('d.fetched_at')} AS fetched_at, d.document
       FROM tokens t JOIN token_documents d ON d.token_id = t.id
      WHERE t.collection_address = $1 AND t.token_id = $2::numeric`,
    [key.address, key.tokenId],
  )
  return rows[0]
}
