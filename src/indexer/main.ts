/**
 * Indexer process entry: `tsx src/indexer/main.ts` with DATABASE_URL and
 * RPC_URL (and the rest of the configuration contract) in the environment.
 * Exit codes: 0 after SIGINT/SIGTERM, 2 bad configuration, 3 wrong chain id,
 * 1 any other failure.
 */
import { loadConfig } from '@/config/env'
import { createLogger } from '@/config/logger'
import { createPool } from '@/server/db/client'
import { ChainIdMismatchError, describeError } from './errors'
import { runIndexer } from './run'
import type { SyncOptions } from './sync/syncer'

/**
 * Optional indexer tuning, outside the shared configuration contract:
 * INDEXER_RANGE_BLOCKS (first and largest eth_getLogs span, e.g. for
 * providers with a hard block-range cap) and INDEXER_COMMIT_EVENTS (events
 * merged into one backfill commit).
 */
function readTuning(env: NodeJS.ProcessEnv): Partial<SyncOptions> {
  const tuning: Partial<SyncOptions> = {}
  const positive = (name: string) => {
    const raw = env[name]?.trim()
    if (!raw) return undefined
    if (!/^[1-9][0-9]{0,8}$/.test(raw)) {
      process.stderr.write(
        `Invalid configuration: ${name} must be a positive integer (got ${JSON.stringify(raw)})\n`,
      )
      process.exit(2)
    }
    return Number(raw)
  }
  const range = positive('INDEXER_RANGE_BLOCKS')
  if (range !== undefined) {
    tuning.initialRange = BigInt(range)
    tuning.maxRange = BigInt(range)
  }
  const commitEvents = positive('INDEXER_COMMIT_EVENTS')
  if (commitEvents !== undefined) tuning.maxEventsPerCommit = commitEvents
  return tuning
}

const config = loadConfig()
if (!config.DATABASE_URL || !config.RPC_URL) {
  process.stderr.write(
    `Invalid configuration: ${config.DATABASE_URL ? 'RPC_URL' : 'DATABASE_URL'} is required by the indexer\n`,
  )
  process.exit(2)
}
const tuning = readTuning(process.env)
const logger = createLogger({ level: config.LOG_LEVEL, name: 'indexer' })
const pool = createPool(config.DATABASE_URL, { max: 8 })
const controller = new AbortController()
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    logger.info({ signal }, 'stopping')
    controller.abort()
  })
}

try {
  await runIndexer({ config, pool, logger, signal: controller.signal, sync: tuning })
  await pool.end()
  process.exit(0)
} catch (err) {
  if (err instanceof ChainIdMismatchError) {
    process.stderr.write(`${err.shortMessage}\n`)
    process.exit(3)
  }
  logger.fatal(`indexer stopped: ${describeError(err)}`)
  process.exit(1)
}
