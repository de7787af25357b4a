/**
 * A collection's traits (docs/api.md, "Traits"): every trait type of its
 * tokens with its values and token counts, over the tokens that are not burned
 * and whose metadata was fetched (metadata_status 'ok'). A token counts once
 * per (type, value) and once per type, however often its document repeats
 * them. Values are compared as JSON values (jsonb equality): the number 1 and
 * the string "1" are two values.
 */
import type { ReadDb } from './sql'

export interface TraitCountRow {
  /** null on the one row of a collection with no trait at all (or none of its types within the cap). */
  trait_type: string | null
  /** Parsed jsonb: string, number or boolean. */
  value: string | number | boolean | null
  /** Tokens with this value. */
  value_count: string | null
  /** Tokens with this type (any value). */
  type_count: string | null
  /** Distinct values of the type (all, also those beyond the cap). */
  type_values: string | null
  /** Trait types of the collection (all, also those beyond the cap). */
  types: string
  /** Tokens counted (not burned, metadata 'ok'). */
  tokens: string
}

/**
 * One round trip: a row per (type, value) within the caps — types by token
 * count (most first, then by name), at most `maxTypes`; values of a type by
 * token count (most first, then by their JSON text), at most `maxValues` —
 * each row carrying the totals. No row: the collection is unknown.
 * Reads the collection's live tokens from tokens_collection_live_idx.
 */
export async function selectCollectionTraits(
  db: ReadDb,
  q: { address: string; maxTypes: number; maxValues: number },
): Promise<TraitCountRow[]> {
  const sql = `
    WITH counted AS (
      SELECT t.id, t.attributes FROM tokens t
       WHERE t.collection_address = $1 AND NOT t.is_burned AND t.metadata_status = 'ok'
    ), pairs AS (
      SELECT DISTINCT c.id, a->>'trait_type' AS trait_type, a->'value' AS value
        FROM counted c,
             jsonb_array_elements(CASE WHEN jsonb_typeof(c.attributes) = 'array' THEN c.attributes ELSE '[]' END) a
       WHERE jsonb_typeof(a->'trait_type') = 'string' AND jsonb_typeof(a->'value') IN ('string', 'number', 'boolean')
    ), vals AS (
      SELECT trait_type, value, count(*) AS n FROM pairs GROUP BY trait_type, value
    ), types AS (
      SELECT p.trait_type, count(DISTINCT p.id) AS n,
             (SELECT count(*) FROM vals v WHERE v.trait_type = p.trait_type) AS nvalues
        FROM pairs p GROUP BY p.trait_type
    ), kept_types AS (
      SELECT * FROM types ORDER BY n DESC, trait_type COLLATE "C" LIMIT $2
    ), ranked AS (
      SELECT v.trait_type, v.value, v.n,
             row_number() OVER (PARTITION BY v.trait_type ORDER BY v.n DESC, v.value::text COLLATE "C") AS r
        FROM vals v JOIN kept_types k ON k.trait_type = v.trait_type
    )
    SELECT k.trait_type, r.value, r.n::text AS value_count, k.n::text AS type_count,
           k.nvalues::text AS type_values,
           (SELECT count(*) FROM types)::text AS types,
           (SELECT count(*) FROM counted)::text AS tokens
      FROM collections col
      LEFT JOIN kept_types k ON true
      LEFT JOIN ranked r ON r.trait_type = k.trait_type AND r.r <= $3
     WHERE col.address = $1
     ORDER BY k.n DESC, k.trait_type COLLATE "C", r.n DESC, r.value::text COLLATE "C"`
  const { rows } = await db.pool.query<TraitCountRow>(sql, [q.address, q.maxTypes, q.maxValues])
  return rows
}

/**
 * The trait filters of a token list as SQL over `t` (tokens): per trait type,
 * the attributes must contain one of its jsonb documents (`@>` uses
 * tokens_attributes_idx, jsonb_path_ops). Pushes the documents onto `params`.
 */
export function traitFilterSql(params: unknown[], traits: string[][]): string[] {
  return traits.map((documents) => {
    params.push(documents)
    return `t.attributes @> ANY($${params.length}::jsonb[])`
  })
}
