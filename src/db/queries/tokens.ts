/**
 * The tokens the /v1 read side reads: one by its key, a collection's in token
 * order, an owner's across collections.
 *
 * `media_type` comes from the media store's own records: the image location
 * is looked up in media_sources by its SHA-256 (MEDIA_JOINS, as GET /v1/media
 * looks it up), so a media_url is only ever given out when GET /v1/media
 * will serve it.
 */

import { ZERO_ADDRESS } from '@/lib/schemas'
import type { CollectionHistoryRow, StandardFilter } from './collections'
import { ANIMATION_MEDIA_TYPE, MEDIA_JOINS, servedLocationSql } from './media'
import { isoSql, type ReadDb } from './sql'
import { traitDocumentParams, traitFilterSql } from './traits'

export interface TokenAttributeRow {
  trait_type: string
  value: string | number | boolean
  display_type?: string
}

/** Output columns over `t` (tokens), `ms`/`mo` (media joins); the caller adds collection_name/symbol. */
export const NFT_COLUMNS = `t.id::text AS id, t.collection_address, t.token_id::text AS token_id, t.current_owner,
  t.is_burned, t.transfer_count, ${servedLocationSql('t.metadata_uri')} AS metadata_uri,
  ${servedLocationSql('t.image_url')} AS image_url, t.name, t.metadata_status, mo.media_type`

/**
 * The document's normalized fields (include_metadata=true): read only when asked for. The stored
 * animation's media type is looked up like the image's (ANIMATION_MEDIA_TYPE), a subquery so that
 * every query selecting these columns needs no join of its own.
 */
export const NFT_DOCUMENT_COLUMNS = `t.description, t.attributes, t.animation_url, t.external_url,
  t.background_color, ${isoSql('t.metadata_updated_at')} AS metadata_updated_at,
  ${ANIMATION_MEDIA_TYPE} AS animation_media_type`

/**
 * The ERC-1155 extension's columns (docs/api.md, "ERC-1155"), read only when
 * the request names a `standard`: an ERC-1155 token's supply and holder
 * count (NULL on ERC-721 tokens), and its only holder when one holder has the
 * whole supply (token_balances_holders_idx; an ERC-721 token never looks). A
 * negative balance (history before the indexed window) is nobody's holding, even
 * when it equals a supply that such history took below zero.
 */
export const NFT_STANDARD_COLUMNS = `t.total_supply::text AS total_supply, t.holder_count,
  (SELECT b.owner FROM token_balances b
    WHERE t.holder_count = 1 AND b.collection_address = t.collection_address AND b.token_id = t.token_id
      AND b.balance = t.total_supply AND b.balance > 0
    ORDER BY b.balance DESC, b.owner LIMIT 1) AS sole_holder`

/** What a token read selects beyond NFT_COLUMNS. */
export interface NftColumnOptions {
  /** Also the document's normalized fields (NFT_DOCUMENT_COLUMNS). */
  withDocument?: boolean | undefined
  /** Also the ERC-1155 extension's columns (NFT_STANDARD_COLUMNS). */
  withStandard?: boolean | undefined
}

export const nftColumns = (options: NftColumnOptions) =>
  [
    NFT_COLUMNS,
    ...(options.withDocument ? [NFT_DOCUMENT_COLUMNS] : []),
    ...(options.withStandard ? [NFT_STANDARD_COLUMNS] : []),
  ].join(', ')

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
  // NFT_STANDARD_COLUMNS: present only when selected.
  /** ERC-1155 tokens only: minted minus burned; null on ERC-721 tokens. */
  total_supply?: string | null
  /** ERC-1155 tokens only: holders with a positive balance. */
  holder_count?: number | null
  /** ERC-1155 tokens only: the holder of the whole supply, when one has it. */
  sole_holder?: string | null
  /** The collection's standard (collections.standard), where the query reads it. */
  collection_standard?: string | null
  /** Owner holdings with a standard: the owner's balance (ERC-721: '1'). */
  balance?: string | null
}

