/**
 * Stored rarity and trait counts (docs/database.md, "Stored rarity";
 * method: docs/api.md, "Rarity"). Triggers on tokens mark a collection in
 * rarity_dirty when a counted token (metadata ok, not burned) appears, goes
 * or changes its attributes; the rarity worker (src/indexer/rarity) then
 * recomputes the whole collection here: one statement computes the ranking
 * and the /traits answer from one snapshot of its tokens and writes them, in
 * the transaction that consumes the mark, so a reader sees the old ranking or
 * the new one, never a mix.
 *
 * Scores: information content as OpenRarity defines it, without its
 * normalization. Over the N counted tokens, a token's score is the sum over
 * the collection's trait types of -log2(p), p = (tokens sharing its value of
 * the type) / N, a token without the type sharing the value "missing" with
 * every token without it. A token that repeats a type with several values
 * counts its rarest one. Scores are rounded to 6 decimals, so tokens with
 * the same traits tie; rank = 1 + the number of tokens with a higher score;
 * position orders by score descending, then (token_id, id).
 */
import type pg from 'pg'
import { withTransaction } from './db'

/**
 * How much of each collection's /traits answer is stored (the API serves at most this much):
 * types, values per type, and bytes of those values' JSON text per type. The bytes bound the
 * stored answer (about 10 MB at most) whatever the documents hold: without it, values of 1,024
 * characters each could build one larger than a jsonb value may be (2^28 bytes), and the
 * recompute would fail every time.
 */
export const STORED_TRAIT_CAPS = { types: 100, valuesPerType: 1_000, valueBytesPerType: 100_000 } as const

// Window functions and GROUP BYs, no join between the per-token sets: linear in the
// (token, type, value) pairs whatever the planner estimates for them.
const RECOMPUTE_SQL = `
  WITH counted AS MATERIALIZED (
    SELECT t.id, t.token_id, t.attributes FROM tokens t
     WHERE t.collection_address = $1 AND NOT t.is_burned AND t.metadata_status = 'ok'
  ), n AS MATERIALIZED (
    SELECT count(*)::float8 AS n FROM counted
  ), pairs AS MATERIALIZED (
    -- A token counts once per (type, value), however often its document repeats them.
    -- Types compared bytewise (COLLATE "C"): equality as in any deterministic collation, cheaper sorts.
    SELECT DISTINCT c.id, (a->>'trait_type') COLLATE "C" AS trait_type, a->'value' AS value
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
    SELECT id, max(token_id) AS token_id,
           round(((SELECT coalesce(sum(missing_ic), 0) FROM (SELECT DISTINCT trait_type, missing_ic FROM ic) d)
                  + sum(x))::numeric, 6) AS score
      FROM (SELECT id, NULL::numeric AS token_id, value_ic - missing_ic AS x FROM ic
            UNION ALL
            SELECT id, token_id, 0 FROM counted) u
     GROUP BY id
  ), ranked AS MATERIALIZED (
    SELECT id, score, rank() OVER (ORDER BY score DESC) AS rank,
           row_number() OVER (ORDER BY score DESC, token_id, id) AS position
      FROM scored
  ), vals AS MATERIALIZED (
    SELECT trait_type, value, count(*) AS n FROM pairs GROUP BY trait_type, value
  ), types AS MATERIALIZED (
    SELECT trait_type, count(DISTINCT id) AS n FROM pairs GROUP BY trait_type
  ), kept_types AS (
    -- Types by token count (most first, then by name bytewise), values likewise (then by JSON text).
    SELECT t.trait_type, t.n, row_number() OVER (ORDER BY t.n DESC, t.trait_type COLLATE "C") AS i
      FROM types t
  ), kept_values AS (
    SELECT v.trait_type, v.value, v.n,
           row_number() OVER w AS j, sum(octet_length(v.value::text)) OVER w AS bytes,
           count(*) OVER (PARTITION BY v.trait_type) AS nvalues
      FROM vals v JOIN kept_types k ON k.trait_type = v.trait_type AND k.i <= $2
    WINDOW w AS (PARTITION BY v.trait_type ORDER BY v.n DESC, v.value::text COLLATE "C" ROWS UNBOUNDED PRECEDING)
  ), trait_doc AS (
    SELECT coalesce(jsonb_agg(jsonb_build_object('trait_type', k.trait_type, 'token_count', k.n,
                                                 'value_count', vs.nvalues, 'values', vs.values) ORDER BY k.i), '[]') AS traits
      FROM kept_types k
      JOIN LATERAL (SELECT max(kv.nvalues) AS nvalues, jsonb_agg(jsonb_build_array(kv.value, kv.n) ORDER BY kv.j) AS values
                      FROM kept_values kv WHERE kv.trait_type = k.trait_type AND kv.j <= $3 AND kv.bytes <= $4) vs ON true
     WHERE k.i <= $2
  ), gone AS (
    DELETE FROM token_rarity r
     WHERE r.collection_address = $1 AND NOT EXISTS (SELECT 1 FROM ranked k WHERE k.id = r.token_id)
  ), written AS (
    INSERT INTO token_rarity (token_id, collection_address, position, rank, score)
    SELECT id, $1, position, rank, score FROM ranked
    ON CONFLICT (token_id) DO UPDATE SET position = excluded.position, rank = excluded.rank, score = excluded.score
     WHERE (token_rarity.position, token_rarity.rank, token_rarity.score)
           IS DISTINCT FROM (excluded.position, excluded.rank, excluded.score)
  ), summary AS (
    INSERT INTO collection_rarity (collection_address, computed_at, token_count, trait_type_count, traits)
    SELECT $1, now(), n.n::int, (SELECT count(*) FROM types)::int, trait_doc.traits FROM n, trait_doc
    ON CONFLICT (collection_address) DO UPDATE SET computed_at = excluded.computed_at,
       token_count = excluded.token_count, trait_type_count = excluded.trait_type_count, traits = excluded.traits
  )
  SELECT n::int AS tokens FROM n`

