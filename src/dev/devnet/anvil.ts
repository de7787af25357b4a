/**
 * Runs the anvil binary that npm installs with @foundry-rs/anvil. Automine is the default
 * (deterministic chains for tests); `blockTime` turns on interval mining.
 *
 * anvil is started under a tiny POSIX sh guard that holds a pipe from this process: when the
 * pipe closes — stop(), a crash, even SIGKILL of this process — the guard sends anvil SIGTERM,
 * so anvil saves its state and no orphan is left behind. A signal to the guard itself is passed
 * on to anvil the same way. The guard runs in a session of its own, so a terminal's Ctrl-C
 * (SIGINT to the whole foreground process group) does not reach anvil: the process that
 * started it stops it, in order, after whatever still uses the chain.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'

export type AnvilOptions = {
  /** 0 or undefined: anvil picks a free port. */
  port?: number
  /** Default 31337. */
  chainId?: number
  /** Seconds between blocks (interval mining). Undefined or 0: automine, one block per transaction. */
  blockTime?: number
  /** Load the chain from this file if it exists, and save it there periodically and on stop. */
  stateFile?: string
  /** Seconds between state saves when stateFile is set; default 5. */
  stateIntervalSeconds?: number
  /** Default 127.0.0.1. */
  host?: string
  /** How long to wait for the RPC to answer; default 30 s. */
  startTimeoutMs?: number
}

export type AnvilInstance = {
  rpcUrl: string
  port: number
  /** Process id of anvil itself. */
  pid: number
  /** Settles when anvil has exited, for whatever reason; resolves with its exit code. */
  exited: Promise<number | null>
  stop(): Promise<void>
}

const require = createRequire(import.meta.url)
const STOP_TIMEOUT_MS = 15_000

// $1.. is the anvil command line. fd 3 keeps our pipe; anvil gets neither stdin nor fd 3.
// A trapped signal interrupts `wait`: the loop waits on until anvil has really exited.
// SIGTERM is sent again every second until anvil is gone: anvil installs its signal handler
// before it listens for the signal, and one that arrives in between (right after start-up,
// under load) is lost; a further SIGTERM while it shuts down changes nothing.
const GUARD_SCRIPT = `
exec 3<&0
"$@" </dev/null 3<&- &
anvil=$!
echo "anvil-pid $anvil"
stop_anvil() { while kill -TERM "$anvil" 2>/dev/null; do sleep 1; done; }
trap 'stop_anvil </dev/null >/dev/null 2>&1 &' HUP INT TERM
{ while read -r _ <&3; do :; done; stop_anvil; } </dev/null &
watcher=$!
while :; do
  wait "$anvil"
  status=$?
  kill -0 "$anvil" 2>/dev/null || break
done
kill "$watcher" 2>/dev/null
exit $status
`

/**
 * Exit statuses of an anvil that was asked to stop: 0 (it saves its state and exits on SIGINT
 * and SIGTERM), or 128 + HUP/INT/TERM when the guard reports the signal it passed on.
 */
export const ANVIL_STOPPED_STATUSES: readonly (number | null)[] = [0, 129, 130, 143]

export function anvilBinaryPath(): string {
  const arch = process.arch === 'x64' ? 'amd64' : process.arch
  const binary = process.platform === 'win32' ? 'anvil.exe' : 'anvil'
  try {
    const packageJson = require.resolve(`@foundry-rs/anvil-${process.platform}-${arch}/package.json`)
    const candidate = path.join(path.dirname(packageJson), 'bin', binary)
    if (existsSync(candidate)) return candidate
  } catch {
    // Fall through to the npm wrapper script.
  }
  const wrapper = path.resolve('node_modules', '.bin', binary)
  if (existsSync(wrapper)) return wrapper
  throw new Error('anvil binary not found: is @foundry-rs/anvil installed (npm install)?')
}