export async function selectToken(
  db: ReadDb,
  key: { address: string; tokenId: string } & NftColumnOptions,
): Promise<NftRow | undefined> {
  const { rows } = await db.pool.query<NftRow>(
    `SELECT ${nftColumns(key)}, c.name AS collection_name, c.symbol AS collection_symbol,
            c.standard AS collection_standard
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
  page: NftColumnOptions & {
    address: string
    includeBurned: boolean
    after?: { tokenId: string; id: number } | undefined
    rows: number
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
  const documents = traitDocumentParams(params, page.traits ?? [])
  // One extra row when the cursor's own token may come back.
  params.push(page.rows + (after && includeBurned ? 1 : 0))
  // token_id is unique per collection, so ordering by it alone is the (token_id, id) order.
  const order = includeBurned ? 't.token_id' : 't.token_id, t.id'
  const ids = documents.length
    ? filteredPageIds({ where, documents, includeBurned, limit: `$${params.length}` })
    : `SELECT t.id FROM tokens t WHERE ${where.join(' AND ')} ORDER BY ${order} LIMIT $${params.length}`
  const sql = `
    SELECT c.name AS collection_name, c.symbol AS collection_symbol, c.standard AS collection_standard,
           c.deploy_block::text AS deploy_block, c.first_seen_block::text AS first_seen_block, p.*
      FROM collections c
      LEFT JOIN LATERAL (
        SELECT ${nftColumns(page)}
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
 * SQL: the matching tokens of collection $1 (`t.collection_address = $1`, the
 * trait filters `documents`), id, token_id, is_burned and metadata_status, from
 * tokens_collection_attributes_idx alone. The documents are opaque to the
 * planner (traitFilterSql): estimated by its share of all tokens, a value
 * common in other collections but absent from this one would look common here
 * too, and the planner would walk the whole collection or scan the table. The
 * caller keeps this in a MATERIALIZED CTE, so that nothing else (an order, a
 * limit, other conditions) changes that plan.
 */
export function collectionMatchesSql(documents: string[]): string {
  const where = ['t.collection_address = $1', ...traitFilterSql(documents, { opaque: true })]
  return `SELECT t.id, t.token_id, t.is_burned, t.metadata_status FROM tokens t WHERE ${where.join(' AND ')}`
}

/**
 * A trait-filtered page's token ids in token order. PostgreSQL cannot
 * estimate jsonb containment within one collection (it multiplies the
 * collection's share by the value's share of all tokens), so the plan is
 * fixed here: the first FILTER_WINDOW tokens after the cursor are walked in
 * order (tokens_collection_live_idx) and filtered, which fills the page when
 * the filter is not rare; only when it does not, the collection's matching
 * tokens are read from tokens_collection_attributes_idx (collectionMatchesSql)
 * and those after that window sorted.
 */
function filteredPageIds(q: {
  where: string[]
  documents: string[]
  includeBurned: boolean
  limit: string
}): string {
  const base = q.where.join(' AND ')
  const filters = [`t.metadata_status = 'ok'`, ...traitFilterSql(q.documents)].join(' AND ')
  const order = q.includeBurned ? 't.token_id' : 't.token_id, t.id'
  const live = q.includeBurned ? '' : 'NOT m.is_burned AND '
  const matchedOrder = q.includeBurned ? 'm.token_id' : 'm.token_id, m.id'
  const afterEdge = q.includeBurned ? 'm.token_id > e.token_id' : '(m.token_id, m.id) > (e.token_id, e.id)'
  return `
    WITH near AS MATERIALIZED (
      SELECT t.id, t.token_id
        FROM (SELECT t.id, t.token_id, t.attributes, t.metadata_status FROM tokens t
               WHERE ${base} ORDER BY ${order} LIMIT ${FILTER_WINDOW}) t
       WHERE ${filters} ORDER BY ${order} LIMIT ${q.limit}
    ), edge AS MATERIALIZED (
      SELECT t.token_id, t.id FROM tokens t WHERE ${base} ORDER BY ${order} OFFSET ${FILTER_WINDOW - 1} LIMIT 1
    ), matched AS MATERIALIZED (${collectionMatchesSql(q.documents)})
    SELECT u.id FROM (
      SELECT id, token_id FROM near
      UNION ALL
      (SELECT m.id, m.token_id FROM matched m, edge e
        WHERE (SELECT count(*) FROM near) < ${q.limit} AND ${live}m.metadata_status = 'ok' AND ${afterEdge}
        ORDER BY ${matchedOrder} LIMIT ${q.limit})
    ) u ORDER BY u.token_id, u.id LIMIT ${q.limit}`
}

/**
 * The tokens an owner holds, ordered across collections by
 * (collection_address, token_id, id), token ids compared as numbers, after the
 * cursor (docs/api.md, "ERC-1155"):
 *  - ERC-721 (the default): the tokens whose current owner is `owner`
 *    (tokens_owner_idx). An ERC-1155 token's current_owner is the zero
 *    address, so only the zero address's list must leave them out.
 *  - ERC-1155: the tokens of which `owner` has a positive balance
 *    (token_balances_owner_idx), with the balance.
 *  - all: both pages merged in that one order. A (collection, token id) is one
 *    token of one standard, so the cursor's (collection, token id) alone
 *    places it in either list.
 */
export async function selectOwnerTokens(
  db: ReadDb,
  page: NftColumnOptions & {
    owner: string
    after?: { collection: string; tokenId: string; id: number } | undefined
    rows: number
    /** Default ERC721: the specification's list. */
    standard?: StandardFilter
    /** Only these collections (distinct; selectOwnerTokensOf). */
    collections?: string[] | undefined
  },
): Promise<NftRow[]> {
  if (page.collections !== undefined)
    return selectOwnerTokensOf(db, { ...page, collections: page.collections })
  const standard = page.standard ?? 'ERC721'
  const params: unknown[] = [page.owner]
  // Placeholders only for what a statement uses: PostgreSQL cannot type an unused one.
  const param = (value: unknown) => {
    params.push(value)
    return `$${params.length}`
  }
  const limit = param(page.rows)
  const after = page.after && { collection: param(page.after.collection), tokenId: param(page.after.tokenId) }
  const arms: string[] = []
  if (standard !== 'ERC1155') {
    const where = ['t.current_owner = $1']
    if (page.owner === ZERO_ADDRESS) where.push('t.total_supply IS NULL')
    if (page.after !== undefined && after !== undefined)
      where.push(
        `(t.collection_address, t.token_id, t.id) > (${after.collection}::varchar, ${after.tokenId}::numeric, ${param(page.after.id)}::int8)`,
      )
    // The spec's list reads ids alone; the balance column only for the extension and the merge.
    const wide = page.withStandard || standard === 'all'
    arms.push(`SELECT t.id${wide ? ", t.collection_address, t.token_id, '1'::numeric AS balance" : ''}
      FROM tokens t WHERE ${where.join(' AND ')}
     ORDER BY t.collection_address, t.token_id, t.id LIMIT ${limit}`)
  }
  if (standard !== 'ERC721') {
    // After a cursor, the scan of token_balances_owner_idx starts at the cursor only when the
    // row comparison is the sole bound on the owner column and the order names the owner: with
    // owner = $1 beside it, PostgreSQL starts at the owner's first entry (measured at the
    // bench scale: 162 buffers at page 500 against 18). owner <= $1 with the comparison is owner = $1.
    const where = [after === undefined ? 'b.owner = $1' : 'b.owner <= $1', 'b.balance > 0']
    if (after !== undefined)
      where.push(
        `(b.owner, b.collection_address, b.token_id) > ($1::varchar, ${after.collection}::varchar, ${after.tokenId}::numeric)`,
      )
    arms.push(`SELECT t.id, b.collection_address, b.token_id, b.balance
      FROM token_balances b
      JOIN tokens t ON t.collection_address = b.collection_address AND t.token_id = b.token_id
     WHERE ${where.join(' AND ')}
     ORDER BY b.owner, b.collection_address, b.token_id LIMIT ${limit}`)
  }
  const ids =
    arms.length === 1
      ? arms[0]
      : `SELECT * FROM (${arms.map((arm) => `(${arm})`).join(' UNION ALL ')}) merged
          ORDER BY collection_address, token_id, id LIMIT ${limit}`
  const extended = page.withStandard ? ', page.balance::text AS balance' : ''
  const sql = `
    SELECT ${nftColumns(page)}, c.name AS collection_name, c.symbol AS collection_symbol${extended}
      FROM (${ids}) page
      JOIN tokens t ON t.id = page.id
      LEFT JOIN collections c ON c.address = t.collection_address
      ${MEDIA_JOINS}
     ORDER BY t.collection_address, t.token_id, t.id`
  const { rows } = await db.pool.query<NftRow>(sql, params)
  return rows
}

/**
 * selectOwnerTokens with a collection filter (`collection=`, docs/api.md,
 * "Ownership views"): the same order and cursor. The collections at or after
 * the cursor's are walked one by one (a LATERAL per collection, each one
 * range of tokens_owner_idx / token_balances_owner_idx starting at the
 * cursor in the cursor's collection), each at most `rows` entries; the page
 * is the first `rows` of them. PostgreSQL 15 gives no ordered index scan for
 * `collection_address = ANY(...)` past the leading column, so this bounds a
 * page at (collections × rows) index entries whatever its depth. The first
 * collection (the cursor's, on a later page) is walked alone first: when it
 * fills the page, as it does deep in a large holding, the page reads `rows`
 * entries, not (collections × rows); the others are walked only for the rest.
 */
async function selectOwnerTokensOf(
  db: ReadDb,
  page: NftColumnOptions & {
    owner: string
    after?: { collection: string; tokenId: string; id: number } | undefined
    rows: number
    standard?: StandardFilter
    collections: string[]
  },
): Promise<NftRow[]> {
  const after = page.after
  const collections = [...new Set(page.collections)].sort().filter((c) => !after || c >= after.collection)
  if (collections.length === 0) return []
  const first = await walkOwnerCollections(db, { ...page, collections: collections.slice(0, 1) })
  if (first.length >= page.rows || collections.length === 1) return first
  const rest = await walkOwnerCollections(db, {
    ...page,
    collections: collections.slice(1),
    rows: page.rows - first.length,
  })
  return [...first, ...rest]
}

/** The first `rows` tokens of `owner` in `collections` (sorted), after the cursor in its collection. */
async function walkOwnerCollections(
  db: ReadDb,
  page: Parameters<typeof selectOwnerTokensOf>[1],
): Promise<NftRow[]> {
  const standard = page.standard ?? 'ERC721'
  const { after, collections } = page
  // Per collection, the (token_id, id) the walk starts after: the cursor's in its collection, else before any.
  const tokenIds = collections.map((c) => (after && c === after.collection ? after.tokenId : '-1'))
  const ids = collections.map((c) => (after && c === after.collection ? after.id : 0))
  const params: unknown[] = [page.owner, collections, tokenIds, ids, page.rows]
  const arms: string[] = []
  if (standard !== 'ERC1155') {
    const zero = page.owner === ZERO_ADDRESS ? ' AND t.total_supply IS NULL' : ''
    arms.push(`SELECT p.id, k.c AS collection_address, p.token_id, '1'::numeric AS balance
      FROM unnest($2::varchar[], $3::numeric[], $4::int8[]) AS k(c, tid, tkid)
      CROSS JOIN LATERAL (
        SELECT t.id, t.token_id FROM tokens t
         WHERE t.current_owner = $1 AND t.collection_address = k.c AND (t.token_id, t.id) > (k.tid, k.tkid)${zero}
         ORDER BY t.token_id, t.id LIMIT $5) p`)
  }
  if (standard !== 'ERC721') {
    arms.push(`SELECT t.id, k.c AS collection_address, p.token_id, p.balance
      FROM unnest($2::varchar[], $3::numeric[]) AS k(c, tid)
      CROSS JOIN LATERAL (
        SELECT b.token_id, b.balance FROM token_balances b
         WHERE b.owner = $1 AND b.collection_address = k.c AND b.token_id > k.tid AND b.balance > 0
         ORDER BY b.token_id LIMIT $5) p
      JOIN tokens t ON t.collection_address = k.c AND t.token_id = p.token_id`)
  }
  const extended = page.withStandard ? ', page.balance::text AS balance' : ''
  const sql = `
    SELECT ${nftColumns(page)}, c.name AS collection_name, c.symbol AS collection_symbol${extended}
      FROM (SELECT * FROM (${arms.join(' UNION ALL ')}) u
             ORDER BY u.collection_address, u.token_id, u.id LIMIT $5) page
      -- Each page row by primary key (OFFSET 0 keeps it a lookup per row, never a hash of tokens).
      CROSS JOIN LATERAL (SELECT * FROM tokens t WHERE t.id = page.id OFFSET 0) t
      LEFT JOIN collections c ON c.address = t.collection_address
      ${MEDIA_JOINS}
     ORDER BY t.collection_address, t.token_id, t.id`
  const { rows } = await db.pool.query<NftRow>(sql, params)
  return rows
}

/** A token, its collection's history, then one of its holders (owner and balance null when none). */
export interface TokenHolderRow extends CollectionHistoryRow {
  /** The token has a total_supply: it is an ERC-1155 token (its holders are in token_balances). */
  multi: boolean
  current_owner: string
  is_burned: boolean
  collection_standard: string | null
  owner: string | null
  balance: string | null
}

/**
 * One round trip: a token (no row at all: unknown) and, for an ERC-1155
 * token, a page of its holders with a positive balance, by balance
 * descending then owner (token_balances_holders_idx), after the cursor.
 * An ERC-721 token's one holder is its current owner: the caller makes it.
 */
export async function selectTokenHolders(
  db: ReadDb,
  page: {
    address: string
    tokenId: string
    after?: { balance: string; owner: string } | undefined
    rows: number
  },
): Promise<TokenHolderRow[]> {
  const params: unknown[] = [page.address, page.tokenId, page.rows]
  const token = 'b.collection_address = $1 AND b.token_id = $2::numeric'
  // Mixed directions (balance descending, owner ascending) have no row comparison: after a
  // cursor the page is the rest of its balance, then the smaller balances, each one range
  // of token_balances_holders_idx (one OR condition scanned from the token's first entry).
  let holders = `SELECT b.owner, b.balance FROM token_balances b WHERE ${token} AND b.balance > 0
                  ORDER BY b.balance DESC, b.owner LIMIT $3`
  if (page.after !== undefined) {
    params.push(page.after.balance, page.after.owner)
    holders = `SELECT * FROM (
        (SELECT b.owner, b.balance FROM token_balances b
          WHERE ${token} AND b.balance = $4::numeric AND b.owner > $5::varchar ORDER BY b.owner LIMIT $3)
        UNION ALL
        (SELECT b.owner, b.balance FROM token_balances b
          WHERE ${token} AND b.balance > 0 AND b.balance < $4::numeric ORDER BY b.balance DESC, b.owner LIMIT $3)
      ) q ORDER BY q.balance DESC, q.owner LIMIT $3`
  }
  const { rows } = await db.pool.query<TokenHolderRow>(
    `SELECT t.total_supply IS NOT NULL AS multi, t.current_owner, t.is_burned, c.standard AS collection_standard,
            c.deploy_block::text AS deploy_block, c.first_seen_block::text AS first_seen_block,
            p.owner, p.balance::text AS balance
       FROM tokens t
       LEFT JOIN collections c ON c.address = t.collection_address
       LEFT JOIN LATERAL (${holders}) p ON t.total_supply IS NOT NULL
      WHERE t.collection_address = $1 AND t.token_id = $2::numeric
      ORDER BY p.balance DESC, p.owner`,
    params,
  )
  return rows
}

/** A token's stored metadata document (token_documents), with the token's key. */
export interface TokenDocumentRow {
  collection_address: string
  token_id: string
  metadata_status: string
  /** The collection's standard (collections.standard). */
  collection_standard: string | null
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
            ${isoSql('d.fetched_at')} AS fetched_at, d.document, c.standard AS collection_standard
       FROM tokens t JOIN token_documents d ON d.token_id = t.id
       LEFT JOIN collections c ON c.address = t.collection_address
      WHERE t.collection_address = $1 AND t.token_id = $2::numeric`,
    [key.address, key.tokenId],
  )
  return rows[0]
}
