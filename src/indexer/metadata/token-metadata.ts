import type pg from 'pg'
import type { Logger } from 'pino'
import type { Hex } from 'viem'
import { describeError } from '../errors'
import type { Rpc } from '../rpc/client'
import { backoffDelay } from '../rpc/retry'
import { withTransaction } from '../store/db'
import { sleep } from '../util/sleep'
import { refreshFallbackImages } from './collection-info'
import { type FetchLimits, fetchMetadataJson, imageOf, loadUriBytes, schedulingKey } from './document'
import { HostBackedOff, HostScheduler } from './host-scheduler'
import { storeMedia } from './media-store'
import { FetchFailure, type MetadataOutcome } from './outcome'
import { resolveUri, toValidUri } from './resolve-uri'
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
  /** Requests in flight over all hosts (when no scheduler is given in limits). */
  concurrency: number
  signal?: AbortSignal
}

interface Job {
  id: string
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
  /**
   * Not tried: its host is backed off (`open`: a still-pending token takes the
   * host's outcome) or already has enough queued (`busy`). Attempts are not
   * counted; the token comes back at retryAt.
   */
  deferred: HostBackedOff | null
}

const RETRYABLE = ['pending', 'timeout', 'http_error']

/** tokenURI reads per call (Multicall3 aggregate or one JSON-RPC batch). */
const URI_BATCH = 50

/**
 * The due tokens in index order (one index-ordered scan per retryable status,
 * tokens_metadata_queue_idx), never the whole backlog; tokens already in
 * memory are skipped. Sorting is off for the statement: with statistics taken
 * before a backfill added its tokens (autovacuum analyzes a minute or more
 * later), the planner expected a few due tokens and fetched and sorted all of
 * them (150,000 in the benchmark, 75 ms a read), where the index gives them in order.
 */
export async function dueTokens(
  pool: pg.Pool,
  limit: number,
  skipIds: string[] = [],
  skipCollections: string[] = [],
): Promise<Job[]> {
  const { rows } = await withTransaction(pool, async (client) => {
    await client.query('SET LOCAL enable_sort = off')
    return client.query<{
      id: string
      collection_address: Hex
      token_id: string
      metadata_attempts: number
      next_at: string
    }>(
      `SELECT * FROM (${RETRYABLE.map(
        (_, i) => `(SELECT id::text, collection_address, token_id::text, metadata_attempts,
                           metadata_next_attempt_at::text AS next_at, metadata_next_attempt_at AS due
                      FROM tokens WHERE metadata_status = $${i + 4} AND metadata_next_attempt_at <= now()
                       AND id <> ALL($2::bigint[]) AND collection_address <> ALL($3::varchar[])
                     ORDER BY metadata_next_attempt_at LIMIT $1)`,
      ).join(' UNION ALL ')}) AS due_tokens ORDER BY due LIMIT $1`,
      [limit, skipIds, skipCollections, ...RETRYABLE],
    )
  })
  return rows.map((r) => ({
    id: r.id,
    collection: r.collection_address,
    tokenId: BigInt(r.token_id),
    attempts: r.metadata_attempts,
    nextAttemptAt: r.next_at,
  }))
}

async function readUris(deps: TokenJobDeps, jobs: Job[]): Promise<Array<Hex | null>> {
  const chunks: Job[][] = []
  for (let i = 0; i < jobs.length; i += URI_BATCH) chunks.push(jobs.slice(i, i + URI_BATCH))
  const results = await Promise.all(
    chunks.map((chunk) =>
      batchViewCalls(
        deps.rpc,
        chunk.map((j) => ({ to: j.collection, data: encodeTokenUri(j.tokenId) })),
        deps.multicallEnabled(),
      ),
    ),
  )
  return results.flat()
}

/**
 * One round of the token queue: tokenURI for a batch (batched calls), then
 * each document and image, then the outcomes in one statement. Used where the
 * queue is driven step by step (tests, fixtures); the indexer runs
 * TokenPipeline, which never waits for a whole batch.
 */
