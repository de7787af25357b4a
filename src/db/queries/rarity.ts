/**
 * A collection's tokens by rarity (docs/api.md, "Rarity"), computed on read:
 * information content as OpenRarity defines it, without its normalization.
 * Over the tokens /traits counts (not burned, metadata 'ok'; N of them), a
 * token's score is the sum over the collection's trait types of
 * -log2(p), p = (tokens sharing its value of the type) / N, a token without
 * the type sharing the value "missing" with every token without it. A token
 * that repeats a type with several values counts its rarest one. Scores are
 * rounded to 6 decimals, so tokens with the same traits tie; rank = 1 + the
 * number of tokens with a higher score (ties share a rank). Order: score
 * descending, then (token_id, id).
 */
import type { CollectionHistoryRow } from './collections'
import { MEDIA_JOINS } from './media'
import type { ReadDb } from './sql'
import { NFT_COLUMNS, NFT_DOCUMENT_COLUMNS, type NftRow } from './tokens'
import { traitFilterSql } from './traits'

export type RarityNftRow = NftRow &
  CollectionHistoryRow & {
    id: string | null
    /** Rounded to 6 decimals, as text. */
    rarity_score: string | null
    rarity_rank: string | null
  }

/**
 * One round trip: the collection (no row at all: unknown) and a page of its
 * ranked tokens after the cursor's token (its own score read from the same
 * ranking; a cursor token that is not ranked gives an empty page), each
 * matching every trait filter (see selectCollectionTokens).
 */
export async function selectCollectionTokensByRarity(
  db: ReadDb,
  page: {
    address: string
    after?: { tokenId: string; id: number } | undefined
    rows: number
    withDocument?: boolean
    traits?: string[][] | undefined
  },
): Promise<RarityNftRow[]> {
  const params: unknown[] = [page.address]
  // Trait filters pick the listed tokens (ranks stay the collection's); evaluated once per token.
  const filters = traitFilterSql(params, page.traits ?? [])
  const listed = filters.length ? filters.join(' AND ') : 'true'
  const where: string[] = ['r.listed']
  let cursorJoin = ''
  let cursorCte = ''
  if (page.after) {
    params.push(page.after.tokenId, page.after.id)
    const [tokenParam, idParam] = [params.length - 1, params.length]
    // The cursor token's own score, read once (no row: it is not ranked, and the page is empty).
    cursorCte = `, cur AS MATERIALIZED (SELECT score, token_id, id FROM ranked WHERE token_id = $${tokenParam}::numeric AND id = $${idParam}::int8)`
    cursorJoin = ', cur'
    where.push(
      '(r.score < cur.score OR (r.score = cur.score AND (r.token_id, r.id) > (cur.token_id, cur.id)))',
    )
  }
  params.push(page.rows)
  const columns = page.withDocument ? `${NFT_COLUMNS}, ${NFT_DOCUMENT_COLUMNS}` : NFT_COLUMNS
  // Window functions and one GROUP BY, no join between the per-token sets: linear in the pairs
  // whatever the planner estimates for them.
  const sql = `
    WITH counted AS MATERIALIZED (
      SELECT t.id, t.token_id, t.attributes, ${listed} AS listed FROM tokens t
       WHERE t.collection_address = $1 AND NOT t.is_burned AND t.metadata_status = 'ok'
    ), n AS MATERIALIZED (
      SELECT count(*)::float8 AS n FROM counted
    ), pairs AS MATERIALIZED (
      SELECT DISTINCT c.id, a->>'trait_type' AS trait_type, a->'value' AS value
        FROM counted c,
             jsonb_array_elements(CASE WHEN jsonb_typeof(c.attributes) = 'array' THEN c.attributes ELSE '[]' END) a
       WHERE jsonb_typeof(a->'trait_type') = 'string' AND jsonb_typeof(a->'value') IN ('string', 'number', 'boolean')
    ), token_types AS MATERIALIZED (
      -- One row per (token, type): the share of its rarest value, and the type's token count.
      SELECT id, trait_type, k, count(*) OVER (PARTITION BY trait_type) AS kt
        FROM (SELECT id, trait_type, min(k) AS k
                FROM (SELECT id, trait_type, count(*) OVER (PARTITION BY trait_type, value) AS k FROM pairs) pv
               GROUP BY id, trait_type) m
    ), ic AS MATERIALIZED (
      -- Information content of the token's value, and of "missing" for the type (0 when no token lacks it).
      SELECT tt.id, -ln(tt.k / n.n) / ln(2) AS value_ic,
             CASE WHEN n.n > tt.kt THEN -ln((n.n - tt.kt) / n.n) / ln(2) ELSE 0 END AS missing_ic, tt.trait_type
        FROM token_types tt, n
    ), scored AS (
      -- Every token starts from the sum of all types' "missing"; each type it has replaces that term.
      SELECT id, max(token_id) AS token_id, bool_or(listed) AS listed,
             round(((SELECT coalesce(sum(missing_ic), 0) FROM (SELECT DISTINCT trait_type, missing_ic FROM ic) d)
                    + sum(x))::numeric, 6) AS score
        FROM (SELECT id, NULL::numeric AS token_id, NULL::boolean AS listed, value_ic - missing_ic AS x FROM ic
              UNION ALL
              SELECT id, token_id, listed, 0 FROM counted) u
       GROUP BY id
    ), ranked AS MATERIALIZED (
      SELECT id, token_id, listed, score, rank() OVER (ORDER BY score DESC) AS rank FROM scored
    )${cursorCte}
    SELECT c.name AS collection_name, c.symbol AS collection_symbol,
           c.deploy_block::text AS deploy_block, c.first_seen_block::text AS first_seen_block, p.*
      FROM collections c
      LEFT JOIN LATERAL (
        SELECT ${columns}, page.score::text AS rarity_score, page.rank::text AS rarity_rank
          FROM (SELECT r.id, r.score, r.rank, r.token_id FROM ranked r${cursorJoin}
                 WHERE ${where.join(' AND ')}
                 ORDER BY r.score DESC, r.token_id, r.id LIMIT $${params.length}) page
          JOIN tokens t ON t.id = page.id
          ${MEDIA_JOINS}
      ) p ON true
     WHERE c.address = $1
     ORDER BY p.rarity_score::numeric DESC, p.token_id::numeric, p.id::int8`
  const { rows } = await db.pool.query<RarityNftRow>(sql, params)
  return rows
}
