/**
 * The token metadata queue lives in the tokens table (metadata_status,
 * metadata_attempts, metadata_next_attempt_at; tokens_metadata_queue_idx):
 * the due tokens, their outcomes, deferrals and the backlog. Settled outcomes
 * that are checked again later wait in metadata_recheck_at
 * (tokens_metadata_recheck_idx), outside the backlog
 * (metadata/token-job.ts, token-pipeline.ts, queue.ts).
 */
import type pg from 'pg'
import type { Hex } from 'viem'
import { type Queryable, withTransaction } from './db'
import { numericArray, varcharArray } from './pg-array'

/** Statuses that are still queued (not final). */
export const RETRYABLE_METADATA_STATUSES = ['pending', 'timeout', 'http_error']

export interface DueTokenRow {
  id: string
  collection_address: Hex
  token_id: string
  metadata_attempts: number
  /** Text form keeps PostgreSQL's microseconds for the equality check on save. */
  next_at: string
  /** Taken from metadata_recheck_at: a settled outcome checked again. */
  recheck: boolean
  /** A re-check of an `ok` token: a media retry (metadata/token-job.ts, TokenJob.media), with its stored locations. */
  media_retry?: boolean
  image_url?: string | null
  animation_url?: string | null
}

/**
 * The due tokens in index order (one index-ordered scan per retryable status,
 * tokens_metadata_queue_idx, and one of the due re-checks,
 * tokens_metadata_recheck_idx), never the whole backlog; the ids and collections
 * given are skipped. Sorting is off for the statement: with statistics taken
 * before a backfill added its tokens (autovacuum analyzes a minute or more
 * later), the planner expected a few due tokens and fetched and sorted all of
 * them (150,000 in the benchmark, 75 ms a read), where the index gives them in order.
 */
export async function selectDueTokens(
  pool: pg.Pool,
  limit: number,
  skipIds: string[],
  skipCollections: string[],
): Promise<DueTokenRow[]> {
  const RETRYABLE = RETRYABLE_METADATA_STATUSES
  const { rows } = await withTransaction(pool, async (client) => {
    await client.query('SET LOCAL enable_sort = off')
    return client.query<DueTokenRow>(
      `SELECT * FROM (${RETRYABLE.map(
        (_, i) => `(SELECT id::text, collection_address, token_id::text, metadata_attempts,
                           metadata_next_attempt_at::text AS next_at, metadata_next_attempt_at AS due,
                           false AS recheck, false AS media_retry, NULL AS image_url, NULL AS animation_url
                      FROM tokens WHERE metadata_status = $${i + 4} AND metadata_next_attempt_at <= now()
                       AND id <> ALL($2::bigint[]) AND collection_address <> ALL($3::varchar[])
                     ORDER BY metadata_next_attempt_at LIMIT $1)`,
      ).join(' UNION ALL ')}
      UNION ALL
      (SELECT id::text, collection_address, token_id::text, metadata_attempts,
              metadata_recheck_at::text AS next_at, metadata_recheck_at AS due, true AS recheck,
              metadata_status = 'ok' AS media_retry,
              CASE WHEN metadata_status = 'ok' THEN image_url END AS image_url,
              CASE WHEN metadata_status = 'ok' THEN animation_url END AS animation_url
         FROM tokens WHERE metadata_recheck_at <= now()
          AND id <> ALL($2::bigint[]) AND collection_address <> ALL($3::varchar[])
        ORDER BY metadata_recheck_at LIMIT $1)) AS due_tokens ORDER BY due LIMIT $1`,
      [limit, skipIds, skipCollections, ...RETRYABLE],
    )
  })
  return rows
}

/** Where a token's metadata URI comes from, besides ERC-721's tokenURI (token-job.ts, readUris). */
export interface TokenUriSource {
  /** The token's collection is an ERC-1155 one: its URI is uri(id) or a URI event's, with {id} expanded. */
  erc1155: boolean
  /** ERC-1155: the value of the token's newest URI event (max block_number, log_index), if any. */
  eventUri: string | null
}

/**
 * The URI source of each token, in the order given: one statement per batch
 * of tokens (their collections joined by address, and for an ERC-1155 token
 * the first row of a backward scan of erc1155_uris_pkey: its newest URI event).
 */
export async function selectTokenUriSources(
  db: Queryable,
  tokens: ReadonlyArray<{ collection: string; tokenId: bigint }>,
): Promise<TokenUriSource[]> {
  if (tokens.length === 0) return []
  const { rows } = await db.query<{ erc1155: boolean; uri: string | null }>(
    `SELECT coalesce(c.standard = 'ERC1155', false) AS erc1155, u.uri
       FROM unnest($1::varchar[], $2::numeric[]) WITH ORDINALITY AS j(address, token_id, i)
       LEFT JOIN collections c ON c.address = j.address
       LEFT JOIN LATERAL (SELECT e.uri FROM erc1155_uris e
                           WHERE c.standard = 'ERC1155' AND e.collection_address = j.address
                             AND e.token_id = j.token_id
                           ORDER BY e.block_number DESC, e.log_index DESC LIMIT 1) u ON true
      ORDER BY j.i`,
    [varcharArray(tokens.map((t) => t.collection)), numericArray(tokens.map((t) => t.tokenId))],
  )
  return rows.map((r) => ({ erc1155: r.erc1155, eventUri: r.uri }))
}

