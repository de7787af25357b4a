/**
 * `npm start`: one command for the whole service.
 *  1. validates the configuration (AUTH_SECRET included), that DATA_DIR can be
 *     created and written and that its ports are free (a bad value, an unusable
 *     DATA_DIR or a taken port stops here, one line, exit code 2);
 *  2. starts the embedded services the environment does not provide —
 *     PGlite when there is no DATABASE_URL, the anvil devnet when there is
 *     no RPC_URL (docs/design.md, "Embedded defaults and real services");
 *  3. applies migrations, builds the portal when its sources changed and
 *     bundles the indexer (src/indexer/bundle.ts);
 *  4. runs the indexer and web processes, restarting one that crashes;
 *  5. on Ctrl-C / SIGTERM / SIGHUP — to this process or to any process it
 *     runs, anvil included — stops every child, then the embedded services
 *     (docs/operations.md). Every child also stops by itself when this
 *     process is gone, even after SIGKILL (./exit-with-parent.mjs).
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { accessSync, constants, mkdirSync } from 'node:fs'
import path from 'node:path'
import { loadConfig } from '@/config/env'
import { canListen, portRefusal } from '@/config/listen-port'
import { captureConsole, createLogger } from '@/config/logger'
import { metricsPort } from '@/config/metrics-endpoint'
import { STOP_SIGNALS } from '@/config/stop-signals'
import { describeDatabaseError, migrate } from '@/db/migrate'
import { buildIndexer } from '@/indexer/bundle'
import { afterExit } from './after-exit'
import { AuthSecretFileError, ensureAuthSecret, refuseMissingAuthSecret } from './auth-secret'
import { EXIT_WITH_PARENT } from './exit-with-parent'
import { ensurePortalBuild } from './portal-build'
import { resetChainData } from './reset-chain-data'

const ROOT = path.resolve(import.meta.dirname, '../..')
const config = loadConfig()
// A configuration refusal starts nothing: checked before the ports, the devnet, the database.
refuseMissingAuthSecret(config)
const logger = createLogger({ level: config.LOG_LEVEL, name: 'start' })
// What libraries print with console becomes log records too (docs/operations.md, "Logs").
captureConsole(logger)
const dev = config.NODE_ENV === 'development'
const dataDir = path.resolve(ROOT, config.DATA_DIR)
const dataDirUnusable = dataDirRefusal(dataDir)
if (dataDirUnusable) refuse(dataDirUnusable)
const authSecret = authSecretOrRefuse()

const childEnv: NodeJS.ProcessEnv = {
  ...process.env,
  DATA_DIR: dataDir,
  NODE_ENV: dev ? 'development' : 'production',
  NEXT_TELEMETRY_DISABLED: '1',
  // The web process sees the devnet's RPC_URL like any node's: this tells it the chain is
  // the embedded devnet, whose development wallet the portal may offer (docs/portal.md).
  NFT_EMBEDDED_DEVNET: config.embeddedChain ? '1' : '0',
  AUTH_SECRET: authSecret,
}
const stops: (() => Promise<void>)[] = []
/** The embedded devnet created a new chain: data indexed from the old one is void. */
let chainRecreated = false
let stopping = false

