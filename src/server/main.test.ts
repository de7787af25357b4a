/**
 * The web process on a port another program holds (docs/operations.md, "Ports"):
 * one fatal line naming the port and PORT, no stack trace, and exit code 2 — a
 * refusal `npm start` does not restart (src/start/after-exit.ts).
 */
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import net from 'node:net'
import path from 'node:path'
import { afterAll, expect, it } from 'vitest'
import { freePort } from '@/test/free-port'

const ROOT = path.resolve(import.meta.dirname, '../..')
const holder = net.createServer((socket) => socket.destroy())

afterAll(() => {
  holder.close()
})

it('refuses a taken PORT in one line and exits with code 2', async () => {
  const port = await freePort()
  await new Promise<void>((resolve) => holder.listen(port, () => resolve()))
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', path.join('src', 'server', 'main.ts'), '--api-only'],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        LOG_LEVEL: 'info',
        NETWORK: 'devnet',
        PORT: String(port),
        AUTH_SECRET: randomBytes(32).toString('hex'),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  )
  let output = ''
  child.stdout.on('data', (d) => (output += d))
  child.stderr.on('data', (d) => (output += d))
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
  expect(code, output).toBe(2)
  const fatal = output.split('\n').filter((line) => line.includes('"level":60'))
  expect(fatal, output).toHaveLength(1)
  const { msg, err } = JSON.parse(fatal[0]!)
  expect(msg).toBe(`port ${port} is already in use by another program: stop it, or set PORT to a free port`)
  expect(err).toBeUndefined()
}, 60_000)
