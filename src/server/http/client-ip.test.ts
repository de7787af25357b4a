/**
 * The client IP behind TRUST_PROXY hops, read from real requests on a real
 * socket: every form a proxy writes is understood, and no entry a client
 * wrote itself is ever believed.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { clientIp } from './client-ip'

let server: Server
let base: string

beforeAll(async () => {
  // Answers the client IP for the hop count in the path: GET /<TRUST_PROXY>.
  server = createServer((req, res) => res.end(clientIp(req, Number(req.url!.slice(1)))))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve))
})

async function ipSeen(trustProxy: number, forwardedFor?: string): Promise<string> {
  const headers: Record<string, string> =
    forwardedFor === undefined ? {} : { 'X-Forwarded-For': forwardedFor }
  return (await fetch(`${base}/${trustProxy}`, { headers })).text()
}

describe('clientIp', () => {
  it('is the socket peer without TRUST_PROXY, whatever X-Forwarded-For says', async () => {
    expect(await ipSeen(0, '203.0.113.9')).toBe('127.0.0.1')
  })

  it.each([
    ['203.0.113.9', '203.0.113.9'],
    ['203.0.113.9:51234', '203.0.113.9'],
    ['2001:db8::7', '2001:db8::7'],
    ['[2001:db8::7]', '2001:db8::7'],
    ['[2001:db8::7]:443', '2001:db8::7'],
    ['::ffff:203.0.113.9', '203.0.113.9'],
    ['[::ffff:203.0.113.9]:8080', '203.0.113.9'],
  ])('reads the hop %s as %s', async (hop, ip) => {
    // An attacker's own entry to the left must not matter.
    expect(await ipSeen(1, `198.51.100.66, ${hop}`)).toBe(ip)
  })

  it('never trusts further than configured when a hop carries a port', async () => {
    // One proxy: its entry is the client, written IP:port; the one to its left is the client's own.
    expect(await ipSeen(1, '198.51.100.66, 203.0.113.9:51234')).toBe('203.0.113.9')
    expect(await ipSeen(2, '198.51.100.66, 203.0.113.9:51234, 10.0.0.2')).toBe('203.0.113.9')
  })

  it('ends the walk at an entry that is no address: the proxy that wrote it is the client seen', async () => {
    expect(await ipSeen(1, '198.51.100.66, unknown')).toBe('127.0.0.1')
    expect(await ipSeen(2, '198.51.100.66, 203.0.113.9:port, 10.0.0.2')).toBe('10.0.0.2')
    expect(await ipSeen(2, '198.51.100.66, [2001:db8::7, 10.0.0.2')).toBe('10.0.0.2')
    expect(await ipSeen(1, '198.51.100.66, 1.2.3.4:99999')).toBe('127.0.0.1')
    expect(await ipSeen(1, '198.51.100.66,')).toBe('127.0.0.1')
  })

  it('takes the farthest entry when fewer hops arrived than configured', async () => {
    expect(await ipSeen(3, '203.0.113.9')).toBe('203.0.113.9')
    expect(await ipSeen(3)).toBe('127.0.0.1')
  })
})
