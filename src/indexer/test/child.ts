/** The indexer as a child process (`tsx src/indexer/process-entry.ts`), killable with SIGKILL. */
import { type ChildProcess, spawn } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..')

export interface ChildIndexer {
  process: ChildProcess
  lines: string[]
  stderr: string[]
  waitForLine(pattern: RegExp, timeoutMs?: number): Promise<string>
  /** kill -9 of the whole process group (tsx and the node process it runs). */
  kill9(): Promise<void>
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

export function spawnIndexer(env: Record<string, string>): ChildIndexer {
  const child = spawn(path.join(root, 'node_modules/.bin/tsx'), ['src/indexer/process-entry.ts'], {
    cwd: root,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      LOG_LEVEL: 'info',
      ...env,
    } as unknown as NodeJS.ProcessEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
    // Own process group: SIGKILL reaches tsx's node child too.
    detached: true,
  })
  const lines: string[] = []
  const stderr: string[] = []
  const waiters: Array<{ pattern: RegExp; resolve: (line: string) => void }> = []
  let buffer = ''
  child.stdout!.on('data', (chunk: Buffer) => {
    buffer += chunk.toString()
    const parts = buffer.split('\n')
    buffer = parts.pop()!
    for (const line of parts) {
      lines.push(line)
      for (const w of [...waiters]) {
        if (w.pattern.test(line)) {
          waiters.splice(waiters.indexOf(w), 1)
          w.resolve(line)
        }
      }
    }
  })
  child.stderr!.on('data', (chunk: Buffer) => stderr.push(chunk.toString()))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  )
  return {
    process: child,
    lines,
    stderr,
    waitForLine(pattern, timeoutMs = 30_000) {
      const seen = lines.find((l) => pattern.test(l))
      if (seen) return Promise.resolve(seen)
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no log line matching ${pattern}; last: ${lines.slice(-5).join('\n')}`)),
          timeoutMs,
        )
        waiters.push({
          pattern,
          resolve: (line) => {
            clearTimeout(timer)
            resolve(line)
          },
        })
      })
    },
    async kill9() {
      if (child.exitCode === null && child.signalCode === null) {
        try {
          process.kill(-child.pid!, 'SIGKILL')
        } catch {
          // Already gone.
        }
      }
      await exited
    },
    exited,
  }
}