export async function processTokens(deps: TokenJobDeps, batchSize = 50): Promise<number> {
  const jobs = await dueTokens(deps.pool, batchSize)
  if (jobs.length === 0) return 0
  const uris = await readUris(deps, jobs)
  const limits: FetchLimits = {
    ...deps.limits,
    scheduler:
      deps.limits.scheduler ??
      new HostScheduler({
        concurrency: deps.concurrency,
        // One batch at a time: everything read waits its turn (nothing is deferred as busy).
        host: { concurrency: deps.concurrency, maxQueued: Infinity, maxQueuedPerGroup: Infinity },
        gateway: { concurrency: deps.concurrency, maxQueued: Infinity, maxQueuedPerGroup: Infinity },
      }),
  }
  const results = await Promise.all(
    jobs.map(
      async (job, i): Promise<[Job, Result]> => [job, await processToken(deps, limits, job, uris[i]!)],
    ),
  )
  await saveResults(deps.pool, results)
  logBatchOutcomes(deps.logger, results)
  const withImages = results.filter(([, r]) => r.imageUrl !== null).map(([job]) => job.collection)
  await refreshFallbackImages(deps.pool, [...new Set(withImages)])
  return jobs.length
}

export interface TokenPipelineOptions {
  /** Tokens in memory at once (read, queued or in flight); the backlog stays in the database. */
  maxInMemory: number
  /** Tokens read from the database per step. */
  pageSize: number
  /** Pause when nothing is due. */
  idleMs: number
  /** Pause after each page while the sync is backfilling. */
  backfillIdleMs: number
  /** Longest wait before outcomes are written (they are written in batches). */
  flushMs: number
  /** While true (backfill), the queue takes one page per idle period so ingestion comes first. */
  yieldToSync?: () => boolean
}

/**
 * The token queue as the indexer runs it: a reader takes due tokens from the
 * database in index order (never more than maxInMemory in memory), reads
 * their tokenURIs in batches and hands each fetch to the host scheduler, which
 * serves hosts round-robin within their budgets. Outcomes are written in
 * batches as they arrive, so a slow host never holds up the tokens of others.
 * Tokens whose host is backed off or busy are deferred in the database (the
 * whole collection at once when it lives on that one host), so the reader
 * moves on past them.
 */
export class TokenPipeline {
  private readonly inMemory = new Set<string>()
  private results: Array<[Job, Result]> = []
  private resultBytes = 0
  private flushing: Promise<void> = Promise.resolve()
  /** Collection-wide deferrals run apart from the outcome writes, which they must not hold up. */
  private deferring: Promise<void> = Promise.resolve()
  private flushTimer: NodeJS.Timeout | null = null
  private wake: (() => void) | null = null
  /** Collection -> its one metadata host, or null once it has shown several. */
  private readonly collectionHost = new Map<string, string | null>()
  /** Collection -> until when it is deferred as a whole. */
  private readonly collectionDeferred = new Map<string, { until: number; open: boolean }>()
  private readonly bulkDefers: Array<{ collection: string; until: number; outcome: string | null }> = []
  readonly counters = { done: 0, ok: 0, deferred: 0 }

  constructor(
    private readonly deps: TokenJobDeps,
    private readonly options: TokenPipelineOptions,
  ) {}

  get size(): number {
    return this.inMemory.size
  }