async function startEmbeddedServices() {
  if (config.embeddedDatabase) {
    const { startEmbeddedPostgres } = await import('@/dev/postgres')
    const pg = await startEmbeddedPostgres({ dataDir: path.join(dataDir, 'pg') })
    stops.unshift(pg.stop)
    childEnv.DATABASE_URL = pg.url
    logger.info({ dataDir: path.join(dataDir, 'pg') }, 'embedded PostgreSQL (PGlite) ready')
  }
  if (config.embeddedChain) {
    const { startDevnet } = await import('@/dev/devnet/index')
    const devnet = await startDevnet({
      dataDir,
      chainId: config.CHAIN_ID,
      logger,
    })
    stops.unshift(devnet.stop)
    childEnv.RPC_URL = devnet.rpcUrl
    // With RPC_URL set the children would take the chain for a real one (12 confirmations).
    childEnv.CONFIRMATIONS = String(config.CONFIRMATIONS)
    chainRecreated = devnet.fresh
    // Without its chain the service cannot work: anvil's exit stops it (a crash is logged by the devnet).
    const { ANVIL_STOPPED_STATUSES } = await import('@/dev/devnet/anvil')
    devnet.exited.then((code) => {
      if (stopping) return
      logger.info({ code }, 'devnet anvil exited; stopping the service')
      void shutdown(ANVIL_STOPPED_STATUSES.includes(code) ? 0 : 1)
    })
    // The devnet's metadata helper lives on loopback; allow exactly that host.
    const allow = [...config.FETCH_ALLOW_HOSTS, new URL(devnet.metadataOrigin).host]
    childEnv.FETCH_ALLOW_HOSTS = allow.join(',')
    logger.info(
      { rpcUrl: devnet.rpcUrl, collections: devnet.collections.length, fresh: devnet.fresh },
      'embedded anvil devnet ready',
    )
  }
}

interface Supervised {
  name: string
  child?: ChildProcess
  restarts: number
}

/** Runs `node <args>` as the named process, restarting it when it crashes. */
function supervise(name: string, args: string[]): Supervised {
  const proc: Supervised = { name, restarts: 0 }
  const run = () => {
    const startedAt = Date.now()
    const child = spawn(process.execPath, ['--import', EXIT_WITH_PARENT, ...args], {
      cwd: ROOT,
      env: { ...childEnv, NFT_PARENT_PID: String(process.pid) },
      stdio: 'inherit',
    })
    proc.child = child
    // `child`, not `proc`: this log's own `proc` is the orchestrator's.
    child.on('exit', (code, signal) => {
      proc.child = undefined
      if (stopping) return
      const next = afterExit({ code, signal, ranMs: Date.now() - startedAt }, proc.restarts)
      if (next.action === 'stop') {
        // Someone stopped this child (SIGINT, SIGTERM, SIGHUP): they mean the service.
        logger.info({ child: name, code, signal }, `${name} stopped; stopping the service`)
        void shutdown(0)
      } else if (next.action === 'refuse') {
        logger.fatal({ child: name, code }, `${name} refused to start; stopping`)
        void shutdown(1)
      } else {
        proc.restarts = next.restarts
        logger.error({ child: name, code, signal, restartInMs: next.delayMs }, `${name} exited; restarting`)
        setTimeout(() => !stopping && run(), next.delayMs).unref()
      }
    })
  }
  run()
  return proc
}

const processes: Supervised[] = []

async function shutdown(exitCode: number) {
  if (stopping) return
  stopping = true
  logger.info('stopping')
  const exits = processes.map(
    (p) =>
      new Promise<void>((resolve) => {
        const child = p.child
        if (!child || child.exitCode !== null) return resolve()
        const kill = setTimeout(() => child.kill('SIGKILL'), 10_000)
        child.once('exit', () => {
          clearTimeout(kill)
          resolve()
        })
        child.kill('SIGTERM')
      }),
  )
  await Promise.all(exits)
  for (const stop of stops) await stop().catch((err) => logger.error({ err }, 'stop failed'))
  logger.info('stopped')
  process.exit(exitCode)
}

for (const signal of STOP_SIGNALS) process.on(signal, () => void shutdown(0))

/** A configuration refusal: one fatal line, exit code 2 (which nothing restarts). */
function refuse(line: string): never {
  logger.fatal(line)
  process.exit(2)
}

/**
 * DATA_DIR is created if need be and must be writable (the embedded database, the devnet's
 * chain, the generated AUTH_SECRET and the pid files live there): the one line of a refusal
 * names the variable, the directory and the error code, with no stack trace.
 */
function dataDirRefusal(dir: string): string | undefined {
  try {
    mkdirSync(dir, { recursive: true })
    accessSync(dir, constants.W_OK | constants.X_OK)
    return undefined
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    if (typeof code !== 'string') throw err
    return `Invalid configuration: DATA_DIR ${dir} cannot be used: ${code}`
  }
}

