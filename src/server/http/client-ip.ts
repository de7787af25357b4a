/**
 * The client's IP address: the socket's peer, or — behind TRUST_PROXY
 * reverse proxies — the address that many hops back in X-Forwarded-For.
 * Never more hops than configured, so a client cannot pick its own address.
 */

import type { IncomingMessage } from 'node:http'
import { isIP } from 'node:net'

function normalize(ip: string): string {
  const trimmed = ip.trim().replace(/^\[|\]$/g, '')
  // IPv4 clients on a dual-stack socket appear as ::ffff:a.b.c.d
  return trimmed.startsWith('::ffff:') && isIP(trimmed.slice(7)) === 4 ? trimmed.slice(7) : trimmed
}

/** Header in which the web server hands the client IP to Next.js (portal, /api/auth, /api/trpc). */
export const CLIENT_IP_HEADER = 'x-nft-client-ip'

/** A connection's peer address, normalized once: keep-alive clients send many requests on one socket. */
const socketIps = new WeakMap<object, string>()

function peerIp(req: IncomingMessage): string {
  let ip = socketIps.get(req.socket)
  if (ip === undefined) {
    ip = normalize(req.socket.remoteAddress ?? '0.0.0.0')
    socketIps.set(req.socket, ip)
  }
  return ip
}

export function clientIp(req: IncomingMessage, trustProxy: number): string {
  const socketIp = peerIp(req)
  if (trustProxy <= 0) return socketIp
  const header = req.headers['x-forwarded-for']
  const forwarded = (Array.isArray(header) ? header.join(',') : (header ?? ''))
    .split(',')
    .map(normalize)
    .filter((ip) => isIP(ip) !== 0)
  // Hops from nearest to farthest: the socket peer, then X-Forwarded-For right to left.
  const hops = [socketIp, ...forwarded.reverse()]
  return hops[Math.min(trustProxy, hops.length - 1)]!
}
