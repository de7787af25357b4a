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

const config = loadConfig()
if (!config.DATABASE_URL || !config.RPC_URL) {
  process.stderr.write(
    `Invalid configuration: ${config.DATABASE_URL ? 'RPC_URL' : 'DATABASE_URL'} is required by the indexer\n`,
  )
  process.exit(2)
}
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
  await runIndexer({ config, pool, logger, signal: controller.signal })
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
