/**
 * The browser tests' service port (e2e/playwright.config.ts) is one nothing
 * listens on: with every port of a busy range held by other programs, the
 * configuration still picks a free one.
 */
import net from 'node:net'
import { afterAll, expect, it } from 'vitest'

/** Servers holding ports until the end of the file. */
const held: net.Server[] = []

async function hold(port: number): Promise<void> {
  const server = net.createServer((socket) => socket.destroy())
  const listening = await new Promise<boolean>((resolve) => {
    server.once('error', () => resolve(false))
    server.listen(port, () => resolve(true))
  })
  if (listening) held.push(server)
}

function listenable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer()
    server.once('error', () => resolve(false))
    server.listen(port, () => server.close(() => resolve(true)))
  })
}

afterAll(async () => {
  await Promise.all(held.map((s) => new Promise((resolve) => s.close(resolve))))
})

it('picks a port nothing listens on', async () => {
  // Ports browser-test runs on this machine used to be drawn from, all taken at once.
  for (let port = 3100; port < 3900; port++) await hold(port)
  delete process.env.E2E_PORT
  await import('../../e2e/playwright.config')
  const port = Number(process.env.E2E_PORT)
  expect(Number.isInteger(port) && port > 0).toBe(true)
  expect(await listenable(port), `port ${port}`).toBe(true)
})