  async run(): Promise<void> {
    const { signal } = this.deps
    try {
      while (!signal?.aborted) {
        const backfilling = this.options.yieldToSync?.() ?? false
        const cap = backfilling ? Math.min(URI_BATCH, this.options.maxInMemory) : this.options.maxInMemory
        const room = cap - this.inMemory.size
        if (room < Math.min(URI_BATCH, cap)) {
          await this.waitForRoom(this.options.idleMs)
          continue
        }
        const jobs = await dueTokens(
          this.deps.pool,
          Math.min(room, this.options.pageSize),
          [...this.inMemory],
          this.deferredCollections(),
        )
        if (jobs.length === 0) {
          await this.waitForRoom(this.options.idleMs)
          continue
        }
        for (const job of jobs) this.inMemory.add(job.id)
        let uris: Array<Hex | null>
        try {
          uris = await readUris(this.deps, jobs)
        } catch (err) {
          for (const job of jobs) this.inMemory.delete(job.id)
          throw err
        }
        jobs.forEach((job, i) => {
          void this.process(job, uris[i]!)
        })
        if (backfilling) await sleep(this.options.backfillIdleMs, signal)
      }
    } finally {
      if (this.flushTimer) clearTimeout(this.flushTimer)
      await this.flushing.catch(() => undefined)
      await this.deferring.catch(() => undefined)
      // Settled before shutdown: written. In flight at shutdown: still due in the database.
      await this.flush().catch(() => undefined)
    }
  }

  private async process(job: Job, uri: Hex | null) {
    let result: Result
    try {
      this.noteHost(job.collection, uri)
      result = await processToken(this.deps, this.deps.limits, job, uri)
    } catch (err) {
      // Not a named outcome (e.g. the media store failed): the token stays due and is tried
      // again, after a pause (kept in memory meanwhile, so the reader does not take it at once).
      this.deps.logger.warn(
        { collection: job.collection },
        `token metadata step failed: ${describeError(err)}`,
      )
      setTimeout(() => {
        this.inMemory.delete(job.id)
        this.wake?.()
      }, 30_000).unref?.()
      return
    }
    if (this.deps.signal?.aborted && result.outcome !== 'ok') {
      // Cut short by shutdown: not the host's doing, so nothing is recorded.
      this.inMemory.delete(job.id)
      return
    }
    if (result.deferred) this.deferCollection(job, result.deferred)
    this.results.push([job, result])
    this.resultBytes += result.metadata ? 512 + (result.uri?.length ?? 0) * 2 : 256
    if (this.results.length >= 500 || this.resultBytes > 16 * 1024 * 1024) void this.flush()
    else this.flushTimer ??= setTimeout(() => void this.flush(), this.options.flushMs)
  }

  /** Remembers which host a collection's documents live on (bulk deferral needs exactly one). */
  private noteHost(collection: string, uri: Hex | null) {
    let host: string | null = null
    try {
      const text = decodeUriResult(uri, this.deps.limits.maxMetadataBytes)
      const resolved = resolveUri(text, this.deps.limits.gateways, this.deps.limits.maxMetadataBytes)
      if (resolved.kind === 'fetch') host = schedulingKey(resolved.url)
    } catch {
      return
    }
    if (host === null) return
    if (this.collectionHost.size > 100_000) this.collectionHost.clear()
    const known = this.collectionHost.get(collection)
    if (known === undefined) this.collectionHost.set(collection, host)
    else if (known !== host) this.collectionHost.set(collection, null)
  }

  /**
   * Defers a collection's due tokens as a whole when its documents live on the
   * one host that is backed off or busy for long (a short busy wait only makes
   * the reader skip the collection meanwhile). Once per back-off: while a deferral
   * is in force the collection is not deferred again (a range of 250,000
   * tokens is one UPDATE), except to record that its host is now backed off.
   */
  private deferCollection(job: Job, backoff: HostBackedOff) {
    if (!this.collectionHost.get(job.collection)) return
    const already = this.collectionDeferred.get(job.collection)
    const open = backoff.reason === 'open'
    if (already && already.until > Date.now() && (already.open || !open)) return
    if (this.collectionDeferred.size > 100_000) this.collectionDeferred.clear()
    this.collectionDeferred.set(job.collection, { until: backoff.until, open })
    // A short wait for a busy host: the reader skips the collection meanwhile, no write needed.
    if (!open && backoff.until - Date.now() < 5_000) return
    this.bulkDefers.push({
      collection: job.collection,
      until: backoff.until,
      outcome: backoff.reason === 'open' ? backoff.outcome : null,
    })
  }

