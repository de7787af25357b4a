/** `npm start` as a child process, for tests of how it starts and refuses. */
import { spawn } from 'node:child_process'
import path from 'node:path'

const ROOT = path.resolve(import.meta.dirname, '../..')

/**
 * Runs `npm start` until it exits (or `timeoutMs` passes: then it is killed, code null) and
 * returns its exit code and output; whatever it left in its process group is killed too.
 */
export function npmStart(
  env: Record<string, string | undefined>,
  timeoutMs: number,
): Promise<{ code: number | null; output: string }> {
  const child = spawn('npm', ['start'], {
    cwd: ROOT,
    env: env as NodeJS.ProcessEnv,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout.on('data', (d) => (output += d))
  child.stderr.on('data', (d) => (output += d))
  const killGroup = () => {
    try {
      process.kill(-child.pid!, 'SIGKILL')
    } catch {}
  }
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      killGroup()
      resolve({ code: null, output })
    }, timeoutMs)
    child.once('exit', (code) => {
      clearTimeout(timer)
      killGroup()
      resolve({ code, output })
    })
  })
}
