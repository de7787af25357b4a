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
    `SELECT collection_address, token_id::text, metadata_attempts, metadata_next_attempt_at::text AS next_at FROM tokens
      WHERE metadata_status = ANY($1::text[]) AND metadata_next_attempt_at <= now()
      ORDER BY metadata_next_attempt_at, id LIMIT $2`,
    [RETRYABLE, batchSize],
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
  const worker = async () => {
    while (next < jobs.length && !deps.signal?.aborted) {
      const i = next++
      const job = jobs[i]!
      const result = await processToken(deps, job, uris[i]!)
      await saveResult(deps.pool, job, result)
    }
  }
  await Promise.all(Array.from({ length: Math.min(deps.concurrency, jobs.length) }, worker))
  await refreshFallbackImages(deps.pool, [...new Set(jobs.map((j) => j.collection))])
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
    deps.logger.info(
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

/** Media failures do not fail the metadata: the image URL is still served, only without stored bytes. */
async function fetchMedia(deps: TokenJobDeps, job: Job, imageUrl: string): Promise<string | null> {
  try {
    const bytes = await loadUriBytes(imageUrl, deps.limits.maxMediaBytes, deps.limits)
    const stored = await storeMedia(deps.pool, deps.mediaDir, imageUrl, bytes)
    return stored?.sha256 ?? null
  } catch (err) {
    if (!(err instanceof FetchFailure)) throw err
    deps.logger.info(
      { collection: job.collection, tokenId: job.tokenId.toString(), outcome: err.outcome },
      `token media not stored: ${describeError(err)}`,
    )
    return null
  }
}

/**
 * Writes the outcome unless the token was queued again meanwhile (an ERC-4906
 * update resets attempts and the next-attempt time): then the newer request wins.
 */
async function saveResult(pool: pg.Pool, job: Job, r: Result) {
  await pool.query(
    `UPDATE tokens SET metadata_status = $3, metadata_uri = coalesce($4, metadata_uri),
            metadata = CASE WHEN $3 = 'ok' THEN $5::jsonb ELSE metadata END,
            name = CASE WHEN $3 = 'ok' THEN $6 ELSE name END,
            image_url = CASE WHEN $3 = 'ok' THEN $7 ELSE image_url END,
            media_sha256 = CASE WHEN $3 <> 'ok' THEN media_sha256
                                WHEN $8::text IS NOT NULL THEN $8
                                WHEN image_url = $7 THEN media_sha256 END,
            metadata_attempts = metadata_attempts + 1,
            metadata_next_attempt_at = $9, metadata_fetched_at = now(), updated_at = now()
      WHERE collection_address = $1 AND token_id = $2 AND metadata_attempts = $10
        AND metadata_next_attempt_at = $11::timestamptz`,
    [
      job.collection,
      job.tokenId.toString(),
      r.outcome,
      r.uri,
      r.metadata === null ? null : JSON.stringify(r.metadata),
      r.name,
      r.imageUrl,
      r.mediaSha256,
      r.retryAt,
      job.attempts,
      job.nextAttemptAt,
    ],
  )
}
