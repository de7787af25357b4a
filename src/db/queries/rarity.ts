/**
 * A collection's tokens by rarity (docs/api.md, "Rarity"), read from the
 * collection's latest stored ranking (token_rarity, written by the indexer:
 * src/indexer/store/rarity.ts, where the method is). Order: score
 * descending, then (token_id, id) — the ranking's `position`.
 */
import type { CollectionHistoryRow } from './collections'
import { MEDIA_JOINS } from './media'
import type { ReadDb } from './sql'
import { collectionMatchesSql, FILTER_WINDOW, type NftColumnOptions, type NftRow, nftColumns } from './tokens'
import { traitDocumentParams, traitFilterSql } from './traits'

export type RarityNftRow = NftRow &
  CollectionHistoryRow & {
    id: string | null
    /** Rounded to 6 decimals, as text. */
    rarity_score: string | null
    rarity_rank: string | null
  }

/**
 * One round trip: the collection (no row at all: unknown) and a page of its
 * ranked tokens after the cursor's token (its position read from the same
 * ranking; a cursor token that is not ranked gives an empty page). Listed:
 * the ranked tokens that are still counted (not burned, metadata 'ok') and
 * match every trait filter (see selectCollectionTokens); ranks stay the
 * collection's. The page walks token_rarity_position_idx from the cursor;
 * with filters, past FILTER_WINDOW ranked tokens, it takes the collection's
 * matching tokens (tokens_collection_attributes_idx), looks up each one's
 * ranking by key and sorts them by position.
 */
export async function selectCollectionTokensByRarity(
  db: ReadDb,
  page: NftColumnOptions & {
    address: string
    after?: { tokenId: string; id: number } | undefined
    rows: number
    traits?: string[][] | undefined
  },
): Promise<RarityNftRow[]> {
  const params: unknown[] = [page.address]
  const documents = traitDocumentParams(params, page.traits ?? [])
  const live = [
    't.collection_address = $1',
    'NOT t.is_burned',
    `t.metadata_status = 'ok'`,
    ...traitFilterSql(documents),
  ]
  // Each ranked token's row is checked by key as the range is walked (OFFSET 0 keeps that lateral a
  // nested loop): the planner cannot estimate the cursor's position, nor jsonb containment within one
  // collection, and would otherwise hash or sort the collection's whole live range.
  const checked = `CROSS JOIN LATERAL (SELECT 1 FROM tokens t WHERE t.id = r.token_id AND ${live.join(' AND ')} OFFSET 0) t`
  const where = ['r.collection_address = $1']
  if (page.after) {
    params.push(page.after.tokenId, page.after.id)
    const [tokenParam, idParam] = [params.length - 1, params.length]
    // The cursor token's place (none: it is not ranked, and the page is empty).
    where.push(`r.position > (SELECT cr.position FROM token_rarity cr JOIN tokens ct ON ct.id = cr.token_id
                               WHERE cr.token_id = $${idParam}::int8 AND cr.collection_address = $1
                                 AND ct.token_id = $${tokenParam}::numeric)`)
  }
  params.push(page.rows)
  const limit = `$${params.length}`
  const ranked = 'r.token_id AS id, r.position, r.score, r.rank'
  // With filters, as for the token-order list (selectCollectionTokens): the first FILTER_WINDOW ranked
  // tokens after the cursor are walked in order; a rare filter then takes the collection's matching
  // tokens from tokens_collection_attributes_idx (collectionMatchesSql), each one's ranking by key
  // (token_rarity_pkey; OFFSET 0 keeps that a nested loop), and sorts those after the window by position.
  const ids = !documents.length
    ? `SELECT ${ranked} FROM token_rarity r ${checked} WHERE ${where.join(' AND ')} ORDER BY r.position LIMIT ${limit}`
    : `WITH near AS MATERIALIZED (
         SELECT ${ranked}
           FROM (SELECT r.* FROM token_rarity r WHERE ${where.join(' AND ')} ORDER BY r.position LIMIT ${FILTER_WINDOW}) r
           ${checked}
          ORDER BY r.position LIMIT ${limit}
       ), edge AS MATERIALIZED (
         SELECT r.position FROM token_rarity r WHERE ${where.join(' AND ')}
          ORDER BY r.position OFFSET ${FILTER_WINDOW - 1} LIMIT 1
       ), matched AS MATERIALIZED (${collectionMatchesSql(documents)})
       SELECT u.* FROM (
         SELECT * FROM near
         UNION ALL
         (SELECT ${ranked} FROM matched m
            CROSS JOIN LATERAL (SELECT r.* FROM token_rarity r
                                 WHERE r.token_id = m.id AND r.collection_address = $1 OFFSET 0) r, edge e
           WHERE (SELECT count(*) FROM near) < ${limit} AND NOT m.is_burned AND m.metadata_status = 'ok'
             AND r.position > e.position
           ORDER BY r.position LIMIT ${limit})
       ) u ORDER BY u.position LIMIT ${limit}`
  const columns = nftColumns(page)
  const sql = `
    SELECT c.name AS collection_name, c.symbol AS collection_symbol, c.standard AS collection_standard,
           c.deploy_block::text AS deploy_block, c.first_seen_block::text AS first_seen_block, p.*
      FROM collections c
      LEFT JOIN LATERAL (
        SELECT ${columns}, page.score::text AS rarity_score, page.rank::text AS rarity_rank, page.position
          FROM (${ids}) page
          JOIN tokens t ON t.id = page.id
          ${MEDIA_JOINS}
      ) p ON true
     WHERE c.address = $1
     ORDER BY p.position`
  const { rows } = await db.pool.query<RarityNftRow>(sql, params)
  return rows
}
