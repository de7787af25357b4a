import { isIPv4, isIPv6 } from 'node:net'

/**
 * Address ranges that URLs from chain data must never reach: private,
 * loopback, link-local, CGNAT, multicast, reserved, documentation, cloud
 * metadata services, and IPv6 forms that embed an IPv4 address (mapped,
 * compatible, NAT64, 6to4, Teredo), whose IPv4 part could be any of these.
 */
const BLOCKED_V4: Array<[string, number, string]> = [
  ['0.0.0.0', 8, 'this network'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'carrier-grade NAT'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.169.254', 32, 'cloud metadata service'],
  ['169.254.0.0', 16, 'link-local'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'IETF protocol assignments'],
  ['192.0.2.0', 24, 'documentation'],
  ['192.88.99.0', 24, '6to4 relay'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'benchmarking'],
  ['198.51.100.0', 24, 'documentation'],
  ['203.0.113.0', 24, 'documentation'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'],
]

const BLOCKED_V6: Array<[string, number, string]> = [
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
  ['::ffff:0:0', 96, 'IPv4-mapped'],
  ['::', 96, 'IPv4-compatible'],
  ['64:ff9b::', 96, 'NAT64'],
  ['64:ff9b:1::', 48, 'local NAT64'],
  ['100::', 64, 'discard'],
  ['2001::', 32, 'Teredo'],
  ['2001:2::', 48, 'benchmarking'],
  ['2001:db8::', 32, 'documentation'],
  ['2002::', 16, '6to4'],
  ['fd00:ec2::254', 128, 'cloud metadata service'],
  ['fc00::', 7, 'unique local'],
  ['fe80::', 10, 'link-local'],
  ['fec0::', 10, 'site-local'],
  ['ff00::', 8, 'multicast'],
]

export function ipv4ToBigInt(ip: string): bigint {
  return ip.split('.').reduce((acc, part) => (acc << 8n) | BigInt(Number(part)), 0n)
}

/** Expands any valid IPv6 text form ("::", embedded IPv4, zone id) to a 128-bit number. */
export function ipv6ToBigInt(input: string): bigint {
  let ip = input.split('%')[0]!
  const lastColon = ip.lastIndexOf(':')
  const tail = ip.slice(lastColon + 1)
  if (tail.includes('.')) {
    const v4 = ipv4ToBigInt(tail)
    ip = `${ip.slice(0, lastColon + 1)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`
  }
  const [head, rest] = ip.includes('::') ? ip.split('::') : [ip, undefined]
  const headParts = head ? head.split(':') : []
  const restParts = rest === undefined ? [] : rest ? rest.split(':') : []
  const fill = rest === undefined ? 0 : 8 - headParts.length - restParts.length
  const parts = [...headParts, ...Array<string>(fill).fill('0'), ...restParts]
  return parts.reduce((acc, part) => (acc << 16n) | BigInt(Number.parseInt(part || '0', 16)), 0n)
}

const inRange = (value: bigint, base: bigint, prefix: number, bits: number) =>
  value >> BigInt(bits - prefix) === base >> BigInt(bits - prefix)

const V4 = BLOCKED_V4.map(([ip, prefix, reason]) => ({ base: ipv4ToBigInt(ip), prefix, reason }))
const V6 = BLOCKED_V6.map(([ip, prefix, reason]) => ({ base: ipv6ToBigInt(ip), prefix, reason }))

/** Why this IP must not be contacted, or null when it is a public unicast address. */
export function blockedReason(ip: string): string | null {
  const bare = ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip
  if (isIPv4(bare)) {
    const value = ipv4ToBigInt(bare)
    return V4.find((r) => inRange(value, r.base, r.prefix, 32))?.reason ?? null
  }
  if (isIPv6(bare.split('%')[0]!)) {
    const value = ipv6ToBigInt(bare)
    return V6.find((r) => inRange(value, r.base, r.prefix, 128))?.reason ?? null
  }
  return 'not an IP address'
}
