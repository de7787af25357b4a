import pLimit from 'p-limit'
import type pg from 'pg'
import type { Logger } from 'pino'
import type { Config } from '@/config/env'
import type { MetadataQueueReport } from '@/db/queries/indexer-state'
import { parseAllowHosts } from '@/net/guarded-lookup'
import { describeError, isAbortError } from '../errors'
import type { IndexerMetrics } from '../metrics'
import type { Rpc } from '../rpc/client'
import { backoffDelay } from '../rpc/retry'
import { countMetadataBacklog } from '../store/metadata-queue'
import { writeMetadataQueueReport } from '../store/state'
import { sleep } from '../util/sleep'
import { processCollections } from './collection-info'
import { type FetchLimits, gatewayHosts, gatewayLabels } from './document'
import { HostScheduler } from './host-scheduler'
import { removeStaleUploads } from './media-store'
import { runRefreshRequests } from './refresh-requests'
import { normalizeStoredDocuments } from './stored-documents'
import { TokenPipeline } from './token-pipeline'
import { hasMulticall3 } from './token-uri'

export interface MetadataQueueOptions {
  idleMs?: number
  /** Requests in flight over all hosts (default METADATA_CONCURRENCY). */
  concurrency?: number
  /** Requests in flight to one host (default METADATA_HOST_CONCURRENCY). */
  hostConcurrency?: number
  /** Requests in flight to one configured gateway (default METADATA_GATEWAY_CONCURRENCY). */
  gatewayConcurrency?: number
  timeoutMs?: number
  maxMetadataBytes?: number
  maxMediaBytes?: number
  /** Cap of an animation_url's bytes (default 50 MiB: docs/metadata.md, "Animations"). */
  maxAnimationBytes?: number
  /** Animation bodies read back whole at once (default 4: a JSON glTF model, up to maxAnimationBytes each). */
  animationConcurrency?: number
  maxAttempts?: number
  retryBaseMs?: number
  /** First wait after a failed collection read (default 1 min, doubling to 1 h: collection-info.ts). */
  collectionRetryBaseMs?: number
  /** Waits before a settled outcome is checked again (default 1 h, 6 h, 24 h, then weekly: recheck.ts). */
  recheckDelaysMs?: number[]
  /** Consecutive host faults that back a host off, and the first back-off period. */
  breakerThreshold?: number
  breakerCooldownMs?: number
  /** Tokens in memory at once; the rest of the backlog stays in the database. */
  maxInMemory?: number
  /** How often refresh requests are looked for besides their notifications (refresh-requests.ts). */
  refreshPollMs?: number
  /** How often the backlog is counted into indexer_state.metadata_queue. */
  reportMs?: number
}

export function fetchLimitsFromConfig(
  config: Config,
  options: MetadataQueueOptions = {},
  signal?: AbortSignal,
): FetchLimits {
  const gateways = { ipfs: config.IPFS_GATEWAY, arweave: config.ARWEAVE_GATEWAY }
  return {
    gateways,
    // Gateways are the operator's choice, not chain data: they may be private.
    allowHosts: parseAllowHosts([...config.FETCH_ALLOW_HOSTS, ...gatewayHosts(gateways)]),
    timeoutMs: options.timeoutMs ?? 15_000,
    maxMetadataBytes: options.maxMetadataBytes ?? 1024 * 1024,
    maxMediaBytes: options.maxMediaBytes ?? 20 * 1024 * 1024,
    maxAnimationBytes: options.maxAnimationBytes ?? 50 * 1024 * 1024,
    animationSlots: pLimit(options.animationConcurrency ?? 4),
    signal,
  }
}

/**
 * The metadata and media queue, inside the indexer process but off the
 * ingestion path: it works from tokens.metadata_status, with its own RPC
 * client, so slow or hostile metadata hosts never delay block processing.
 * Fetches go through one HostScheduler (fair per host and per collection,
 * circuit breakers); collections and tokens run side by side.
 */