function authSecretOrRefuse(): string {
  try {
    return ensureAuthSecret(config, dataDir, (message) => logger.warn(message))
  } catch (err) {
    if (err instanceof AuthSecretFileError) refuse(err.message)
    throw err
  }
}

/** A file error inside DATA_DIR (the embedded database's pid file, the devnet's chain): DATA_DIR's refusal. */
function dataDirFileRefusal(err: unknown): string | undefined {
  const { code, path: file } = err as NodeJS.ErrnoException
  if (typeof code !== 'string' || typeof file !== 'string') return undefined
  const relative = path.relative(dataDir, path.resolve(file))
  if (relative.startsWith('..') || path.isAbsolute(relative)) return undefined
  return `Invalid configuration: DATA_DIR ${dataDir} cannot be used: ${code} (${file})`
}

/**
 * One line for a database the migrations could not run on: which one (DATABASE_URL as
 * scheme://host:port, never its password, or the embedded one), and the error's code and
 * message (describeDatabaseError).
 */
function databaseFailure(url: string, err: unknown): string {
  const which = config.embeddedDatabase
    ? `the embedded database (${path.join(dataDir, 'pg')})`
    : `the database at DATABASE_URL (${databaseAddress(url)})`
  let reason = describeDatabaseError(err)
  if (!config.embeddedDatabase && URL.canParse(url)) {
    const { password } = new URL(url)
    for (const secret of [password, safeDecode(password)])
      if (secret) reason = reason.replaceAll(secret, '***')
  }
  return `cannot migrate ${which}: ${reason}`
}

function databaseAddress(url: string): string {
  if (!URL.canParse(url)) return 'the value is not shown'
  const { protocol, hostname, port } = new URL(url)
  return `${protocol}//${hostname}:${port || '5432'}`
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value)
  } catch {
    return value
  }
}

/** Start-up stopped by a known cause: its one line, no stack trace. */
class StartupFailure extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message)
  }
}

/**
 * A port another program holds stops the start before anything runs, as the web process
 * would after the devnet, migrations and the portal build (docs/operations.md, "Ports").
 */
async function refuseTakenPorts() {
  const ports: [string, number | undefined, string | undefined][] = [
    ['PORT', config.PORT, undefined],
    ['METRICS_PORT', metricsPort(config, 'web'), config.METRICS_HOST],
    ['METRICS_PORT', metricsPort(config, 'indexer'), config.METRICS_HOST],
  ]
  for (const [variable, port, host] of ports) {
    if (port === undefined) continue
    const err = await canListen(port, host)
    const refusal = err && portRefusal(err, port, variable)
    if (refusal) refuse(refusal)
  }
}

try {
  await refuseTakenPorts()
  await startEmbeddedServices()
  const databaseUrl = childEnv.DATABASE_URL!
  const { applied } = await migrate(databaseUrl, { logger }).catch((err: unknown) => {
    // The stack stays available at debug level; the operator's line is the fatal one.
    logger.debug({ err }, 'migrations failed')
    throw new StartupFailure(databaseFailure(databaseUrl, err), 1)
  })
  if (applied.length > 0) logger.info({ applied }, 'migrations applied')
  if (chainRecreated) {
    await resetChainData(childEnv.DATABASE_URL!)
    logger.info('devnet chain is new: cleared data indexed from the previous chain')
  }
  if (!dev) await ensurePortalBuild(ROOT, logger)
  if (stopping) process.exit(0)
  const indexer = await buildIndexer(ROOT)
  if (stopping) process.exit(0)
  processes.push(supervise('indexer', indexer))
  processes.push(supervise('web', ['--import', 'tsx', path.join(ROOT, 'src/server/main.ts')]))
  logger.info({ url: config.PUBLIC_URL }, 'service starting')
} catch (err) {
  const dataDirLine = dataDirFileRefusal(err)
  if (err instanceof StartupFailure) {
    logger.fatal(err.message)
    await shutdown(err.exitCode)
  } else if (dataDirLine) {
    logger.debug({ err }, 'start-up failed')
    logger.fatal(dataDirLine)
    await shutdown(2)
  } else {
    logger.fatal({ err }, 'start-up failed')
    await shutdown(1)
  }
}