/**
 * Moves a collection's queued tokens (except those in memory) to `until`; a
 * still-pending one takes `outcome` when given (its host's). Its re-checks
 * due before then move too, staying re-checks.
 */
export async function deferCollectionTokens(
  pool: pg.Pool,
  d: { collection: string; until: Date; outcome: string | null; inMemory: string[] },
): Promise<void> {
  await pool.query(
    `UPDATE tokens SET metadata_next_attempt_at = $2,
            metadata_status = CASE WHEN $3::text IS NOT NULL AND metadata_status = 'pending' THEN $3
                                   ELSE metadata_status END
      WHERE collection_address = $1 AND metadata_status = ANY($4::text[])
        AND metadata_next_attempt_at <= $2 AND id <> ALL($5::bigint[])`,
    [d.collection, d.until, d.outcome, RETRYABLE_METADATA_STATUSES, d.inMemory],
  )
  await pool.query(
    `UPDATE tokens SET metadata_recheck_at = $2
      WHERE collection_address = $1 AND metadata_recheck_at <= $2 AND id <> ALL($3::bigint[])`,
    [d.collection, d.until, d.inMemory],
  )
}

/** One token's outcome as written (metadata/token-outcomes.ts). */
export interface TokenOutcomeRow {
  id: string
  outcome: string
  uri: string | null
  /** JSON text: the document, kept in token_documents. */
  metadata: string | null
  description: string | null
  /** JSON text: [{ trait_type, value, display_type? }]. */
  attributes: string | null
  animationUrl: string | null
  externalUrl: string | null
  backgroundColor: string | null
  name: string | null
  image: string | null
  media: string | null
  /** RFC 3339; null: not retried. */
  retryAt: string | null
  /** RFC 3339: settled, checked again then; null: final. */
  recheckAt: string | null
  /** The job was a re-check (a deferred one stays one, out of the backlog). */
  recheck: boolean
  /** The job as read: the write applies only while the token still has them. */
  attempts: number
  nextAttemptAt: string
  /** Not tried (its host was backed off or busy): attempts and outcome are kept. */
  deferred: boolean
  /** The backed-off host's outcome, taken by a still-pending deferred token. */
  hostOutcome: string | null
}

/**
 * Writes the outcomes of a batch in one statement, except for tokens queued
 * again meanwhile (an ERC-4906 update resets attempts and the next-attempt
 * time): for those the newer request wins. Deferred tokens keep their
 * attempts and outcome (a pending one takes its backed-off host's outcome).
 * A burned token is never re-checked (its tokenURI reverts for good).
 */
