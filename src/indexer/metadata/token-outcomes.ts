import type pg from 'pg'
import type { Logger } from 'pino'
import { refreshFallbackImages } from '../store/collections'
import { saveMediaRetries, saveTokenOutcomes, type TokenOutcomeRow } from '../store/metadata-queue'
import type { MetadataOutcome } from './outcome'
import type { TokenJob, TokenResult } from './token-job'

/**
 * Writes a batch of outcomes (one statement; media retries one more), logs
 * what failed, then lets the collections that gained a token image use it as
 * their fallback image.
 */
export async function writeOutcomes(pool: pg.Pool, logger: Logger, all: Array<[TokenJob, TokenResult]>) {
  const batch = all.filter(([job]) => job.media === null)
  await saveMediaRetries(
    pool,
    all
      .filter(([job]) => job.media !== null)
      .map(([job, r]) => ({
        id: job.id,
        media: r.mediaSha256,
        recheckAt: r.recheckAt?.toISOString() ?? null,
        nextAttemptAt: job.nextAttemptAt,
        image: r.imageUrl,
      })),
  )
  await saveResults(pool, batch)
  logBatchOutcomes(logger, batch)
  const withImages = batch.filter(([, r]) => r.imageUrl !== null).map(([job]) => job.collection)
  await refreshFallbackImages(pool, [...new Set(withImages)])
}

/** What an outcome means where its name alone reads as a fault but is expected (a burned token). */
const OUTCOME_NOTES: Partial<Record<MetadataOutcome, string>> = {
  uri_reverted: 'tokenURI reverted, as it does for burned tokens',
}

/**
 * One info line per batch that had failures, counting each outcome. Broken
 * metadata is common on a real chain; a line per token (debug) would flood
 * an operator's logs at the default level. Tokens deferred because their host
 * is backed off are counted apart (`deferred`): they were not tried.
 */
function logBatchOutcomes(logger: Logger, all: Array<[TokenJob, TokenResult]>) {
  const results = all.filter(([, r]) => r.deferred === null)
  const deferred = all.length - results.length
  const outcomes: Partial<Record<MetadataOutcome, number>> = {}
  for (const [, r] of results) outcomes[r.outcome] = (outcomes[r.outcome] ?? 0) + 1
  const failed = results.length - (outcomes.ok ?? 0)
  if (failed === 0) return
  const retrying = results.filter(([, r]) => r.retryAt !== null).length
  logger.info(
    { tokens: results.length, outcomes, retrying, deferred },
    `token metadata: ${failed} of ${results.length} tokens without metadata (${Object.entries(outcomes)
      .map(([outcome, n]) => {
        const note = OUTCOME_NOTES[outcome as MetadataOutcome]
        return note ? `${outcome} ${n}: ${note}` : `${outcome} ${n}`
      })
      .join(', ')})`,
  )
}

/**
 * The outcomes as store/metadata-queue.ts writes them (saveTokenOutcomes).
 * Should the database refuse a value of the batch (a data error: class 22 or
 * 54, which the sanitizing in document.ts and normalize.ts is meant to
 * prevent), the tokens are written one by one and a token still refused is
 * written as `invalid_json` without its document: one hostile document never
 * holds up its batch, or itself, for good (docs/metadata.md, "Caps").
 */
async function saveResults(pool: pg.Pool, results: Array<[TokenJob, TokenResult]>) {
  try {
    await saveTokenOutcomes(pool, results.map(outcomeRow))
  } catch (err) {
    if (!isDataError(err)) throw err
    for (const result of results) {
      try {
        await saveTokenOutcomes(pool, [outcomeRow(result)])
      } catch (single) {
        if (!isDataError(single)) throw single
        const [job, r] = result
        await saveTokenOutcomes(pool, [
          outcomeRow([
            job,
            {
              ...r,
              outcome: 'invalid_json',
              metadata: null,
              normalized: null,
              retryAt: null,
              recheckAt: null,
              deferred: null,
            },
          ]),
        ])
      }
    }
  }
}

/** A value PostgreSQL refuses (invalid text or JSON, out of range, too large): never a fault of the database. */
function isDataError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code
  return typeof code === 'string' && (code.startsWith('22') || code.startsWith('54'))
}

function outcomeRow([job, r]: [TokenJob, TokenResult]): TokenOutcomeRow {
  return {
    id: job.id,
    outcome: r.outcome,
    uri: r.uri,
    metadata: r.metadata === null ? null : JSON.stringify(r.metadata),
    description: r.normalized?.description ?? null,
    attributes: r.normalized?.attributes ? JSON.stringify(r.normalized.attributes) : null,
    animationUrl: r.normalized?.animationUrl ?? null,
    externalUrl: r.normalized?.externalUrl ?? null,
    backgroundColor: r.normalized?.backgroundColor ?? null,
    name: r.name,
    image: r.imageUrl,
    media: r.mediaSha256,
    retryAt: r.retryAt?.toISOString() ?? null,
    recheckAt: r.recheckAt?.toISOString() ?? null,
    recheck: job.recheck,
    attempts: job.attempts,
    nextAttemptAt: job.nextAttemptAt,
    deferred: r.deferred !== null,
    hostOutcome: r.deferred?.reason === 'open' ? r.deferred.outcome : null,
  }
}