export async function runMetadataQueue(
  deps: {
    config: Config
    pool: pg.Pool
    rpc: Rpc
    logger: Logger
    signal: AbortSignal
    /** Told each count of the backlog (src/indexer/metrics.ts). */
    metrics?: Pick<IndexerMetrics, 'metadataBacklog'>
    /** While true (backfill), the queue slows to one batch per idle period so ingestion comes first. */
    yieldToSync?: () => boolean
  },
  options: MetadataQueueOptions = {},
): Promise<void> {
  const { config, pool, rpc, signal } = deps
  const logger = deps.logger.child({ component: 'metadata' })
  const limits = fetchLimitsFromConfig(config, options, signal)
  const hostConcurrency = options.hostConcurrency ?? config.METADATA_HOST_CONCURRENCY
  const gatewayConcurrency = options.gatewayConcurrency ?? config.METADATA_GATEWAY_CONCURRENCY
  limits.scheduler = new HostScheduler({
    concurrency: options.concurrency ?? config.METADATA_CONCURRENCY,
    host: {
      concurrency: hostConcurrency,
      maxQueued: hostConcurrency * 64,
      maxQueuedPerGroup: hostConcurrency * 64,
    },
    gateway: {
      concurrency: gatewayConcurrency,
      maxQueued: gatewayConcurrency * 64,
      // Many collections share a gateway: none may take all of its queue.
      maxQueuedPerGroup: gatewayConcurrency * 8,
    },
    gateways: gatewayLabels(limits.gateways),
    failureThreshold: options.breakerThreshold,
    cooldownMs: options.breakerCooldownMs,
    onBreaker: (e) => {
      const what = e.collection ? `metadata of ${e.collection} on host` : 'metadata host'
      const fields = { host: e.host, ...(e.collection ? { collection: e.collection } : {}) }
      if (e.state === 'closed') return logger.info(fields, `${what} recovered`)
      const until = new Date(e.until).toISOString()
      logger.info(
        { ...fields, until, outcome: e.outcome },
        `${what} backed off until ${until} (${e.outcome})`,
      )
    },
  })
  const idleMs = options.idleMs ?? 500
  // While the sync backfills, one page per second at most, as before: ingestion comes first.
  const backfillIdleMs = options.idleMs ?? 1_000
  let multicall: boolean | null = null
  const common = { pool, rpc, logger, limits, multicallEnabled: () => multicall === true }
  const pipeline = new TokenPipeline(
    {
      ...common,
      mediaDir: config.MEDIA_DIR,
      maxAttempts: options.maxAttempts ?? 5,
      retryBaseMs: options.retryBaseMs ?? 30_000,
      recheckDelaysMs: options.recheckDelaysMs,
      concurrency: options.concurrency ?? config.METADATA_CONCURRENCY,
      signal,
    },
    {
      maxInMemory: options.maxInMemory ?? 4_096,
      pageSize: 200,
      idleMs,
      backfillIdleMs,
      flushMs: 100,
      yieldToSync: deps.yieldToSync,
    },
  )

  // Asked once for all the steps that start together; asked again only after a failed answer.
  let detecting: Promise<boolean> | undefined
  const detectMulticall = () => {
    detecting ??= hasMulticall3(rpc).then(
      (found) => {
        logger.info(`tokenURI reads via ${found ? 'Multicall3' : 'batched eth_call'}`)
        return found
      },
      (err: unknown) => {
        detecting = undefined
        throw err
      },
    )
    return detecting
  }

  /** Runs a step again after failures, with backoff, until shutdown. */
  const keepRunning = async (name: string, step: () => Promise<void>) => {
    let failures = 0
    while (!signal.aborted) {
      try {
        if (multicall === null) multicall = await detectMulticall()
        await step()
        failures = 0
      } catch (err) {
        if (signal.aborted || isAbortError(err)) break
        const delay = backoffDelay(failures++, 1_000, 60_000)
        logger.warn({ retryInMs: Math.round(delay) }, `metadata ${name} step failed: ${describeError(err)}`)
        await sleep(delay, signal).catch(() => undefined)
      }
    }
  }

  const stale = await removeStaleUploads(config.MEDIA_DIR)
  if (stale > 0) logger.info(`removed ${stale} unfinished media file(s) a stopped process left`)
  await Promise.all([
    // Documents kept before their fields were normalized: once, from the stored documents.
    normalizeStoredDocuments(pool, logger, {
      signal,
      pauseMs: () => (deps.yieldToSync?.() ? backfillIdleMs : 0),
    }),
    keepRunning('token', () => pipeline.run()),
    // Refreshes asked for in the portal: LISTEN/NOTIFY, polling besides (docs/metadata.md, "Refresh requests").
    keepRunning('refresh', () =>
      runRefreshRequests(
        { pool, logger, signal, onTokens: () => pipeline.prioritize() },
        { pollMs: options.refreshPollMs },
      ),
    ),
    keepRunning('collection', async () => {
      const collections = await processCollections({ ...common, retryBaseMs: options.collectionRetryBaseMs })
      if (deps.yieldToSync?.()) await sleep(backfillIdleMs, signal)
      else if (collections === 0) await sleep(idleMs, signal)
    }),
    keepRunning('report', async () => {
      const started = performance.now()
      const backlog = await reportQueue(pool, config.NETWORK, limits.scheduler!, pipeline, logger)
      deps.metrics?.metadataBacklog(backlog)
      // Counting a backlog of millions takes a while: then count less often (at most 5 % of the time).
      await sleep(Math.max(options.reportMs ?? 10_000, 20 * (performance.now() - started)), signal)
    }),
  ])
}

/** Tokens still queued (not final), by their current outcome. */
export async function metadataBacklog(pool: pg.Pool): Promise<Record<string, number>> {
  return countMetadataBacklog(pool)
}

let lastLoggedBacklog = ''

/**
 * Writes the queue's view into indexer_state.metadata_queue (the status
 * endpoint shows it) and logs it at info when it changed.
 */
async function reportQueue(
  pool: pg.Pool,
  network: string,
  scheduler: HostScheduler,
  pipeline: TokenPipeline,
  logger: Logger,
): Promise<Record<string, number>> {
  const backlog = await metadataBacklog(pool)
  const stats = scheduler.stats()
  const backedOff = stats.backedOff.slice(0, 100)
  const report: MetadataQueueReport = {
    backlog,
    in_flight: stats.inFlight,
    in_memory: pipeline.size,
    backed_off_hosts: backedOff,
    backed_off_count: stats.backedOff.length,
    backed_off_collections: stats.backedOffCollections.slice(0, 100),
    backed_off_collections_count: stats.backedOffCollections.length,
    at: new Date().toISOString(),
  }
  await writeMetadataQueueReport(pool, network, report)
  const collections = stats.backedOffCollections.length
  const summary = JSON.stringify([backlog, backedOff.map((h) => h.host), collections])
  if (summary !== lastLoggedBacklog) {
    lastLoggedBacklog = summary
    logger.info(
      { backlog, backedOffHosts: backedOff.map((h) => h.host), inFlight: stats.inFlight },
      `metadata backlog: ${Object.entries(backlog)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')}; ${stats.backedOff.length} host(s) backed off, ${collections} collection(s) on a host`,
    )
  }
  return backlog
}
