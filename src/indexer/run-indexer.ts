import { setMaxListeners } from 'node:events'
import type pg from 'pg'
import type { Logger } from 'pino'
import type { Config } from '@/config/env'
import { ChainIdMismatchError, IndexerError } from './errors'
import { type JournalPrunerOptions, runJournalPruner } from './journal-pruner'
import { type MetadataQueueOptions, runMetadataQueue } from './metadata/queue'
import type { IndexerMetrics } from './metrics'
import { type RarityWorkerOptions, runRarityWorker } from './rarity/worker'
import { createRpc, splitRpcUrls } from './rpc/client'
import { EndpointPool, type EndpointPoolOptions } from './rpc/endpoint-pool'
import { AdaptiveRange } from './rpc/get-logs'
import { acquireLeaderLock } from './store/lock'
import { ensureIndexerState, markLogIndexUntrusted, readLogIndexUntrusted } from './store/state'
import { ContractClassifier } from './sync/classify'
import { BackfillProgress } from './sync/progress'
import { loadTip, loadVerified, runSyncLoop } from './sync/sync'
import type { Syncer, SyncOptions } from './sync/syncer'
import { mismatchRecorder } from './sync/verify-confirmed'
import { OmissionRate } from './verify/omission-rate'
import { DEFAULT_PROOF_SAMPLE_RATE, ProofPolicy } from './verify/proof-sample'

export interface RunIndexerOptions {
  config: Config
  pool: pg.Pool
  logger: Logger
  signal: AbortSignal
  sync?: Partial<SyncOptions>
  metadata?: MetadataQueueOptions & { enabled?: boolean }
  /** Stored rarity and trait counts (rarity/worker.ts). */
  rarity?: RarityWorkerOptions & { enabled?: boolean }
  /** Deletes activity journal entries past the retention (journal-pruner.ts). */
  journalPruning?: JournalPrunerOptions
  onCommit?: Syncer['onCommit']
  /** Endpoint tuning (time-out, concurrency); tests shorten the time-out. */
  rpc?: Partial<Omit<EndpointPoolOptions, 'urls'>>
  /** Prometheus metrics (when METRICS_PORT is set; docs/operations.md, "Metrics"). */
  metrics?: IndexerMetrics
}

/**
 * The indexer: checks the chain id, takes the leader lock (waiting while
 * another instance holds it), then runs the sync loop, the metadata queue,
 * the rarity worker and the activity journal's pruning until `signal` aborts. Rejects on a wrong chain or a lost leader lock.
 */
