/**
 * The web server as a child process (`src/server/main.ts`, API only), the way
 * `npm start` runs it: for tests of several processes sharing one database
 * and one Redis. Resolves once /healthz answers and a few warm-up requests
 * (JIT, Redis scripts, Prisma) are done, so timing-sensitive tests do not pay
 * for a cold process.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { generateApiKeySecret } from '@/server/credentials/secrets'
import { freePort } from './free-port'
import { get } from './serve-api'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const STATUS = '/v1/indexer/status'
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

export interface WebProcess {
  name: string
  base: string
  /** Everything it wrote to stdout and stderr. */
  logs: string[]
  child: ChildProcess
  /** SIGTERM, then waits for the exit. */
  stop(): Promise<void>
}

/** `env` comes on top of this process's environment and the defaults (trace logs, devnet, one proxy hop). */
export async function startWebProcess(name: string, env: Record<string, string>): Promise<WebProcess> {
  const port = await freePort()
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', path.join('src', 'server', 'main.ts'), '--api-only'],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        LOG_LEVEL: 'trace',
        NETWORK: 'devnet',
        TRUST_PROXY: '1',
        ...env,
        PORT: String(port),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  )
  const logs: string[] = []
  child.stdout!.on('data', (chunk: Buffer) => logs.push(chunk.toString('utf8')))
  child.stderr!.on('data', (chunk: Buffer) => logs.push(chunk.toString('utf8')))
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const base = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 60_000
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited: ${logs.join('')}`)
    const ok = await fetch(`${base}/healthz`).then(
      (r) => r.ok,
      () => false,
    )
    if (ok) break
    if (Date.now() > deadline) throw new Error(`${name} did not start: ${logs.join('')}`)
    await sleep(200)
  }
  // Warm up from a documentation address.
  for (const [p, credential] of [
    ['/v1/warm-up', undefined],
    [STATUS, undefined],
    [STATUS, generateApiKeySecret().secret],
  ] as const) {
    await (await get(base, p, { credential, ip: '192.0.2.254' })).arrayBuffer()
  }
  return {
    name,
    base,
    logs,
    child,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM')
      await exited
    },
  }
}
