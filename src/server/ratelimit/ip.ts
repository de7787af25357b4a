/**
 * The rate-limit subject of a client address: an IPv4 address as is, an IPv6
 * address by its /64 network (one subscriber usually holds a whole /64, so
 * per-address limits would be trivial to dodge).
 */
import { isIP } from 'node:net'
import { boundedMemo } from '@/lib/bounded-memo'

/** Expands an IPv6 address into its eight 16-bit groups. */
function ipv6Groups(ip: string): number[] | undefined {
  let text = ip.split('%')[0]!.toLowerCase()
  // An embedded IPv4 tail (::ffff:1.2.3.4, 64:ff9b::1.2.3.4) becomes two groups.
  const v4 = text.match(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/)
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number) as [number, number, number, number]
    text = `${text.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  const [head, tail] = text.split('::') as [string, string | undefined]
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((g) => Number.parseInt(g, 16)))
  const left = parse(head)
  const right = tail === undefined ? [] : parse(tail)
  const missing = 8 - left.length - right.length
  if (tail === undefined ? missing !== 0 : missing < 0) return undefined
  const groups = [...left, ...Array<number>(tail === undefined ? 0 : missing).fill(0), ...right]
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff)
    ? groups
    : undefined
}

/** Memoized: a client sends many requests. */
export const ipSubject = boundedMemo(10_000, subjectOf)

function subjectOf(ip: string): string {
  const version = isIP(ip)
  if (version === 4) return `ip:${ip}`
  if (version === 6) {
    const groups = ipv6Groups(ip)
    if (groups) {
      // An IPv4-mapped address is the IPv4 client.
      if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
        const [hi, lo] = [groups[6]!, groups[7]!]
        return `ip:${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`
      }
      return `ip:${groups
        .slice(0, 4)
        .map((g) => g.toString(16))
        .join(':')}::/64`
    }
  }
  return `ip:${ip}`
}
