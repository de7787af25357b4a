/**
 * `npm start` as a user runs it: embedded devnet (and embedded PGlite when no
 * DATABASE_URL is set), migrations, indexer and web process. Ctrl-C — SIGINT
 * to the whole foreground process group — must stop every child, and a second
 * start on the same data directory must work.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import pg from 'pg'
import { afterAll, describe, expect, it } from 'vitest'

const ROOT = path.resolve(import.meta.dirname, '../..')

function freePort(): number {
  return 20_000 + Math.floor(Math.random() * 20_000)
}

function groupMembers(pgid: number): number[] {
  try {
    return execFileSync('ps', ['-o', 'pid=', '-g', String(pgid)], { encoding: 'utf8' })
      .split('\n')
      .map((l) => Number(l.trim()))
      .filter((n) => n > 0)
  } catch {
    return [] // ps exits non-zero when the group is empty
  }
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    const value = await probe().catch(() => undefined)
    if (value !== undefined) return value
    await new Promise((r) => setTimeout(r, 500))
  }
  throw new Error(`timed out waiting for ${what}`)
}

interface Running {
  child: ChildProcess
  output: () => string
  exited: Promise<number | null>
}

function start(env: Record<string, string | undefined>): Running {
  let output = ''
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'src/start/main.ts')], {
    cwd: ROOT,
    env: env as NodeJS.ProcessEnv,
    detached: true, // its own process group, like a terminal's foreground job
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  child.stdout?.on('data', (d) => (output += d))
  child.stderr?.on('data', (d) => (output += d))
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  return { child, output: () => output, exited }
}

/** The chain head as the home page shows it (the page needs no credential). */
async function headBlock(base: string): Promise<bigint | undefined> {
  const res = await fetch(`${base}/`)
  if (!res.ok) return undefined
  const match = /data-testid="last-seen-block">(\d+)</.exec(await res.text())
  return match ? BigInt(match[1]!) : undefined
}

describe('npm start', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'nft-start-'))
  const dbName = `nft_start_${randomBytes(4).toString('hex')}`
  const adminUrl = process.env.DATABASE_URL

  afterAll(async () => {
    rmSync(dataDir, { recursive: true, force: true })
    if (adminUrl) {
      const client = new pg.Client({ connectionString: adminUrl })
      await client.connect()
      await client.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`)
      await client.end()
    }
  })

  it('starts everything, stops every child on Ctrl-C, and starts again on the same data', async () => {
    // A user's shell: no RPC_URL (embedded devnet) and no NODE_ENV.
    const { RPC_URL: _rpc, NODE_ENV: _mode, ...inherited } = process.env
    const env: Record<string, string | undefined> = { ...inherited, DATA_DIR: dataDir, LOG_LEVEL: 'info' }
    if (adminUrl) {
      const client = new pg.Client({ connectionString: adminUrl })
      await client.connect()
      await client.query(`CREATE DATABASE ${dbName}`)
      await client.end()
      const url = new URL(adminUrl)
      url.pathname = `/${dbName}`
      env.DATABASE_URL = url.toString()
      env.AUTH_SECRET = randomBytes(32).toString('hex')
    } else {
      delete env.DATABASE_URL
    }

    let lastHead = 0n
    for (const round of [1, 2]) {
      const port = freePort()
      const base = `http://127.0.0.1:${port}`
      const run = start({ ...env, PORT: String(port) })
      try {
        await waitFor(
          'the web server',
          async () => ((await fetch(`${base}/healthz`)).ok ? true : undefined),
          240_000,
        )
        expect((await fetch(`${base}/`)).status).toBe(200)
        expect((await fetch(`${base}/openapi.json`)).status).toBe(200)
        // The indexer follows the devnet: the head advances past what the last round saw.
        const head = await waitFor(
          'the indexer to see new blocks',
          async () => {
            const h = await headBlock(base)
            return h !== undefined && h > lastHead ? h : undefined
          },
          120_000,
        )
        lastHead = head
      } catch (err) {
        throw new Error(
          `round ${round}: ${(err as Error).message}\n--- output ---\n${run.output().slice(-4000)}`,
        )
      } finally {
        // Ctrl-C: the terminal signals the whole foreground process group.
        if (run.child.exitCode === null) process.kill(-run.child.pid!, 'SIGINT')
      }
      const code = await Promise.race([
        run.exited,
        new Promise((r) => setTimeout(() => r('timeout'), 30_000)),
      ])
      expect(code, run.output().slice(-3000)).toBe(0)
      await waitFor(
        'every child to exit',
        async () => (groupMembers(run.child.pid!).length === 0 ? true : undefined),
        15_000,
      )
    }
  }, 600_000)
})
