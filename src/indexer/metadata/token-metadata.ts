import type pg from 'pg'
import type { Logger } from 'pino'
import type { Hex } from 'viem'
import { describeError } from '../errors'
import type { Rpc } from '../rpc/client'
import { backoffDelay } from '../rpc/retry'
import { refreshFallbackImages } from './collection-info'
import { type FetchLimits, fetchMetadataJson, imageOf, loadUriBytes } from './document'
import { storeMedia } from './media-store'
import { FetchFailure, type MetadataOutcome } from './outcome'
import { batchViewCalls, cleanText, decodeUriResult, encodeTokenUri } from './token-uri'

export interface TokenJobDeps {
  pool: pg.Pool
  rpc: Rpc
  logger: Logger
  limits: FetchLimits
  mediaDir: string
  multicallEnabled: () => boolean
  /** Attempts before a transient failure becomes final. */
  maxAttempts: number
  /** First retry delay; doubles per attempt (with jitter) up to an hour. */
  retryBaseMs: number
  concurrency: number
  signal?: AbortSignal
}

interface Job {
  collection: Hex
  tokenId: bigint
  attempts: number
  /** Text form keeps PostgreSQL's microseconds for the equality check on save. */
  nextAttemptAt: string
}

interface Result {
  outcome: MetadataOutcome
  uri: string | null
  metadata: Record<string, unknown> | null
  name: string | null
  imageUrl: string | null
  mediaSha256: string | null
  retryAt: Date | null
}

const RETRYABLE = ['pending', 'timeout', 'http_error']

/** One round of the token queue: tokenURI for a batch (batched calls), then each document and image. */
export async function processTokens(deps: TokenJobDeps, batchSize = 50): Promise<number> {
  const { rows } = await deps.pool.query(
    // One index-ordered scan per status (tokens_metadata_queue_idx), so picking a
    // batch never sorts the whole backlog.
    `SELECT * FROM (${RETRYABLE.map(
      (_, i) => `(SELECT collection_address, token_id::text, metadata_attempts,
                         metadata_next_attempt_at::text AS next_at, metadata_next_attempt_at AS due
                    FROM tokens WHERE metadata_status = $${i + 2} AND metadata_next_attempt_at <= now()
                   ORDER BY metadata_next_attempt_at LIMIT $1)`,
    ).join(' UNION ALL ')}) AS due_tokens ORDER BY due LIMIT $1`,
    [batchSize, ...RETRYABLE],
  )
  if (rows.length === 0) return 0
  const jobs: Job[] = rows.map((r) => ({
    collection: r.collection_address,
    tokenId: BigInt(r.token_id),
    attempts: r.metadata_attempts,
    nextAttemptAt: r.next_at,
  }))
  const calls = jobs.map((j) => ({ to: j.collection, data: encodeTokenUri(j.tokenId) }))
  const uris = await batchViewCalls(deps.rpc, calls, deps.multicallEnabled())
  let next = 0
  const results: Array<[Job, Result]> = []
  const worker = async () => {
    while (next < jobs.length && !deps.signal?.aborted) {
      const i = next++
      results.push([jobs[i]!, await processToken(deps, jobs[i]!, uris[i]!)])
    }
  }
  await Promise.all(Array.from({ length: Math.min(deps.concurrency, jobs.length) }, worker))
  await saveResults(deps.pool, results)
  logBatchOutcomes(deps.logger, results)
  const withImages = results.filter(([, r]) => r.imageUrl !== null).map(([job]) => job.collection)
  await refreshFallbackImages(deps.pool, [...new Set(withImages)])
  return jobs.length
}

async function processToken(deps: TokenJobDeps, job: Job, uriResult: Hex | null): Promise<Result> {
  const result: Result = {
    outcome: 'ok',
    uri: null,
    metadata: null,
    name: null,
    imageUrl: null,
    mediaSha256: null,
    retryAt: null,
  }
  try {
    const uri = decodeUriResult(uriResult, deps.limits.maxMetadataBytes)
    result.uri = cleanText(uri, deps.limits.maxMetadataBytes) || null
    if (!result.uri) throw new FetchFailure('invalid_uri', 'tokenURI is empty')
    const doc = await fetchMetadataJson(result.uri, deps.limits)
    result.metadata = doc
    result.name = typeof doc.name === 'string' ? cleanText(doc.name) || null : null
    result.imageUrl = imageOf(doc)
    if (result.imageUrl) result.mediaSha256 = await fetchMedia(deps, job, result.imageUrl)
    return result
  } catch (err) {
    if (!(err instanceof FetchFailure)) throw err
    result.outcome = err.outcome
    if (err.transient && job.attempts + 1 < deps.maxAttempts) {
      result.retryAt = new Date(Date.now() + backoffDelay(job.attempts, deps.retryBaseMs, 3_600_000))
    }
    deps.logger.debug(
      {
        collection: job.collection,
        tokenId: job.tokenId.toString(),
        outcome: err.outcome,
        retry: result.retryAt !== null,
      },
      `token metadata: ${describeError(err)}`,
    )
    return result
  }
}

