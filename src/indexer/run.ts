import type pg from 'pg'
import type { Logger } from 'pino'
import type { Config } from '@/config/env'
import type { PrismaClient } from '@/server/db/generated/client'
import { ChainIdMismatchError, IndexerError } from './errors'
import { type MetadataQueueOptions, runMetadataQueue } from './metadata/queue'
import { createRpc } from './rpc/client'
import { AdaptiveRange } from './rpc/get-logs'
import { acquireLeaderLock } from './store/lock'
import { ensureIndexerState } from './store/state'
import { ContractClassifier } from './sync/classify'
import { BackfillProgress } from './sync/progress'
import { loadTip, runSyncLoop } from './sync/sync'
import type { Syncer, SyncOptions } from './sync/syncer'

export interface RunIndexerOptions {
  config: Config
  pool: pg.Pool
  /** Accepted for symmetry with the web process; the indexer writes through `pool`. */
  prisma?: PrismaClient
  logger: Logger
  signal: AbortSignal
  sync?: Partial<SyncOptions>
  metadata?: MetadataQueueOptions & { enabled?: boolean }
  onCommit?: Syncer['onCommit']
}

/**
 * The indexer: checks the chain id, takes the leader lock (waiting while
 * another instance holds it), then runs the sync loop and the metadata queue
 * until `signal` aborts. Rejects on a wrong chain or a lost leader lock.
 */
export async function runIndexer(options: RunIndexerOptions): Promise<void> {
  const { config, pool, logger } = options
  if (!config.RPC_URL) throw new IndexerError('RPC_URL is required by the indexer')
  const rpc = createRpc({ url: config.RPC_URL, logger, signal: options.signal })
  const chainId = await rpc.chainId()
  if (chainId !== config.CHAIN_ID) throw new ChainIdMismatchError(config.CHAIN_ID, chainId)

  const lock = await acquireLeaderLock(pool, { network: config.NETWORK, logger, signal: options.signal })
  const stop = new AbortController()
  const signal = AbortSignal.any([options.signal, lock.lost, stop.signal])
  try {
    await ensureIndexerState(pool, { network: config.NETWORK, chainId, startBlock: config.START_BLOCK })
    const syncOptions: SyncOptions = {
      network: config.NETWORK,
      startBlock: BigInt(config.START_BLOCK),
      confirmations: BigInt(config.CONFIRMATIONS),
      keepBlocks: BigInt(Math.max(64, 2 * config.CONFIRMATIONS)),
      pollIntervalMs: 500,
      historicalConcurrency: 4,
      maxEventsPerCommit: 20_000,
      realtimeBatch: 50,
      initialRange: 10n,
      maxRange: 100_000n,
      ...options.sync,
    }
    const syncLogger = logger.child({ component: 'sync' })
    const syncRpc = createRpc({ url: config.RPC_URL, logger: syncLogger, signal })
    const syncer: Syncer = {
      ctx: {
        rpc: syncRpc,
        pool,
        logger: syncLogger,
        signal,
        classifier: new ContractClassifier(syncRpc, pool, syncLogger),
        range: new AdaptiveRange(syncOptions.initialRange, 1n, syncOptions.maxRange),
      },
      options: syncOptions,
      tip: null,
      head: { lastSeenBlock: -1n, chainConfirmedBlock: -1n },
      progress: new BackfillProgress(syncLogger),
      backfilling: true,
      onCommit: options.onCommit,
    }
    syncer.tip = await loadTip(syncer)
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
      const metadataRpc = createRpc({ url: config.RPC_URL, logger, signal, maxConcurrency: 8 })
      tasks.push(
        runMetadataQueue(
          { config, pool, rpc: metadataRpc, logger, signal, yieldToSync: () => syncer.backfilling },
          options.metadata,
        ),
      )
    }
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
    await lock.release().catch(() => undefined)
  }
}