/**
 * Recomputes one collection's ranking and trait counts and consumes its
 * dirty mark, in one transaction. The mark is deleted first: that waits for
 * any writer that marked it and has not committed yet (the trigger's upsert
 * holds the row), so the computation, a later statement, sees that writer's
 * tokens. A write committed after it marks the collection again.
 */
export async function recomputeCollectionRarity(
  pool: pg.Pool,
  collection: string,
): Promise<{ tokens: number }> {
  return withTransaction(pool, (client) => recomputeWithin(client, collection))
}

/** The recompute inside a transaction the caller holds (nothing of it is visible before its commit). */
export async function recomputeWithin(
  client: pg.PoolClient,
  collection: string,
): Promise<{ tokens: number }> {
  await client.query('DELETE FROM rarity_dirty WHERE collection_address = $1', [collection])
  const { rows } = await client.query<{ tokens: number }>(RECOMPUTE_SQL, [
    collection,
    STORED_TRAIT_CAPS.types,
    STORED_TRAIT_CAPS.valuesPerType,
    STORED_TRAIT_CAPS.valueBytesPerType,
  ])
  return { tokens: rows[0]?.tokens ?? 0 }
}

export interface DirtyCollection {
  collection: string
  /** How long ago its first change not yet computed was made. */
  ageMs: number
}

/** Collections marked dirty, longest-waiting first. */
export async function selectDirtyCollections(pool: pg.Pool, limit: number): Promise<DirtyCollection[]> {
  const { rows } = await pool.query<{ collection: string; age_ms: number }>(
    `SELECT collection_address AS collection, (extract(epoch FROM now() - since) * 1000)::float8 AS age_ms
       FROM rarity_dirty ORDER BY since, collection_address LIMIT $1`,
    [limit],
  )
  return rows.map((r) => ({ collection: r.collection, ageMs: r.age_ms }))
}

/**
 * A collection whose computation failed waits `ms` behind the others: its mark's time moves
 * that far ahead (the worker computes a collection once its mark is old enough, oldest first).
 */
export async function postponeDirtyCollection(pool: pg.Pool, collection: string, ms: number): Promise<void> {
  await pool.query(
    `UPDATE rarity_dirty SET since = now() + make_interval(secs => $2::float8 / 1000) WHERE collection_address = $1`,
    [collection, ms],
  )
}