  /** Collections deferred as a whole right now: the reader skips them (their UPDATE may still be queued). */
  private deferredCollections(): string[] {
    const now = Date.now()
    const out: string[] = []
    for (const [collection, d] of this.collectionDeferred) {
      if (d.until > now) out.push(collection)
      else this.collectionDeferred.delete(collection)
    }
    return out
  }

  /** Writes what has settled (one statement), then lets the reader take more. */
  flush(): Promise<void> {
    if (this.flushTimer) {
      clearTimeout(this.flushTimer)
      this.flushTimer = null
    }
    this.flushing = this.flushing.then(async () => {
      const batch = this.results
      this.deferCollections()
      this.results = []
      this.resultBytes = 0
      if (batch.length === 0) return
      try {
        await saveResults(this.deps.pool, batch)
        logBatchOutcomes(this.deps.logger, batch)
        const withImages = batch.filter(([, r]) => r.imageUrl !== null).map(([job]) => job.collection)
        await refreshFallbackImages(this.deps.pool, [...new Set(withImages)])
        for (const [, r] of batch) {
          this.counters.done++
          if (r.outcome === 'ok') this.counters.ok++
          if (r.deferred) this.counters.deferred++
        }
      } catch (err) {
        // The tokens stay due in the database: the next read takes them again.
        this.deps.logger.warn(`token metadata outcomes not written: ${describeError(err)}`)
      } finally {
        for (const [job] of batch) this.inMemory.delete(job.id)
        this.wake?.()
      }
    })
    return this.flushing
  }

  private deferCollections() {
    const defers = this.bulkDefers.splice(0)
    if (defers.length === 0) return
    this.deferring = this.deferring.then(async () => {
      for (const d of defers) {
        try {
          await this.saveCollectionDeferral(d)
        } catch (err) {
          // Only an optimisation: the tokens are deferred one by one as they are read.
          this.deps.logger.warn(
            { collection: d.collection },
            `collection deferral not written: ${describeError(err)}`,
          )
        }
      }
    })
  }

  private async saveCollectionDeferral(d: { collection: string; until: number; outcome: string | null }) {
    const inMemory = [...this.inMemory]
    await this.deps.pool.query(
      `UPDATE tokens SET metadata_next_attempt_at = $2,
              metadata_status = CASE WHEN $3::text IS NOT NULL AND metadata_status = 'pending' THEN $3
                                     ELSE metadata_status END
        WHERE collection_address = $1 AND metadata_status = ANY($4::text[])
          AND metadata_next_attempt_at <= $2 AND id <> ALL($5::bigint[])`,
      [d.collection, new Date(d.until + jitter(d.until - Date.now())), d.outcome, RETRYABLE, inMemory],
    )
  }

  private waitForRoom(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer)
        this.deps.signal?.removeEventListener('abort', done)
        this.wake = null
        resolve()
      }
      const timer = setTimeout(done, ms)
      this.wake = done
      this.deps.signal?.addEventListener('abort', done, { once: true })
    })
  }
}

/** Up to a tenth of a wait more, so a host's tokens do not all come back at the same instant. */
const jitter = (waitMs: number) => Math.max(0, waitMs) * 0.1 * Math.random()

