/**
 * `npm start` as a user runs it: embedded devnet (and embedded PGlite when no
 * DATABASE_URL is set), migrations, indexer and web process. Ctrl-C — SIGINT
 * to the whole foreground process group — must stop every child, and a second
 * start on the same data directory must work. SIGTERM to npm or to any process
 * of the tree stops the whole tree, and the children stop by themselves when
 * the orchestrator is killed outright (docs/operations.md).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import net from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort } from '@/test/free-port'

const ROOT = path.resolve(import.meta.dirname, '../..')

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

interface ProcessEntry {
  ppid: number
  state: string
  cmd: string
}

/** Every process of this machine (Linux /proc): parent, state and command line. */
function processTable(): Map<number, ProcessEntry> {
  const table = new Map<number, ProcessEntry>()
  for (const name of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(name)) continue
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8')
      // The command name may hold spaces and parentheses: fields start after the last ')'.
      const [state = '?', ppid = '0'] = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      const cmd = readFileSync(`/proc/${name}/cmdline`, 'utf8').replaceAll('\0', ' ').trim()
      table.set(Number(name), { ppid: Number(ppid), state, cmd })
    } catch {
      // Gone while reading.
    }
  }
  return table
}

/** The process and all its descendants, with their command lines. */
function processTree(root: number): Map<number, string> {
  const table = processTable()
  const tree = new Map<number, string>()
  const queue = [root]
  while (queue.length > 0) {
    const pid = queue.shift()!
    const entry = table.get(pid)
    if (!entry || tree.has(pid)) continue
    tree.set(pid, entry.cmd)
    for (const [child, e] of table) if (e.ppid === pid) queue.push(child)
  }
  return tree
}

/** Those of `pids` still running (a zombie has exited; only its parent has not looked yet). */
function running(pids: Iterable<number>): number[] {
  const table = processTable()
  return [...pids].filter((pid) => {
    const entry = table.get(pid)
    return entry !== undefined && entry.state !== 'Z'
  })
}

/** The pid of the one process of `tree` whose command line matches. */
function pidOf(tree: Map<number, string>, pattern: RegExp): number {
  const found = [...tree].filter(([, cmd]) => pattern.test(cmd))
  if (found.length !== 1) throw new Error(`expected one process like ${pattern}, found ${found.length}`)
  return found[0]![0]
}

const ORCHESTRATOR = /src\/start\/main\.ts/
const INDEXER = /\.build\/indexer\.mjs/
const WEB = /src\/server\/main\.ts/
const ANVIL = /^\S*\/anvil\s/

/** Every process of `tree` has exited within `ms`; the test fails naming those left. */
async function expectAllGone(tree: Map<number, string>, ms: number, context: () => string) {
  const deadline = Date.now() + ms
  let left = running(tree.keys())
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100))
    left = running(tree.keys())
  }
  expect(
    left.map((pid) => `${pid} ${tree.get(pid)}`),
    `still running ${ms / 1000} s later\n${context()}`,
  ).toEqual([])
}

/** SIGKILL to each process of `tree` still running. */
function killAll(tree: Map<number, string>) {
  for (const pid of running(tree.keys())) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {
      // Exited meanwhile.
    }
  }
}

/** pino lines at level error (50) or fatal (60). */
function errorLines(output: string): string[] {
  return output.split('\n').filter((line) => /"level":(50|60)\b/.test(line))
}