export async function runIndexer(options: RunIndexerOptions): Promise<void> {
  const { config, pool, logger, metrics } = options
  if (!config.RPC_URL) throw new IndexerError('RPC_URL is required by the indexer')
  const endpoints = new EndpointPool({
    urls: splitRpcUrls(config.RPC_URL),
    timeoutMs: config.RPC_TIMEOUT_MS,
    observer: metrics,
    ...options.rpc,
  })
  const chainId = await checkEndpoints(endpoints, config.CHAIN_ID, logger, options.signal)

  const lock = await acquireLeaderLock(pool, { network: config.NETWORK, logger, signal: options.signal })
  const stop = new AbortController()
  const signal = AbortSignal.any([options.signal, lock.lost, stop.signal])
  // Every request in flight or waiting for an endpoint, and every waiting metadata job, listens
  // on it until it ends (rpc/transport.ts, rpc/retry.ts sleep): their number follows the work
  // outstanding (a batch of 50 tokenURI reads waiting out one Retry-After adds 50), which
  // Node's leak warning cannot tell from a leak. That each is removed is tested instead
  // (rpc/endpoint-pool.test.ts).
  setMaxListeners(0, signal)
  metrics?.leader(true)
  try {
    await ensureIndexerState(pool, { network: config.NETWORK, chainId, startBlock: config.START_BLOCK })
    const syncOptions: SyncOptions = {
      network: config.NETWORK,
      startBlock: BigInt(config.START_BLOCK),
      confirmations: BigInt(config.CONFIRMATIONS),
      keepBlocks: BigInt(Math.max(64, 2 * config.CONFIRMATIONS)),
      pollIntervalMs: 500,
      rangesInFlight: { min: 2, max: 4 },
      maxEventsPerCommit: 20_000,
      realtimeBatch: 50,
      initialRange: 10n,
      maxRange: 100_000n,
      verify: true,
      chainId,
      proofSample: { rate: DEFAULT_PROOF_SAMPLE_RATE },
      ...options.sync,
    }
    const syncLogger = logger.child({ component: 'sync' })
    const syncRpc = createRpc({ pool: endpoints, logger: syncLogger, signal })
    const syncer: Syncer = {
      ctx: {
        rpc: syncRpc,
        pool,
        logger: syncLogger,
        signal,
        classifier: new ContractClassifier(syncRpc, pool, syncLogger),
        range: new AdaptiveRange(syncOptions.initialRange, 1n, syncOptions.maxRange),
        verify: syncOptions.verify,
        followed: new Map(),
        omissions: new OmissionRate(),
        proofs: new ProofPolicy(
          syncOptions.proofSample,
          await readLogIndexUntrusted(pool, config.NETWORK),
          () => {
            markLogIndexUntrusted(pool, config.NETWORK).catch((err) =>
              syncLogger.warn({ err }, 'could not record that the log index is not trusted'),
            )
          },
        ),
      },
      options: syncOptions,
      tip: null,
      verifiedThrough: null,
      head: { lastSeenBlock: -1n, chainConfirmedBlock: -1n },
      progress: new BackfillProgress(syncLogger),
      backfilling: true,
      onCommit: options.onCommit,
    }
    syncer.ctx.onMismatch = mismatchRecorder(syncer)
    metrics?.watchOmissions(syncer.ctx.omissions)
    syncer.tip = await loadTip(syncer)
    syncer.verifiedThrough = await loadVerified(syncer)
    logger.info(
      {
        network: config.NETWORK,
        chainId,
        startBlock: config.START_BLOCK,
        resumeAfter: syncer.tip?.number.toString() ?? null,
      },
      'indexer started',
    )
    const tasks = [runSyncLoop(syncer, signal)]
    if (options.metadata?.enabled !== false) {
      const metadataRpc = createRpc({ pool: endpoints, logger, signal, background: true })
      tasks.push(
        runMetadataQueue(
          { config, pool, rpc: metadataRpc, logger, signal, metrics, yieldToSync: () => syncer.backfilling },
          options.metadata,
        ),
      )
    }
    if (options.rarity?.enabled !== false) {
      tasks.push(runRarityWorker({ pool, logger, signal }, options.rarity))
    }
    tasks.push(runJournalPruner({ pool, logger, signal }, options.journalPruning))
    // Either task failing stops the other: the process is then restarted whole.
    await Promise.all(
      tasks.map((t) =>
        t.catch((err) => {
          stop.abort(err)
          throw err
        }),
      ),
    )
    if (lock.lost.aborted) throw lock.lost.reason
  } finally {
    metrics?.leader(false)
    await lock.release().catch(() => undefined)
  }
}

/**
 * Every endpoint must serve CHAIN_ID: one that serves another chain would
 * mix two chains' logs, so the indexer refuses to start and names it. An
 * endpoint that says it is still syncing is kept but never trusted as the head.
 */
async function checkEndpoints(
  pool: EndpointPool,
  expected: number,
  logger: Logger,
  signal: AbortSignal,
): Promise<number> {
  await Promise.all(
    pool.endpoints.map(async (endpoint) => {
      const rpc = createRpc({ pool: new EndpointPool({ urls: [endpoint.url] }), logger, signal })
      const chainId = await rpc.chainId()
      if (chainId !== expected) {
        const name = pool.endpoints.length > 1 ? `RPC endpoint ${endpoint.label}` : undefined
        throw new ChainIdMismatchError(expected, chainId, name)
      }
      const syncing = await rpc.request<unknown>('eth_syncing', [], { retry: false }).catch(() => false)
      if (syncing !== false) {
        endpoint.syncing = true
        logger.warn(
          { endpoint: endpoint.index + 1 },
          `${endpoint.label} is still syncing: not trusted as the head`,
        )
      }
    }),
  )
  return expected
}
