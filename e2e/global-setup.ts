/**
 * Starts the service exactly as a user would (`npm start`'s entry point) with
 * its own data directory and — when DATABASE_URL points at a real server — its
 * own freshly created database, and stops it after the run.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { createWriteStream, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { createScratchDatabase } from '../src/test/scratch-database'

const ROOT = path.resolve(import.meta.dirname, '..')
const STARTUP_TIMEOUT_MS = 6 * 60_000

async function waitForOk(url: string, child: ChildProcess, deadline: number) {
  while (Date.now() < deadline) {
    if (child.exitCode !== null)
      throw new Error(`the service exited with code ${child.exitCode} during start-up`)
    try {
      // A probe that hangs (a busy machine) must not stall the whole wait.
      const res = await fetch(url, { signal: AbortSignal.timeout(15_000) })
      if (res.ok) return
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 500))
  }
  throw new Error(`${url} did not answer within ${STARTUP_TIMEOUT_MS / 1000} s`)
}

export default async function globalSetup() {
  const port = process.env.E2E_PORT!
  const dataDir = mkdtempSync(path.join(tmpdir(), 'nft-e2e-'))
  const database = process.env.DATABASE_URL
    ? await createScratchDatabase(process.env.DATABASE_URL, 'nft_e2e')
    : undefined
  // bench/explorer-pages.ts starts the same service with a folder of its own.
  const artifacts = process.env.E2E_ARTIFACTS ?? path.join(ROOT, 'e2e', 'artifacts')
  mkdirSync(artifacts, { recursive: true })
  const log = createWriteStream(path.join(artifacts, 'service.log'))
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: port,
    DATA_DIR: dataDir,
    LOG_LEVEL: process.env.E2E_LOG_LEVEL ?? 'info',
    AUTH_SECRET: randomBytes(32).toString('hex'),
    // The receiver of e2e/webhooks.spec.ts, on loopback: allow-listed as an operator would.
    WEBHOOK_ALLOW_HOSTS: `127.0.0.1:${process.env.E2E_WEBHOOK_PORT}`,
    // Every test's browser comes from 127.0.0.1, like many visitors behind one address: the
    // per-address limits of demo traffic are raised so that tests do not wait on each other's
    // budget. Each demo token keeps the specification's own limits (1/s, 30/min), which the
    // explorer's pacing is tested against.
    RATE_LIMIT_IP_DEMO: 'sec=50,min=3000,concurrent=20',
    RATE_LIMIT_DEMO_ISSUE: 'min=100',
  }
  delete env.RPC_URL
  if (database) env.DATABASE_URL = database.url
  else delete env.DATABASE_URL

  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'src/start/main.ts')], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  child.stdout?.pipe(log)
  child.stderr?.pipe(log)
  process.env.E2E_SERVICE_LOG = path.join(artifacts, 'service.log')

  const stop = async () => {
    if (child.exitCode === null) {
      const exited = new Promise((r) => child.once('exit', r))
      child.kill('SIGTERM')
      await Promise.race([exited, new Promise((r) => setTimeout(r, 20_000))])
      if (child.exitCode === null) child.kill('SIGKILL')
    }
    await database?.drop()
    rmSync(dataDir, { recursive: true, force: true })
  }

  const deadline = Date.now() + STARTUP_TIMEOUT_MS
  try {
    await waitForOk(`http://127.0.0.1:${port}/healthz`, child, deadline)
    await waitForOk(`http://127.0.0.1:${port}/`, child, deadline)
  } catch (err) {
    // Never leave a half-started service behind; the log says why it failed.
    await stop()
    throw new Error(`${(err as Error).message}; see ${process.env.E2E_SERVICE_LOG}`)
  }
  return stop
}