/**
 * One info line per batch that had failures, counting each outcome. Broken
 * metadata is common on a real chain; a line per token (debug) would flood
 * an operator's logs at the default level.
 */
function logBatchOutcomes(logger: Logger, results: Array<[Job, Result]>) {
  const outcomes: Partial<Record<MetadataOutcome, number>> = {}
  for (const [, r] of results) outcomes[r.outcome] = (outcomes[r.outcome] ?? 0) + 1
  const failed = results.length - (outcomes.ok ?? 0)
  if (failed === 0) return
  const retrying = results.filter(([, r]) => r.retryAt !== null).length
  logger.info(
    { tokens: results.length, outcomes, retrying },
    `token metadata: ${failed} of ${results.length} tokens failed (${Object.entries(outcomes)
      .map(([outcome, n]) => `${outcome} ${n}`)
      .join(', ')})`,
  )
}

/** Media failures do not fail the metadata: the image URL is still served, only without stored bytes. */
async function fetchMedia(deps: TokenJobDeps, job: Job, imageUrl: string): Promise<string | null> {
  try {
    const bytes = await loadUriBytes(imageUrl, deps.limits.maxMediaBytes, deps.limits)
    const stored = await storeMedia(deps.pool, deps.mediaDir, imageUrl, bytes)
    return stored?.sha256 ?? null
  } catch (err) {
    if (!(err instanceof FetchFailure)) throw err
    deps.logger.debug(
      { collection: job.collection, tokenId: job.tokenId.toString(), outcome: err.outcome },
      `token media not stored: ${describeError(err)}`,
    )
    return null
  }
}

/**
 * Writes the outcomes of a batch in one statement, except for tokens queued
 * again meanwhile (an ERC-4906 update resets attempts and the next-attempt
 * time): for those the newer request wins.
 */
async function saveResults(pool: pg.Pool, results: Array<[Job, Result]>) {
  if (results.length === 0) return
  const col = <T>(pick: (job: Job, r: Result) => T) => results.map(([job, r]) => pick(job, r))
  await pool.query(
    `UPDATE tokens t SET metadata_status = r.outcome, metadata_uri = coalesce(r.uri, t.metadata_uri),
            metadata = CASE WHEN r.outcome = 'ok' THEN r.metadata::jsonb ELSE t.metadata END,
            name = CASE WHEN r.outcome = 'ok' THEN r.name ELSE t.name END,
            image_url = CASE WHEN r.outcome = 'ok' THEN r.image ELSE t.image_url END,
            media_sha256 = CASE WHEN r.outcome <> 'ok' THEN t.media_sha256
                                WHEN r.media IS NOT NULL THEN r.media
                                WHEN t.image_url = r.image THEN t.media_sha256 END,
            metadata_attempts = t.metadata_attempts + 1,
            metadata_next_attempt_at = r.retry_at, metadata_fetched_at = now(), updated_at = now()
       FROM unnest($1::varchar[], $2::numeric[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
                   $8::text[], $9::timestamptz[], $10::int[], $11::timestamptz[])
            AS r(c, id, outcome, uri, metadata, name, image, media, retry_at, attempts, next_at)
      WHERE t.collection_address = r.c AND t.token_id = r.id AND t.metadata_attempts = r.attempts
        AND t.metadata_next_attempt_at = r.next_at`,
    [
      col((j) => j.collection),
      col((j) => j.tokenId.toString()),
      col((_, r) => r.outcome),
      col((_, r) => r.uri),
      col((_, r) => (r.metadata === null ? null : JSON.stringify(r.metadata))),
      col((_, r) => r.name),
      col((_, r) => r.imageUrl),
      col((_, r) => r.mediaSha256),
      col((_, r) => r.retryAt?.toISOString() ?? null),
      col((j) => j.attempts),
      col((j) => j.nextAttemptAt),
    ],
  )
}
