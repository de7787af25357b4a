/**
 * A private redis-server for one test file (never the shared one on 6379):
 * free port, no persistence, stoppable and restartable on the same port to
 * simulate a limiter outage.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import net from 'node:net'

export interface TestRedis {
  url: string
  port: number
  /** Stops the server (SIGKILL: as abrupt as an outage gets) and waits for it to be gone. */
  stop(): Promise<void>
  /** Starts it again on the same port (empty: no persistence). */
  start(): Promise<void>
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo
      server.close(() => resolve(port))
    })
  })
}

async function waitForPort(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1')
      socket.once('connect', () => {
        socket.end()
        resolve(true)
      })
      socket.once('error', () => resolve(false))
    })
    if (ok) return
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error(`redis-server did not listen on ${port}`)
}

export async function startTestRedis(): Promise<TestRedis> {
  const port = await freePort()
  let child: ChildProcess | undefined
  const start = async () => {
    child = spawn(
      'redis-server',
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        '--loglevel',
        'warning',
      ],
      { stdio: 'ignore' },
    )
    await waitForPort(port, 10_000)
  }
  const stop = async () => {
    const c = child
    child = undefined
    if (!c || c.exitCode !== null) return
    const exited = new Promise<void>((resolve) => c.once('exit', () => resolve()))
    c.kill('SIGKILL')
    await exited
  }
  await start()
  process.once('exit', () => child?.kill('SIGKILL'))
  return { url: `redis://127.0.0.1:${port}`, port, stop, start }
}
