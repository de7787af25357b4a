/**
 * The client's IP address: the socket's peer, or — behind TRUST_PROXY
 * reverse proxies — the address that many hops back in X-Forwarded-For.
 * Never more hops than configured, so a client cannot pick its own address
 * (docs/auth.md, "Rate limits").
 */

import type { IncomingMessage } from 'node:http'
import { isIP } from 'node:net'

/** IPv4 clients on a dual-stack socket appear as ::ffff:a.b.c.d */
function unmapped(ip: string): string {
  return ip.startsWith('::ffff:') && isIP(ip.slice(7)) === 4 ? ip.slice(7) : ip
}

const BRACKETED = /^\[([^\]]+)\](?::(\d{1,5}))?$/
const IPV4_WITH_PORT = /^([0-9.]+):(\d{1,5})$/

const isPort = (port: string | undefined) => port === undefined || Number(port) <= 65_535

/**
 * The address of one X-Forwarded-For entry, or undefined when it is none:
 * `IP`, `IPv4:port`, `[IPv6]` or `[IPv6]:port` (load balancers write all four).
 */
export function forwardedAddress(entry: string): string | undefined {
  const text = entry.trim()
  if (isIP(text) !== 0) return unmapped(text)
  const [, v6, v6Port] = BRACKETED.exec(text) ?? []
  if (v6 !== undefined) return isIP(v6) === 6 && isPort(v6Port) ? unmapped(v6) : undefined
  const [, v4, v4Port] = IPV4_WITH_PORT.exec(text) ?? []
  return v4 !== undefined && isIP(v4) === 4 && isPort(v4Port) ? v4 : undefined
}

/** Header in which the web server hands the client IP to Next.js (portal, /api/auth, /api/trpc). */
export const CLIENT_IP_HEADER = 'x-nft-client-ip'

/** A connection's peer address, normalized once: keep-alive clients send many requests on one socket. */
const socketIps = new WeakMap<object, string>()

function peerIp(req: IncomingMessage): string {
  let ip = socketIps.get(req.socket)
  if (ip === undefined) {
    ip = forwardedAddress(req.socket.remoteAddress ?? '') ?? '0.0.0.0'
    socketIps.set(req.socket, ip)
  }
  return ip
}

/**
 * Walks from the socket peer through X-Forwarded-For, right to left, at most
 * `trustProxy` hops. Each trusted proxy wrote the entry to its left, so the
 * walk stops at an entry that is no address (the proxy that wrote it is the
 * last one known) and never goes further than configured.
 */
export function clientIp(req: IncomingMessage, trustProxy: number): string {
  let ip = peerIp(req)
  if (trustProxy <= 0) return ip
  const header = req.headers['x-forwarded-for']
  const entries = (Array.isArray(header) ? header.join(',') : (header ?? '')).split(',')
  for (let hop = 1; hop <= trustProxy && hop <= entries.length; hop++) {
    const next = forwardedAddress(entries[entries.length - hop]!)
    if (next === undefined) break
    ip = next
  }
  return ip
}