export async function startAnvil(options: AnvilOptions = {}): Promise<AnvilInstance> {
  const host = options.host ?? '127.0.0.1'
  const args = [
    '--host',
    host,
    '--port',
    String(options.port ?? 0),
    '--chain-id',
    String(options.chainId ?? 31337),
  ]
  if (options.blockTime && options.blockTime > 0) args.push('--block-time', String(options.blockTime))
  if (options.stateFile) {
    args.push('--state', options.stateFile, '--state-interval', String(options.stateIntervalSeconds ?? 5))
  }

  const binary = anvilBinaryPath()
  const child =
    process.platform === 'win32'
      ? spawn(binary, args, { stdio: 'pipe', windowsHide: true })
      : spawn('sh', ['-c', GUARD_SCRIPT, 'anvil-guard', binary, ...args], { stdio: 'pipe', detached: true })

  const startup = watchStartup(child, options.startTimeoutMs ?? 30_000)
  let listening: { port: number; pid: number }
  try {
    listening = await startup
  } catch (error) {
    child.stdin.end()
    child.kill('SIGKILL')
    throw error
  }
  const rpcHost = host === '0.0.0.0' ? '127.0.0.1' : host
  const rpcUrl = `http://${rpcHost}:${listening.port}`
  await waitForRpc(rpcUrl, child, options.startTimeoutMs ?? 30_000)

  const exited = new Promise<number | null>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(child.exitCode)
    else child.once('exit', (code) => resolve(code))
  })
  // Belt and braces for a normal exit; the guard covers abnormal ones.
  const onExit = () => killQuietly(listening.pid, 'SIGTERM')
  process.once('exit', onExit)

  let stopping: Promise<void> | undefined
  const stop = () => {
    stopping ??= (async () => {
      process.removeListener('exit', onExit)
      child.stdin.end() // The guard sees EOF and asks anvil to save its state and quit.
      if (process.platform === 'win32') child.kill('SIGTERM')
      const timedOut = await Promise.race([
        exited.then(() => false),
        new Promise<boolean>((resolve) => setTimeout(resolve, STOP_TIMEOUT_MS, true).unref()),
      ])
      if (timedOut) {
        killQuietly(listening.pid, 'SIGKILL')
        child.kill('SIGKILL')
        await exited
      }
    })()
    return stopping
  }
  return { rpcUrl, port: listening.port, pid: listening.pid, exited, stop }
}

/** Resolves with anvil's port and pid once it prints "Listening on"; rejects if it dies first. */
function watchStartup(child: ChildProcessWithoutNullStreams, timeoutMs: number) {
  return new Promise<{ port: number; pid: number }>((resolve, reject) => {
    let stdout = ''
    let stderr = ''
    let pid = child.pid ?? 0
    const timer = setTimeout(() => fail(new Error(`anvil did not start within ${timeoutMs} ms`)), timeoutMs)
    const onStdout = (chunk: Buffer) => {
      stdout += chunk.toString()
      const pidMatch = /^anvil-pid (\d+)$/m.exec(stdout)
      if (pidMatch) pid = Number(pidMatch[1])
      const listenMatch = /Listening on [^\s]*:(\d+)/.exec(stdout)
      if (listenMatch) {
        cleanup()
        resolve({ port: Number(listenMatch[1]), pid })
      }
      if (stdout.length > 64_000) stdout = stdout.slice(-4_000)
    }
    const onStderr = (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-4_000)
    }
    const onExit = (code: number | null) =>
      fail(
        new Error(`anvil exited during start-up (code ${code}): ${(stderr || stdout).trim().slice(-1_000)}`),
      )
    const cleanup = () => {
      clearTimeout(timer)
      child.removeListener('exit', onExit)
      child.stdout.removeListener('data', onStdout)
      // Keep draining both pipes so anvil never blocks on a full pipe.
      child.stdout.resume()
    }
    const fail = (error: Error) => {
      cleanup()
      reject(error)
    }
    child.stdout.on('data', onStdout)
    child.stderr.on('data', onStderr)
    child.once('exit', onExit)
  })
}

async function waitForRpc(rpcUrl: string, child: ChildProcessWithoutNullStreams, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`anvil exited with code ${child.exitCode}`)
    try {
      const response = await fetch(rpcUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
      })
      if (response.ok && ((await response.json()) as { result?: string }).result) return
    } catch {
      // Not accepting connections yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error(`anvil at ${rpcUrl} did not answer eth_chainId within ${timeoutMs} ms`)
}

function killQuietly(pid: number, signal: NodeJS.Signals) {
  try {
    if (pid > 0) process.kill(pid, signal)
  } catch {
    // Already gone.
  }
}
