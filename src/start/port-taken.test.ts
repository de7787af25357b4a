/**
 * `npm start` when another program already listens on PORT: one line that
 * names the port and the variable, a non-zero exit, and nothing started
 * meanwhile — not a web process restarted every 1, 2, 4 … 30 s (docs/operations.md, "Ports").
 */
import { mkdtempSync, rmSync } from 'node:fs'
import net from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { freePort } from '@/test/free-port'
import { npmStart } from '@/test/npm-start'

/** A server on every address of `port`, as another program holding it would be. */
async function holdPort(port: number): Promise<net.Server> {
  const server = net.createServer((socket) => socket.destroy())
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, () => resolve())
  })
  return server
}

describe('npm start with PORT taken', () => {
  const cleanups: (() => void)[] = []
  afterEach(() => {
    for (const cleanup of cleanups.splice(0)) cleanup()
  })

  it('says so in one line naming the port and PORT, and exits non-zero without starting anything', async () => {
    const port = await freePort()
    const holder = await holdPort(port)
    const dataDir = mkdtempSync(path.join(tmpdir(), 'nft-port-taken-'))
    cleanups.push(
      () => holder.close(),
      () => rmSync(dataDir, { recursive: true, force: true }),
    )
    const { RPC_URL: _rpc, NODE_ENV: _mode, ...inherited } = process.env
    const { code, output } = await npmStart(
      { ...inherited, PORT: String(port), DATA_DIR: dataDir, LOG_LEVEL: 'info', AUTH_SECRET: 'x'.repeat(32) },
      60_000,
    )
    expect(code, output).not.toBeNull()
    expect(code, output).not.toBe(0)
    const logLines = output.split('\n').filter((line) => line.startsWith('{'))
    const mentions = logLines.filter((line) => line.includes(String(port)))
    expect(mentions, output).toHaveLength(1)
    const { level, msg, err } = JSON.parse(mentions[0]!)
    expect(level).toBe(60)
    expect(msg).toMatch(new RegExp(`port ${port} is already in use.*\\bPORT\\b`))
    expect(err, 'no stack trace').toBeUndefined()
    expect(output).not.toMatch(/restarting|devnet ready|\n\s+at /)
  }, 90_000)
})
