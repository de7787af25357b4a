/**
 * `tsx src/start/with-database.ts [--migrate] <script.ts> [args…]`: runs a
 * database tool (`npm run db:migrate`, `npm run import:transfers`) against
 * the database `npm start` would use.
 *
 *  - DATABASE_URL set: that database, the environment unchanged.
 *  - Otherwise the embedded database in DATA_DIR/pg: the server of a running
 *    `npm start` when there is one (PGlite must not open its files twice),
 *    else an embedded server started for this command only, stopped after
 *    it; `--migrate` then applies the migrations first, as `npm start` does.
 *
 * The tool runs as a child process (`node --import tsx`) with DATABASE_URL
 * set; its exit code is this process's exit code.
 */
import { spawn } from 'node:child_process'
import path from 'node:path'
import { loadConfig } from '@/config/env'
import { createLogger } from '@/config/logger'
import { STOP_SIGNALS } from '@/config/stop-signals'
import { migrate } from '@/db/migrate'
import { EXIT_WITH_PARENT } from './exit-with-parent'

const ROOT = path.resolve(import.meta.dirname, '../..')

const argv = process.argv.slice(2)
const withMigrations = argv[0] === '--migrate'
const [script, ...args] = withMigrations ? argv.slice(1) : argv
if (!script) {
  process.stderr.write('usage: tsx src/start/with-database.ts [--migrate] <script.ts> [args…]\n')
  process.exit(2)
}

const config = loadConfig()
const logger = createLogger({ level: config.LOG_LEVEL, name: 'database' })
let databaseUrl = config.DATABASE_URL
let stopDatabase: (() => Promise<void>) | undefined

if (!databaseUrl) {
  const { runningEmbeddedPostgres, startEmbeddedPostgres } = await import('@/dev/postgres')
  const dataDir = path.join(path.resolve(ROOT, config.DATA_DIR), 'pg')
  databaseUrl = runningEmbeddedPostgres(dataDir)
  if (databaseUrl) {
    logger.info({ dataDir }, 'using the embedded database of the running service')
  } else {
    try {
      const pg = await startEmbeddedPostgres({ dataDir })
      databaseUrl = pg.url
      stopDatabase = pg.stop
      logger.info({ dataDir }, 'embedded PostgreSQL (PGlite) started for this command')
      if (withMigrations) {
        const { applied } = await migrate(databaseUrl, { logger })
        if (applied.length > 0) logger.info({ applied }, 'migrations applied')
      }
    } catch (err) {
      process.stderr.write(`embedded database: ${(err as Error).message}\n`)
      await stopDatabase?.()
      process.exit(2)
    }
  }
}

const child = spawn(process.execPath, ['--import', EXIT_WITH_PARENT, '--import', 'tsx', script, ...args], {
  env: { ...process.env, DATABASE_URL: databaseUrl, NFT_PARENT_PID: String(process.pid) },
  stdio: 'inherit',
})
// Ctrl-C reaches the tool too; this process waits for it, then stops the database cleanly.
for (const signal of STOP_SIGNALS) {
  process.on(signal, () => {
    if (child.exitCode === null) child.kill(signal)
  })
}
const code = await new Promise<number>((resolve) =>
  child.once('exit', (exitCode, signal) => resolve(exitCode ?? (signal ? 1 : 0))),
)
await stopDatabase?.()
process.exit(code)