async function processToken(
  deps: TokenJobDeps,
  limits: FetchLimits,
  job: Job,
  uriResult: Hex | null,
): Promise<Result> {
  const result: Result = {
    outcome: 'ok',
    uri: null,
    metadata: null,
    name: null,
    imageUrl: null,
    mediaSha256: null,
    retryAt: null,
    deferred: null,
  }
  try {
    const uri = decodeUriResult(uriResult, limits.maxMetadataBytes)
    result.uri = cleanText(uri, limits.maxMetadataBytes) || null
    if (!result.uri) throw new FetchFailure('invalid_uri', 'tokenURI is empty')
    const doc = await fetchMetadataJson(result.uri, limits, job.collection)
    result.metadata = doc
    result.name = typeof doc.name === 'string' ? cleanText(doc.name) || null : null
    const image = imageOf(doc)
    result.imageUrl = image === null ? null : toValidUri(image)
    // Stored under the location the API serves (image_url, media_url), not as declared.
    if (result.imageUrl) result.mediaSha256 = await fetchMedia(deps, limits, job, result.imageUrl)
    return result
  } catch (err) {
    if (!(err instanceof FetchFailure)) throw err
    if (err instanceof HostBackedOff) {
      result.outcome = 'pending'
      result.deferred = err
      result.retryAt = new Date(err.until + jitter(err.until - Date.now()))
      return result
    }
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
function logBatchOutcomes(logger: Logger, all: Array<[Job, Result]>) {
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

/** Media failures do not fail the metadata: the image URL is still served, only without stored bytes. */
async function fetchMedia(
  deps: TokenJobDeps,
  limits: FetchLimits,
  job: Job,
  imageUrl: string,
): Promise<string | null> {
  try {
    // The token is in memory already (bounded by the pipeline): its image waits its turn.
    const bytes = await loadUriBytes(imageUrl, limits.maxMediaBytes, limits, job.collection, true)
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
 * time): for those the newer request wins. Deferred tokens keep their
 * attempts and outcome (a pending one takes its backed-off host's outcome).
 */
async function saveResults(pool: pg.Pool, results: Array<[Job, Result]>) {
  if (results.length === 0) return
  const col = <T>(pick: (job: Job, r: Result) => T) => results.map(([job, r]) => pick(job, r))
  await pool.query(
    `UPDATE tokens t SET
            metadata_status = CASE WHEN NOT r.deferred THEN r.outcome
                                   WHEN r.host_outcome IS NOT NULL AND t.metadata_status = 'pending' THEN r.host_outcome
                                   ELSE t.metadata_status END,
            metadata_uri = coalesce(r.uri, t.metadata_uri),
            metadata = CASE WHEN r.outcome = 'ok' THEN r.metadata::jsonb ELSE t.metadata END,
            name = CASE WHEN r.outcome = 'ok' THEN r.name ELSE t.name END,
            image_url = CASE WHEN r.outcome = 'ok' THEN r.image ELSE t.image_url END,
            media_sha256 = CASE WHEN r.outcome <> 'ok' THEN t.media_sha256
                                WHEN r.media IS NOT NULL THEN r.media
                                WHEN t.image_url = r.image THEN t.media_sha256 END,
            metadata_attempts = t.metadata_attempts + CASE WHEN r.deferred THEN 0 ELSE 1 END,
            metadata_next_attempt_at = r.retry_at,
            metadata_fetched_at = CASE WHEN r.deferred THEN t.metadata_fetched_at ELSE now() END,
            updated_at = now()
       FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
                   $7::text[], $8::timestamptz[], $9::int[], $10::timestamptz[], $11::bool[], $12::text[])
            AS r(id, outcome, uri, metadata, name, image, media, retry_at, attempts, next_at, deferred, host_outcome)
      WHERE t.id = r.id AND t.metadata_attempts = r.attempts AND t.metadata_next_attempt_at = r.next_at`,
    [
      col((j) => j.id),
      col((_, r) => r.outcome),
      col((_, r) => r.uri),
      col((_, r) => (r.metadata === null ? null : JSON.stringify(r.metadata))),
      col((_, r) => r.name),
      col((_, r) => r.imageUrl),
      col((_, r) => r.mediaSha256),
      col((_, r) => r.retryAt?.toISOString() ?? null),
      col((j) => j.attempts),
      col((j) => j.nextAttemptAt),
      col((_, r) => r.deferred !== null),
      col((_, r) => (r.deferred?.reason === 'open' ? r.deferred.outcome : null)),
    ],
  )
}
