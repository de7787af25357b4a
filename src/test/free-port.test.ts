import { readFileSync } from 'node:fs'
import net from 'node:net'
import { expect, it } from 'vitest'
import { freePort } from './free-port'

it('hands out ports below the range outgoing connections take theirs from, that a server can bind', async () => {
  const ephemeralLow = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').split(/\s+/)[0])
  // An outgoing connection's local port: the kind of port that took a test server's chosen one.
  const target = net.createServer().listen(0, '127.0.0.1')
  await new Promise((r) => target.once('listening', r))
  const socket = net.connect((target.address() as net.AddressInfo).port, '127.0.0.1')
  await new Promise((r) => socket.once('connect', r))
  try {
    expect(socket.localPort).toBeGreaterThanOrEqual(ephemeralLow)
    const ports = await Promise.all(Array.from({ length: 50 }, () => freePort()))
    for (const port of ports) expect(port).toBeLessThan(ephemeralLow)
    const server = net.createServer()
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(ports[0], '127.0.0.1', resolve)
    })
    await new Promise((r) => server.close(r))
  } finally {
    socket.destroy()
    target.close()
  }
})