function start(env: Record<string, string | undefined>, command: 'node' | 'npm' = 'node'): Running {
  let output = ''
  const [file, args]: [string, string[]] =
    command === 'npm'
      ? ['npm', ['start']]
      : [process.execPath, ['--import', 'tsx', path.join(ROOT, 'src/start/main.ts')]]
  const child = spawn(file, args, {
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
  let isolated: Awaited<ReturnType<typeof isolatedEnv>> | undefined

  afterAll(async () => {
    await isolated?.dispose()
  })

  it('starts everything, stops every child on Ctrl-C, and starts again on the same data', async () => {
    isolated = await isolatedEnv()
    const { env } = isolated

    let lastHead = 0n
    for (const round of [1, 2]) {
      const port = await freePort()
      const base = `http://127.0.0.1:${port}`
      const run = start({ ...env, PORT: String(port) })
      let tree = new Map<number, string>()
      let outputBefore = 0
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
        tree = processTree(run.child.pid!)
        outputBefore = run.output().length
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
      // Also those outside the process group (the devnet runs in a session of its own).
      await expectAllGone(tree, 10_000, () => run.output().slice(-3000))
      // A normal shutdown is not an error.
      expect(errorLines(run.output().slice(outputBefore))).toEqual([])
    }
  }, 600_000)
})

/**
 * A user's shell (no RPC_URL, no NODE_ENV) on a data directory of its own and, when
 * DATABASE_URL points at a server (CI), a database of its own.
 */
async function isolatedEnv(): Promise<{
  env: Record<string, string | undefined>
  dispose(): Promise<void>
}> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'nft-start-'))
  const adminUrl = process.env.DATABASE_URL
  const dbName = `nft_start_${randomBytes(4).toString('hex')}`
  const { RPC_URL: _rpc, NODE_ENV: _mode, ...inherited } = process.env
  const env: Record<string, string | undefined> = {
    ...inherited,
    DATA_DIR: dataDir,
    LOG_LEVEL: 'info',
    PORT: String(await freePort()),
  }
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
  return {
    env,
    async dispose() {
      rmSync(dataDir, { recursive: true, force: true })
      if (adminUrl) {
        const client = new pg.Client({ connectionString: adminUrl })
        await client.connect()
        await client.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`)
        await client.end()
      }
    },
  }
}

/** Waits until the service answers and the indexer has written a confirmed block. */
async function serving(run: Running, base: string): Promise<void> {
  try {
    await waitFor(
      'the web server',
      async () => ((await fetch(`${base}/healthz`)).ok ? true : undefined),
      240_000,
    )
    await waitFor(
      'the indexer to confirm a block',
      async () => {
        const html = await (await fetch(`${base}/`)).text()
        const confirmed = /data-testid="last-confirmed-block">(\d+)</.exec(html)
        return confirmed && BigInt(confirmed[1]!) > 0n ? true : undefined
      },
      120_000,
    )
  } catch (err) {
    throw new Error(`${(err as Error).message}\n--- output ---\n${run.output().slice(-4000)}`)
  }
}

/** The status line and body of one request written byte for byte. */
async function rawRequest(port: number, request: string): Promise<{ status: number; body: string }> {
  const response = await new Promise<string>((resolve, reject) => {
    let data = ''
    const socket = net.connect(port, '127.0.0.1', () => socket.write(request))
    socket.setEncoding('utf8')
    socket.on('data', (d) => (data += d))
    socket.once('end', () => resolve(data))
    socket.once('error', reject)
    socket.setTimeout(15_000, () => socket.destroy(new Error('no answer')))
  })
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(response)?.[1] ?? 0)
  return { status, body: response.slice(response.indexOf('\r\n\r\n') + 4) }
}

describe('`npm start` under signals', () => {
  let isolated: Awaited<ReturnType<typeof isolatedEnv>>
  let run: Running
  let base: string
  let port: number
  let tree = new Map<number, string>()

  beforeAll(async () => {
    isolated = await isolatedEnv()
    port = Number(isolated.env.PORT)
    base = `http://127.0.0.1:${port}`
    // npm itself, as an operator runs it: `kill -TERM <pid of npm start>` must reach the service.
    run = start(isolated.env, 'npm')
    await serving(run, base)
    tree = processTree(run.child.pid!)
  }, 420_000)

  afterAll(async () => {
    // Whatever a failed test left behind, orphans included.
    if (run) killAll(new Map([...tree, ...processTree(run.child.pid!)]))
    await isolated?.dispose()
  })

  it('confirms at the embedded devnet depth (2 blocks), in the indexer and on the pages', async () => {
    const html = await (await fetch(`${base}/`)).text()
    expect(html).toContain('A block counts as confirmed 2 blocks below the head')
    // The confirmed block is CONFIRMATIONS below the head once verification has caught up
    // (a block is confirmed only when verified, which a loaded machine may delay a little):
    // the distance is never below 2 and is exactly 2 when verification is current.
    const lags: bigint[] = []
    for (let i = 0; i < 8; i++) {
      const page = await (await fetch(`${base}/`)).text()
      const seen = /data-testid="last-seen-block">(\d+)</.exec(page)
      const confirmed = /data-testid="last-confirmed-block">(\d+)</.exec(page)
      lags.push(BigInt(seen![1]!) - BigInt(confirmed![1]!))
      await new Promise((r) => setTimeout(r, 700))
    }
    expect(lags.every((lag) => lag >= 2n && lag < 12n)).toBe(true)
    expect(lags).toContain(2n)
  })

  it('answers malformed or hostile portal requests with a 4xx, never a 500', async () => {
    const outputBefore = run.output().length
    // Request-target `*` (asterisk-form) is for OPTIONS to a proxy; here it is a client error.
    const star = await rawRequest(port, 'GET * HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n')
    expect(star.status).toBe(400)
    expect(JSON.parse(star.body)).toMatchObject({ error: { code: 'INVALID_ARGUMENT' } })

    // Names an object inherits are not assets, not procedures.
    for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
      expect((await fetch(`${base}/docs/assets/${name}`)).status, `/docs/assets/${name}`).toBe(404)
      const trpc = await fetch(`${base}/api/trpc/${name}`)
      expect(trpc.status, `/api/trpc/${name}`).toBe(404)
    }
    expect((await fetch(`${base}/docs/assets/swagger-ui.css`)).status).toBe(200)

    // Sign-out with a callbackUrl on a host that only looks like ours.
    const publicOrigin = `http://localhost:${port}`
    for (const callbackUrl of [
      `http://localhost:${port}.evil.example/portal`,
      `http://localhost:${port}@evil.example/portal`,
      `http://lоcalhost:${port}/portal`, // Cyrillic о
      `http://[localhost:${port}/portal`,
      `//evil.example/portal`,
    ]) {
      const csrf = await fetch(`${base}/api/auth/csrf`)
      const { csrfToken } = (await csrf.json()) as { csrfToken: string }
      const cookie = csrf.headers
        .getSetCookie()
        .map((c) => c.split(';')[0])
        .join('; ')
      const res = await fetch(`${base}/api/auth/signout`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', Cookie: cookie },
        body: new URLSearchParams({ csrfToken, callbackUrl }).toString(),
      })
      expect(res.status, callbackUrl).toBeLessThan(500)
      expect(res.status, callbackUrl).toBeGreaterThanOrEqual(300)
      if (res.status < 400) {
        const location = new URL(res.headers.get('location')!, publicOrigin)
        expect(location.origin, callbackUrl).toBe(publicOrigin)
      }
    }
    expect(errorLines(run.output().slice(outputBefore)), 'nothing above logged as an error').toEqual([])
  })

  it('stops every process of the tree within 10 s of SIGTERM to npm, logging no error', async () => {
    tree = processTree(run.child.pid!)
    const commands = [...tree.values()]
    for (const proc of [ORCHESTRATOR, INDEXER, WEB, ANVIL]) {
      expect(
        commands.some((cmd) => proc.test(cmd)),
        `${proc} in ${commands.join('\n')}`,
      ).toBe(true)
    }
    const outputBefore = run.output().length
    process.kill(run.child.pid!, 'SIGTERM')
    await expectAllGone(tree, 10_000, () => run.output().slice(-3000))
    expect(errorLines(run.output().slice(outputBefore))).toEqual([])
  }, 30_000)
})

describe('a signal to one process of the tree stops them all', () => {
  // Representatives: a supervised node child, the devnet (not node, in its own session),
  // and the orchestrator killed outright (the children must notice by themselves).
  for (const [target, pattern, signal] of [
    ['the indexer', INDEXER, 'SIGTERM'],
    ['anvil', ANVIL, 'SIGINT'],
    ['the orchestrator', ORCHESTRATOR, 'SIGKILL'],
  ] as const) {
    it(`${signal} to ${target}`, async () => {
      const isolated = await isolatedEnv()
      const run = start(isolated.env)
      let tree = new Map<number, string>()
      try {
        await serving(run, `http://127.0.0.1:${isolated.env.PORT}`)
        tree = processTree(run.child.pid!)
        const outputBefore = run.output().length
        process.kill(pidOf(tree, pattern), signal)
        await expectAllGone(tree, 10_000, () => run.output().slice(-3000))
        if (signal !== 'SIGKILL') expect(errorLines(run.output().slice(outputBefore))).toEqual([])
      } finally {
        killAll(new Map([...tree, ...processTree(run.child.pid!)]))
        await isolated.dispose()
      }
    }, 420_000)
  }
})
