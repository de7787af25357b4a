/**
 * A TCP port on 127.0.0.1 that nothing listens on, for a server a test starts.
 *
 * Chosen below the kernel's ephemeral range (ip_local_port_range): a port from
 * listen(0) is an ephemeral one, and between choosing it and the server binding
 * it any outgoing connection on the machine (a pool to PostgreSQL, a fetch to
 * anvil) may take it as its local port — the server then fails with "address
 * already in use". Below the range only another listener can collide, and the
 * bind check here rules out the ones already running.
 */
import { readFileSync } from 'node:fs'
import net from 'node:net'

const FALLBACK_EPHEMERAL_LOW = 32_768
const LOWEST = 10_000

function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0])
    return Number.isInteger(low) && low > LOWEST + 1_000 ? low : FALLBACK_EPHEMERAL_LOW
  } catch {
    return FALLBACK_EPHEMERAL_LOW
  }
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer()
    server.once('error', () => resolve(false))
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)))
  })
}

export async function freePort(): Promise<number> {
  const high = ephemeralLow()
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = LOWEST + Math.floor(Math.random() * (high - LOWEST))
    if (await bindable(port)) return port
  }
  throw new Error(`no free port found between ${LOWEST} and ${high}`)
}
