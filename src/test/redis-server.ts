/**
 * A private redis-server for one test file (never the shared one on 6379):
 * free port, no persistence, stoppable and restartable on the same port to
 * simulate a limiter outage.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import net from 'node:net'
import { freePort } from './free-port'

export interface TestRedis {
  url: string
  port: number
  /** Stops the server (SIGKILL: as abrupt as an outage gets) and waits for it to be gone. */
  stop(): Promise<void>
  /** Starts it again on the same port (empty: no persistence). */
  start(): Promise<void>
  /** SIGSTOP: the server keeps its connections and reads nothing, as a hung Redis does. */
  freeze(): void
  /** SIGCONT: it carries on with what its clients sent meanwhile. */
  thaw(): void
}

/** Resolves once the server accepts connections; rejects if it exits first (e.g. the port is taken). */
async function waitForPort(port: number, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`redis-server exited (code ${child.exitCode}) before listening on ${port}`)
    }
    // A PONG, not just a connection: whoever else may hold the port is not this server.
    const ok = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => socket.write('PING\r\n'))
      socket.setTimeout(1000, () => socket.destroy())
      socket.once('data', (data) => {
        socket.destroy()
        resolve(data.toString().startsWith('+PONG'))
      })
      socket.once('close', () => resolve(false))
      socket.once('error', () => resolve(false))
    })
    if (ok && child.exitCode === null && child.signalCode === null) return
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error(`redis-server did not listen on ${port}`)
}

/** SIGKILL (as abrupt as an outage gets), then wait until it is gone. */
async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  child.kill('SIGKILL')
  await exited
}

export async function startTestRedis(): Promise<TestRedis> {
  const port = await freePort()
  let child: ChildProcess | undefined
  const start = async () => {
    // Already running: a second server would fail to bind, and the first would be lost track of.
    if (child && child.exitCode === null && child.signalCode === null) return
    const started = spawn(
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
    child = started
    try {
      await waitForPort(port, started, 10_000)
    } catch (err) {
      await kill(started)
      throw err
    }
  }
  const stop = async () => {
    const c = child
    child = undefined
    if (c) await kill(c)
  }
  // A worker that exits without afterAll (a crash, a timeout) still takes its server along.
  process.once('exit', () => child?.kill('SIGKILL'))
  await start()
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    stop,
    start,
    freeze: () => child?.kill('SIGSTOP'),
    thaw: () => child?.kill('SIGCONT'),
  }
}
