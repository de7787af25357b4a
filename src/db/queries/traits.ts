/**
 * A collection's traits (docs/api.md, "Traits"): every trait type of its
 * tokens with its values and token counts, over the tokens that are not burned
 * and whose metadata was fetched (metadata_status 'ok'), as of the
 * collection's latest stored computation. A token counts once per
 * (type, value) and once per type, however often its document repeats them.
 * Values are compared as JSON values (jsonb equality): the number 1 and the
 * string "1" are two values.
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
  /** The collection's standard (collections.standard). */
  standard: string
}

/**
 * One round trip: a row per (type, value) within the caps — types by token
 * count (most first, then by name), at most `maxTypes`; values of a type by
 * token count (most first, then by their JSON text), at most `maxValues` —
 * each row carrying the totals; with `types`, only those types (exact). No row: the collection is unknown. Read from
 * the collection's latest stored computation (collection_rarity, written by
 * the indexer: src/indexer/store/rarity.ts, which stores the caps the API
 * serves); a collection not computed yet gives one row of zero tokens.
 */
export async function selectCollectionTraits(
  db: ReadDb,
  q: { address: string; maxTypes: number; maxValues: number; types?: string[] | undefined },
): Promise<TraitCountRow[]> {
  const sql = `
    SELECT k.type->>'trait_type' AS trait_type, v.value->0 AS value, v.value->>1 AS value_count,
           k.type->>'token_count' AS type_count, k.type->>'value_count' AS type_values,
           coalesce(r.trait_type_count, 0)::text AS types, coalesce(r.token_count, 0)::text AS tokens, col.standard
      FROM collections col
      LEFT JOIN collection_rarity r ON r.collection_address = col.address
      LEFT JOIN LATERAL jsonb_array_elements(r.traits) WITH ORDINALITY k(type, i)
        ON k.i <= $2 AND ($4::text[] IS NULL OR k.type->>'trait_type' = ANY($4::text[]))
      LEFT JOIN LATERAL jsonb_array_elements(k.type->'values') WITH ORDINALITY v(value, j) ON v.j <= $3
     WHERE col.address = $1
     ORDER BY k.i, v.j`
  const { rows } = await db.pool.query<TraitCountRow>(sql, [
    q.address,
    q.maxTypes,
    q.maxValues,
    q.types ?? null,
  ])
  return rows
}

/**
 * The trait filters of a token list: per trait type, the attributes must
 * contain one of its jsonb documents. Pushes the documents onto `params` (one
 * jsonb[] per type) and returns their placeholders, for traitFilterSql.
 */
export function traitDocumentParams(params: unknown[], traits: string[][]): string[] {
  return traits.map((documents) => {
    params.push(documents)
    return `$${params.length}`
  })
}

/**
 * The trait filters (placeholders from traitDocumentParams) as SQL over `t`
 * (tokens). `opaque`: each type's documents as the result of a subquery (an
 * InitPlan), whose value the planner does not see; it then estimates a filter
 * by a fixed share of the collection instead of by the value's share of all
 * tokens. With `t.collection_address = $1` beside them, the matching tokens of
 * the collection are one bitmap scan of tokens_collection_attributes_idx
 * (collection_address, attributes jsonb_path_ops) whether the value is rare or
 * common in other collections (src/db/queries/tokens.ts, filteredPageIds).
 */
export function traitFilterSql(placeholders: string[], options: { opaque?: boolean } = {}): string[] {
  return placeholders.map((p) =>
    options.opaque
      ? `t.attributes @> ANY((SELECT ${p}::jsonb[])::jsonb[])`
      : `t.attributes @> ANY(${p}::jsonb[])`,
  )
}
