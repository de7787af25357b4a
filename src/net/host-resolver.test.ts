/**
 * The SSRF guard's resolver (host-resolver.ts, guarded-lookup.ts) against a system resolver
 * that never answers some names, as a hostile name server makes getaddrinfo do: at most two
 * lookups run at once (the process's other worker threads stay free), a name many ask for is
 * looked up once, a kept answer serves at once while hostile names hold every slot, and the
 * guard judges a kept answer again on every use. The system resolver is the one part replaced:
 * a name server that hangs on demand cannot be had offline.
 */
import type { LookupAddress } from 'node:dns'
import { describe, expect, it } from 'vitest'
import { BlockedAddressError, createGuardedLookup } from './guarded-lookup'
import { HostResolver, type LookupAll } from './host-resolver'

const TABLE: Record<string, string> = {
  'ok.test': '93.184.216.34',
  'other.test': '93.184.216.35',
  'third.test': '93.184.216.36',
  'inside.test': '10.0.0.7',
}

/** getaddrinfo as the resolver sees it: names under `.hang.test` answer only when released. */
function systemResolver() {
  let running = 0
  let most = 0
  const calls: string[] = []
  const hung: Array<() => void> = []
  const lookup: LookupAll = (hostname, _options, callback) => {
    calls.push(hostname)
    running++
    most = Math.max(most, running)
    const answer = () => {
      running--
      const address = TABLE[hostname]
      if (address) callback(null, [{ address, family: 4 }])
      else callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), [])
    }
    if (hostname.endsWith('.hang.test')) hung.push(answer)
    else setTimeout(answer, 2)
  }
  return {
    lookup,
    calls,
    most: () => most,
    hanging: () => hung.length,
    release: () => {
      for (const answer of hung.splice(0)) answer()
    },
  }
}

const tick = (ms = 20) => new Promise((r) => setTimeout(r, ms))

/** 'settled' or 'waiting' after a short while. */
const within = (p: Promise<unknown>, ms = 100) =>
  Promise.race([
    p.then(
      () => 'settled',
      () => 'settled',
    ),
    tick(ms).then(() => 'waiting'),
  ])

describe('the resolver of the SSRF guard', () => {
  it('runs at most two lookups at once: the others wait for a slot, and all are answered', async () => {
    const dns = systemResolver()
    const resolver = new HostResolver(dns.lookup)
    const asked = Array.from({ length: 10 }, (_, i) =>
      resolver.resolve(`n${i}.hang.test`).catch((e) => e.code),
    )
    await tick()
    expect({ running: dns.hanging(), calls: dns.calls.length }).toEqual({ running: 2, calls: 2 })
    while (dns.calls.length < 10 || dns.hanging() > 0) {
      dns.release()
      await tick(5)
    }
    expect(await Promise.all(asked)).toEqual(Array(10).fill('ENOTFOUND'))
    expect(dns.most()).toBe(2)
  })

  it('a kept answer serves at once while hostile names hold every slot; a new name waits', async () => {
    const dns = systemResolver()
    const resolver = new HostResolver(dns.lookup)
    expect((await resolver.resolve('ok.test'))[0]!.address).toBe('93.184.216.34')
    const hostile = [0, 1, 2].map((i) => resolver.resolve(`h${i}.hang.test`).catch(() => null))
    await tick()
    expect(await within(resolver.resolve('OK.test'))).toBe('settled')
    const fresh = resolver.resolve('other.test')
    expect(await within(fresh)).toBe('waiting')
    while (dns.hanging() > 0 || dns.calls.length < 5) {
      dns.release()
      await tick(5)
    }
    expect((await fresh)[0]!.address).toBe('93.184.216.35')
    await Promise.all(hostile)
    expect(dns.calls.filter((n) => n === 'ok.test')).toHaveLength(1)
  })

  it('looks a name up once for everyone asking at the same time; a failure is not kept', async () => {
    const dns = systemResolver()
    const resolver = new HostResolver(dns.lookup)
    const answers = await Promise.all(Array.from({ length: 5 }, () => resolver.resolve('ok.test')))
    expect(new Set(answers.map((a) => a[0]!.address))).toEqual(new Set(['93.184.216.34']))
    await expect(resolver.resolve('missing.test')).rejects.toMatchObject({ code: 'ENOTFOUND' })
    await expect(resolver.resolve('missing.test')).rejects.toMatchObject({ code: 'ENOTFOUND' })
    expect(dns.calls).toEqual(['ok.test', 'missing.test', 'missing.test'])
  })

  it('keeps an answer for its time and at most so many answers, the oldest going first', async () => {
    const dns = systemResolver()
    const resolver = new HostResolver(dns.lookup, { ttlMs: 1_000, maxAnswers: 2 })
    for (const name of ['ok.test', 'other.test', 'third.test', 'other.test']) await resolver.resolve(name)
    expect(dns.calls).toEqual(['ok.test', 'other.test', 'third.test'])
    await resolver.resolve('ok.test')
    expect(dns.calls).toHaveLength(4)
    await tick(1_100)
    await resolver.resolve('ok.test')
    expect(dns.calls).toHaveLength(5)
  })

  it('the guard judges a kept answer again on every use', async () => {
    const dns = systemResolver()
    const lookup = createGuardedLookup(new HostResolver(dns.lookup))
    const use = (hostname: string) =>
      new Promise<{ err: Error | null; addresses: string | LookupAddress[] }>((resolve) =>
        lookup(hostname, { all: true }, (err, addresses) => resolve({ err, addresses })),
      )
    for (let i = 0; i < 2; i++) {
      const { err } = await use('inside.test')
      expect(err).toBeInstanceOf(BlockedAddressError)
      expect(err!.message).toBe('Refused inside.test: it resolves to a blocked address (private)')
    }
    expect(dns.calls).toEqual(['inside.test'])
    expect((await use('ok.test')).addresses).toEqual([{ address: '93.184.216.34', family: 4 }])
  })
})
