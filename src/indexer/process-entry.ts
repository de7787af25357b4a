/**
 * Indexer process entry: `tsx src/indexer/process-entry.ts` with DATABASE_URL and
 * RPC_URL (and the rest of the configuration contract) in the environment.
 * Exit codes: 0 after SIGINT/SIGTERM/SIGHUP, 2 bad configuration, 3 wrong chain id,
 * 1 any other failure.
 */
import { type Config, loadConfig } from '@/config/env'
import { captureConsole, createLogger } from '@/config/logger'
import { metricsPort, serveMetrics } from '@/config/metrics-endpoint'
import { STOP_SIGNALS } from '@/config/stop-signals'
import { createPool } from '@/db/pool'
import { ChainIdMismatchError, DatabaseChainMismatchError, describeError } from './errors'
import { IndexerMetrics } from './metrics'
import { runIndexer } from './run-indexer'
import type { SyncOptions } from './sync/syncer'

/** Optional tuning from the configuration contract (INDEXER_RANGE_BLOCKS, INDEXER_COMMIT_EVENTS, INDEXER_VERIFY, INDEXER_PROOF_SAMPLE_RATE). */
function syncTuning(config: Config): Partial<SyncOptions> {
  const tuning: Partial<SyncOptions> = {}
  if (config.INDEXER_RANGE_BLOCKS !== undefined) {
    tuning.initialRange = BigInt(config.INDEXER_RANGE_BLOCKS)
    tuning.maxRange = BigInt(config.INDEXER_RANGE_BLOCKS)
  }
  if (config.INDEXER_COMMIT_EVENTS !== undefined) tuning.maxEventsPerCommit = config.INDEXER_COMMIT_EVENTS
  tuning.verify = config.INDEXER_VERIFY === 'on'
  tuning.proofSample = { rate: config.INDEXER_PROOF_SAMPLE_RATE }
  return tuning
}

const config = loadConfig()
if (!config.DATABASE_URL || !config.RPC_URL) {
  process.stderr.write(
    `Invalid configuration: ${config.DATABASE_URL ? 'RPC_URL' : 'DATABASE_URL'} is required by the indexer\n`,
  )
  process.exit(2)
}
const tuning = syncTuning(config)
const logger = createLogger({ level: config.LOG_LEVEL, name: 'indexer' })
// What libraries print with console becomes log records too (docs/operations.md, "Logs").
captureConsole(logger)
// 8 for the work, plus the connection that LISTENs for refresh requests (docs/metadata.md, "Refresh requests").
const pool = createPool(config.DATABASE_URL, { max: 9 })
// Prometheus metrics on METRICS_PORT + 1 (the web process has METRICS_PORT; docs/operations.md, "Metrics").
const port = metricsPort(config, 'indexer')
const metrics = port === undefined ? undefined : new IndexerMetrics(pool, config.NETWORK, logger)
const metricsEndpoint =
  metrics && port !== undefined
    ? await serveMetrics({
        registry: metrics.registry,
        port,
        host: config.METRICS_HOST,
        beforeScrape: () => metrics.refresh(),
        logger,
      }).catch((err) => {
        logger.fatal({ err, port }, 'metrics port unavailable')
        process.exit(1)
      })
    : undefined
const controller = new AbortController()
for (const signal of STOP_SIGNALS) {
  process.once(signal, () => {
    logger.info({ signal }, 'stopping')
    controller.abort()
  })
}

try {
  await runIndexer({ config, pool, logger, signal: controller.signal, sync: tuning, metrics })
  await metricsEndpoint?.close()
  await pool.end()
  process.exit(0)
} catch (err) {
  // Another chain than CHAIN_ID, at the node or in the database: a restart cannot cure it.
  if (err instanceof ChainIdMismatchError || err instanceof DatabaseChainMismatchError) {
    process.stderr.write(`${err.shortMessage}\n`)
    process.exit(3)
  }
  logger.fatal(`indexer stopped: ${describeError(err)}`)
  process.exit(1)
}
