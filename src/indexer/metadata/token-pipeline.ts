import { describeError } from '../errors'
import { deferCollectionTokens } from '../store/metadata-queue'
import { sleep } from '../util/sleep'
import { schedulingKey } from './document'
import type { HostBackedOff } from './host-scheduler'
import { resolveUri } from './resolve-uri'
import {
  dueTokens,
  jitter,
  priorityTokens,
  processToken,
  readUris,
  retryMedia,
  type TokenJob,
  type TokenJobDeps,
  type TokenResult,
  URI_BATCH,
  type UriRead,
  uriOf,
} from './token-job'
import { writeOutcomes } from './token-outcomes'

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
 * their tokenURIs (ERC-1155: URI events, else uri(id)) in batches and hands each fetch to the host scheduler, which
 * serves hosts round-robin within their budgets. Outcomes are written in
 * batches as they arrive, so a slow host never holds up the tokens of others.
 * Tokens whose host is backed off or busy are deferred in the database (the
 * whole collection at once when it lives on that one host), so the reader
 * moves on past them.
 */
export class TokenPipeline {
  private readonly inMemory = new Set<string>()
  private results: Array<[TokenJob, TokenResult]> = []
  private resultBytes = 0
  private flushing: Promise<void> = Promise.resolve()
  /** Collection-wide deferrals run apart from the outcome writes, which they must not hold up. */
  private deferring: Promise<void> = Promise.resolve()
  private flushTimer: NodeJS.Timeout | null = null
  private wake: (() => void) | null = null
  /** Tokens refreshed on request may be due (store/metadata-refresh.ts): read them before the backlog. */
  private priorityDue = false
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

  /**
   * Tokens were refreshed on request: the reader takes them at its next step,
   * ahead of the backlog and even when the in-memory cap is reached (a few
   * over it at most: users' refreshes are limited).
   */
  prioritize(): void {
    this.priorityDue = true
    this.wake?.()
  }

  /** Starts the refreshed tokens; true when there were some. */
  private async takePriorityTokens(): Promise<boolean> {
    this.priorityDue = false
    const jobs = await priorityTokens(this.deps.pool, URI_BATCH, [...this.inMemory])
    if (jobs.length === 0) return false
    // A full page: there may be more.
    if (jobs.length === URI_BATCH) this.priorityDue = true
    await this.start(jobs)
    return true
  }

  /**
   * Reads the metadata URIs of `jobs` (readUris) and hands each token on by
   * itself; a media retry needs no URI (its document is not fetched again).
   */
  private async start(jobs: TokenJob[]): Promise<void> {
    for (const job of jobs) this.inMemory.add(job.id)
    const documentJobs = jobs.filter((job) => job.media === null)
    let uris: UriRead[]
    try {
      uris = await readUris(this.deps, documentJobs)
    } catch (err) {
      for (const job of jobs) this.inMemory.delete(job.id)
      throw err
    }
    documentJobs.forEach((job, i) => {
      void this.process(job, uris[i]!)
    })
    for (const job of jobs) if (job.media !== null) void this.process(job, null)
  }

  async run(): Promise<void> {
    const { signal } = this.deps
    try {
      while (!signal?.aborted) {
        if (this.priorityDue && (await this.takePriorityTokens())) continue
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
        await this.start(jobs)
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

  private async process(job: TokenJob, uri: UriRead | null) {
    let result: TokenResult
    try {
      if (job.media !== null) result = await retryMedia(this.deps, this.deps.limits, job, job.media)
      else {
        this.noteHost(job, uri!)
        result = await processToken(this.deps, this.deps.limits, job, uri!)
      }
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
  private noteHost({ collection, tokenId }: TokenJob, uri: UriRead) {
    let host: string | null = null
    try {
      const text = uriOf(uri, tokenId, this.deps.limits.maxMetadataBytes)
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
  private deferCollection(job: TokenJob, backoff: HostBackedOff) {
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
        await writeOutcomes(this.deps.pool, this.deps.logger, batch)
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
    await deferCollectionTokens(this.deps.pool, {
      collection: d.collection,
      until: new Date(d.until + jitter(d.until - Date.now())),
      outcome: d.outcome,
      inMemory,
    })
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