export async function saveTokenOutcomes(pool: pg.Pool, outcomes: TokenOutcomeRow[]): Promise<void> {
  if (outcomes.length === 0) return
  const col = <T>(pick: (r: TokenOutcomeRow) => T) => outcomes.map(pick)
  // A document replaces the token's normalized fields as a whole (a field it
  // lacks becomes null); a failed fetch keeps what the last document said.
  const fromDoc = (column: string, value: string) =>
    `${column} = CASE WHEN r.outcome = 'ok' THEN ${value} ELSE t.${column} END`
  await pool.query(
    `WITH saved AS (
     UPDATE tokens t SET
            metadata_status = CASE WHEN NOT r.deferred THEN r.outcome
                                   WHEN r.host_outcome IS NOT NULL AND t.metadata_status = 'pending' THEN r.host_outcome
                                   ELSE t.metadata_status END,
            metadata_uri = coalesce(r.uri, t.metadata_uri),
            ${fromDoc('name', 'r.name')},
            ${fromDoc('image_url', 'r.image')},
            ${fromDoc('description', 'r.description')},
            ${fromDoc('attributes', 'r.attributes::jsonb')},
            ${fromDoc('animation_url', 'r.animation_url')},
            ${fromDoc('external_url', 'r.external_url')},
            ${fromDoc('background_color', 'r.background_color')},
            ${fromDoc('metadata_updated_at', 'now()')},
            media_sha256 = CASE WHEN r.outcome <> 'ok' THEN t.media_sha256
                                WHEN r.media IS NOT NULL THEN r.media
                                WHEN t.image_url = r.image THEN t.media_sha256 END,
            metadata_attempts = t.metadata_attempts + CASE WHEN r.deferred THEN 0 ELSE 1 END,
            metadata_next_attempt_at = CASE WHEN r.deferred AND r.recheck THEN NULL ELSE r.retry_at END,
            metadata_recheck_at = CASE WHEN t.is_burned THEN NULL
                                       WHEN r.deferred AND r.recheck THEN r.retry_at ELSE r.recheck_at END,
            metadata_fetched_at = CASE WHEN r.deferred THEN t.metadata_fetched_at ELSE now() END,
            updated_at = now()
       FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
                   $7::text[], $8::timestamptz[], $9::int[], $10::timestamptz[], $11::bool[], $12::text[],
                   $13::text[], $14::text[], $15::text[], $16::text[], $17::text[], $18::timestamptz[], $19::bool[])
            AS r(id, outcome, uri, metadata, name, image, media, retry_at, attempts, next_at, deferred, host_outcome,
                 description, attributes, animation_url, external_url, background_color, recheck_at, recheck)
      WHERE t.id = r.id AND t.metadata_attempts = r.attempts
        AND CASE WHEN r.recheck THEN t.metadata_recheck_at = r.next_at AND t.metadata_next_attempt_at IS NULL
                 ELSE t.metadata_next_attempt_at = r.next_at END
      RETURNING t.id, r.outcome, r.uri, r.metadata)
     -- The document as fetched, for GET /v1/nfts/{address}/{tokenId}/metadata.
     INSERT INTO token_documents (token_id, source_uri, fetched_at, document)
     SELECT id, uri, now(), metadata::jsonb FROM saved
      WHERE outcome = 'ok' AND metadata IS NOT NULL AND uri IS NOT NULL
     ON CONFLICT (token_id) DO UPDATE SET source_uri = excluded.source_uri, fetched_at = excluded.fetched_at,
                                          document = excluded.document`,
    [
      col((r) => r.id),
      col((r) => r.outcome),
      col((r) => r.uri),
      col((r) => r.metadata),
      col((r) => r.name),
      col((r) => r.image),
      col((r) => r.media),
      col((r) => r.retryAt),
      col((r) => r.attempts),
      col((r) => r.nextAttemptAt),
      col((r) => r.deferred),
      col((r) => r.hostOutcome),
      col((r) => r.description),
      col((r) => r.attributes),
      col((r) => r.animationUrl),
      col((r) => r.externalUrl),
      col((r) => r.backgroundColor),
      col((r) => r.recheckAt),
      col((r) => r.recheck),
    ],
  )
}

/** A media retry's outcome (metadata/token-job.ts, retryMedia). */
export interface MediaRetryRow {
  id: string
  /** The stored image's SHA-256, when it was stored now. */
  media: string | null
  /** RFC 3339: the media host was busy again, retried then; null: done. */
  recheckAt: string | null
  /** The re-check time the job was read with, and the image_url it fetched. */
  nextAttemptAt: string
  image: string | null
}

/**
 * Writes media retries in one statement: the stored image and the next retry,
 * for tokens that are still as the job read them (still `ok`, the same image,
 * not queued again meanwhile: then the newer fetch wins).
 */
export async function saveMediaRetries(pool: pg.Pool, retries: MediaRetryRow[]): Promise<void> {
  if (retries.length === 0) return
  await pool.query(
    `UPDATE tokens t SET media_sha256 = coalesce(r.media, t.media_sha256),
            metadata_recheck_at = CASE WHEN t.is_burned THEN NULL ELSE r.recheck_at END,
            updated_at = now()
       FROM unnest($1::bigint[], $2::text[], $3::timestamptz[], $4::timestamptz[], $5::text[])
            AS r(id, media, recheck_at, next_at, image)
      WHERE t.id = r.id AND t.metadata_status = 'ok' AND t.metadata_next_attempt_at IS NULL
        AND t.metadata_recheck_at = r.next_at AND t.image_url IS NOT DISTINCT FROM r.image`,
    [
      retries.map((r) => r.id),
      retries.map((r) => r.media),
      retries.map((r) => r.recheckAt),
      retries.map((r) => r.nextAttemptAt),
      retries.map((r) => r.image),
    ],
  )
}

/**
 * Tokens still queued (not final), by their current outcome. Tokens waiting
 * for a re-check are settled (metadata_next_attempt_at is null): not counted.
 */
export async function countMetadataBacklog(pool: pg.Pool): Promise<Record<string, number>> {
  const { rows } = await pool.query<{ status: string; n: number }>(
    // One index range per retryable status (tokens_metadata_queue_idx): never a scan of all tokens.
    `SELECT s AS status, (SELECT count(*) FROM tokens WHERE metadata_status = s
                            AND metadata_next_attempt_at IS NOT NULL)::int AS n
       FROM unnest(ARRAY['pending', 'timeout', 'http_error']) AS s`,
  )
  return Object.fromEntries(rows.map((r) => [r.status, r.n]))
}
