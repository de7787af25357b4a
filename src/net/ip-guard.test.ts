import { describe, expect, it } from 'vitest'
import { blockedReason, ipv6ToBigInt } from './ip-guard'

describe('blockedReason', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['100.127.255.255', 'carrier-grade NAT'],
    ['169.254.169.254', 'cloud metadata service'],
    ['169.254.1.1', 'link-local'],
    ['0.0.0.0', 'this network'],
    ['224.0.0.251', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['198.18.0.1', 'benchmarking'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fd00:ec2::254', 'cloud metadata service'],
    ['fc00::1', 'unique local'],
    ['fdff:ffff::1', 'unique local'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['ff02::1', 'multicast'],
    ['::ffff:127.0.0.1', 'IPv4-mapped'],
    ['::ffff:7f00:1', 'IPv4-mapped'],
    ['::ffff:8.8.8.8', 'IPv4-mapped'],
    ['::127.0.0.1', 'IPv4-compatible'],
    ['64:ff9b::a00:1', 'NAT64'],
    ['2002:a00:1::', '6to4'],
    ['2001:0:4136:e378::1', 'Teredo'],
    ['[::1]', 'loopback'],
  ])('refuses %s (%s)', (ip, reason) => {
    expect(blockedReason(ip)).toBe(reason)
  })

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '172.32.0.1',
    '100.128.0.1',
    '169.253.255.255',
    '2606:4700:4700::1111',
    '2a00:1450::1',
  ])('allows the public address %s', (ip) => {
    expect(blockedReason(ip)).toBeNull()
  })

  it('treats anything that is not an IP as blocked', () => {
    expect(blockedReason('localhost')).toBe('not an IP address')
  })

  it('expands every IPv6 text form to the same number', () => {
    expect(ipv6ToBigInt('::ffff:127.0.0.1')).toBe(ipv6ToBigInt('0:0:0:0:0:ffff:7f00:0001'))
    expect(ipv6ToBigInt('fd00:ec2::254')).toBe(ipv6ToBigInt('fd00:0ec2:0:0:0:0:0:0254'))
    expect(ipv6ToBigInt('::')).toBe(0n)
  })
})
