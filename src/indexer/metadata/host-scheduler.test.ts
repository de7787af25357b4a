import { describe, expect, it } from 'vitest'
import { HostBackedOff, HostScheduler } from './host-scheduler'
import { FetchFailure } from './outcome'

const budget = { concurrency: 2, maxQueued: 1000, maxQueuedPerGroup: 1000 }
const make = (over: Partial<ConstructorParameters<typeof HostScheduler>[0]> = {}) =>
  new HostScheduler({ concurrency: 4, host: budget, gateway: { ...budget, concurrency: 8 }, ...over })
const tick = () => new Promise((r) => setTimeout(r, 5))

function fault(outcome: 'timeout' | 'http_error' = 'timeout', retryAfterMs?: number) {
  const f = new FetchFailure(outcome, 'down', true)
  f.hostFault = true
  f.retryAfterMs = retryAfterMs
  return f
}

describe('HostScheduler', () => {
  it('bounds requests in flight per host and overall, serving hosts round-robin', async () => {
    const s = make()
    const live = new Map<string, number>()
    let peak = 0
    const order: string[] = []
    const release: Array<() => void> = []
    const job = (host: string) =>
      s.run(host, 'c', async () => {
        order.push(host)
        live.set(host, (live.get(host) ?? 0) + 1)
        peak = Math.max(peak, live.get(host)!)
        await new Promise<void>((r) => release.push(r))
        live.set(host, live.get(host)! - 1)
      })
    const all = [...Array.from({ length: 10 }, () => job('slow:80')), job('a:80'), job('b:80')]
    await tick()
    // slow gets its 2, a and b are not kept waiting behind slow's 8 others.
    expect(order.slice(0, 4).sort()).toEqual(['a:80', 'b:80', 'slow:80', 'slow:80'])
    while (release.length) {
      release.shift()!()
      await tick()
    }
    await Promise.all(all)
    expect(peak).toBe(2)
  })

  it('serves the collections of a host in turn', async () => {
    const s = make({ concurrency: 1 })
    const order: string[] = []
    const jobs = [
      ...Array.from({ length: 5 }, () => s.run('h:80', 'big', async () => void order.push('big'))),
      s.run('h:80', 'small', async () => void order.push('small')),
    ]
    await Promise.all(jobs)
    expect(order.indexOf('small')).toBeLessThanOrEqual(2)
  })

  it("opens a collection's breaker after consecutive host faults, probes once, and closes on success", async () => {
    let now = 1_000_000
    const events: string[] = []
    const s = make({
      failureThreshold: 3,
      cooldownMs: 10_000,
      now: () => now,
      onBreaker: (e) => events.push(e.state),
    })
    for (let i = 0; i < 3; i++)
      await expect(s.run('bad:80', 'c', () => Promise.reject(fault()))).rejects.toBeInstanceOf(FetchFailure)
    const refused = await s.run('bad:80', 'c', async () => 'x').catch((e) => e)
    expect(refused).toBeInstanceOf(HostBackedOff)
    expect(refused).toMatchObject({ reason: 'open', outcome: 'timeout', until: now + 10_000 })
    // One collection's faults back off that collection on the host, not the host.
    expect(s.stats().backedOffCollections).toEqual([
      expect.objectContaining({ host: 'bad:80', collection: 'c', state: 'open' }),
    ])
    expect(s.stats().backedOff).toEqual([])
    // Other hosts are not affected.
    await expect(s.run('good:80', 'c', async () => 'ok')).resolves.toBe('ok')
    // Half-open: a failed probe reopens for twice as long.
    now += 10_000
    await expect(s.run('bad:80', 'c', () => Promise.reject(fault()))).rejects.not.toBeInstanceOf(
      HostBackedOff,
    )
    expect(await s.run('bad:80', 'c', async () => 'x').catch((e) => e.until)).toBe(now + 20_000)
    now += 20_000
    await expect(s.run('bad:80', 'c', async () => 'back')).resolves.toBe('back')
    expect(s.stats()).toMatchObject({ backedOff: [], backedOffCollections: [] })
    expect(events).toEqual(['open', 'open', 'closed'])
  })

  it('a collection failing on a shared host leaves the host to its other collections', async () => {
    let now = 1_000_000
    const s = make({ failureThreshold: 3, cooldownMs: 10_000, now: () => now })
    for (let i = 0; i < 3; i++)
      await expect(s.run('shared:80', 'slow', () => Promise.reject(fault()))).rejects.not.toBeInstanceOf(
        HostBackedOff,
      )
    const refused = await s.run('shared:80', 'slow', async () => 'x').catch((e) => e)
    expect(refused).toMatchObject({ reason: 'open', collection: 'slow', until: now + 10_000 })
    // The neighbour on the same host is served at once, also while the slow one probes and fails.
    await expect(s.run('shared:80', 'good', async () => 'ok')).resolves.toBe('ok')
    now += 10_000
    await expect(s.run('shared:80', 'slow', () => Promise.reject(fault()))).rejects.not.toBeInstanceOf(
      HostBackedOff,
    )
    await expect(s.run('shared:80', 'good', async () => 'still ok')).resolves.toBe('still ok')
    expect(s.available('shared:80')).toBe(true)
    expect(s.stats().backedOff).toEqual([])
  })

  it('backs off the whole host when its failures span collections', async () => {
    let now = 1_000_000
    const events: string[] = []
    const s = make({
      failureThreshold: 2,
      cooldownMs: 10_000,
      now: () => now,
      onBreaker: (e) => events.push(`${e.state} ${e.collection ?? 'host'}`),
    })
    for (const group of ['a', 'a', 'b', 'b'])
      await expect(s.run('down:80', group, () => Promise.reject(fault()))).rejects.toBeInstanceOf(
        FetchFailure,
      )
    expect(events).toEqual(['open a', 'open b', 'open host'])
    // A collection that never asked is refused too: the host is down for everyone.
    const refused = await s.run('down:80', 'new', async () => 'x').catch((e) => e)
    expect(refused).toMatchObject({ reason: 'open', until: now + 10_000 })
    expect(refused.collection).toBeUndefined()
    expect(s.stats().backedOff).toEqual([expect.objectContaining({ host: 'down:80', state: 'open' })])
    // Once the host's period is over, a collection not known to fail probes it; success reopens it to all.
    now += 10_000
    await expect(s.run('down:80', 'new', async () => 'up')).resolves.toBe('up')
    expect(s.stats().backedOff).toEqual([])
    expect(events.at(-1)).toBe('closed host')
  })

  it('failures of collections with successes between them do not back off the host', async () => {
    const s = make({ failureThreshold: 2 })
    for (const group of ['a', 'a', 'ok', 'b', 'b', 'ok', 'c', 'c']) {
      const job = group === 'ok' ? async () => 'fine' : () => Promise.reject(fault())
      await s.run('gateway:443', group, job).catch(() => undefined)
    }
    expect(s.stats().backedOff).toEqual([])
    expect(s.stats().backedOffCollections.map((c) => c.collection)).toEqual(['a', 'b', 'c'])
    await expect(s.run('gateway:443', 'd', async () => 'served')).resolves.toBe('served')
  })

  it('a document-level failure (404, bad JSON) does not count against the host', async () => {
    const s = make({ failureThreshold: 2 })
    for (let i = 0; i < 5; i++)
      await expect(
        s.run('h:80', 'c', () => Promise.reject(new FetchFailure('invalid_json', 'bad'))),
      ).rejects.toThrow()
    expect(s.available('h:80')).toBe(true)
  })

  it('honours Retry-After at once, and hands back what waited for the host', async () => {
    const now = 0
    const s = make({ now: () => now })
    let fail!: (e: unknown) => void
    const first = s.run('h:80', 'c', () => new Promise((_, reject) => (fail = reject)))
    const second = s.run('h:80', 'c', () => new Promise(() => undefined))
    const waiting = s.run('h:80', 'c', async () => 'never').catch((e) => e)
    await tick()
    fail(fault('http_error', 5_000))
    await expect(first).rejects.toThrow()
    const err = await waiting
    expect(err).toBeInstanceOf(HostBackedOff)
    expect(err).toMatchObject({ reason: 'open', outcome: 'http_error', until: 5_000 })
    void second
  })

  it('refuses more than the queue cap as busy', async () => {
    const s = new HostScheduler({
      concurrency: 1,
      host: { concurrency: 1, maxQueued: 3, maxQueuedPerGroup: 3 },
      gateway: budget,
    })
    const hang = () => new Promise<void>(() => undefined)
    // One in flight, three waiting: the fifth is refused.
    for (let i = 0; i < 4; i++) void s.run('h:80', 'c', hang)
    await tick()
    const err = await s.run('h:80', 'c', hang).catch((e) => e)
    expect(err).toBeInstanceOf(HostBackedOff)
    expect(err.reason).toBe('busy')
  })
})

describe('HostScheduler: stalled requests', () => {
  it('stalled requests (slow, dead hosts) do not hold the machine-wide budget', async () => {
    const s = new HostScheduler({
      concurrency: 4,
      stalledAfterMs: 20,
      host: { concurrency: 2, maxQueued: 100, maxQueuedPerGroup: 100 },
      gateway: budget,
    })
    const hang = () => new Promise<void>(() => undefined)
    // Three slow hosts take 6 requests > the budget of 4.
    for (const h of ['s1:80', 's2:80', 's3:80']) for (let i = 0; i < 2; i++) void s.run(h, 'c', hang)
    await tick()
    let served = false
    const fast = s.run('fast:80', 'c', async () => {
      served = true
    })
    await new Promise((r) => setTimeout(r, 60))
    await fast
    expect(served).toBe(true)
    expect(s.stats()).toMatchObject({ inFlight: 6, stalled: 6 })
  })
})

describe('HostScheduler: one collection over many hosts', () => {
  it('bounds the stalled requests of one collection whatever hosts its tokens name', async () => {
    const s = new HostScheduler({
      concurrency: 64,
      stalledAfterMs: 10,
      maxStalledPerGroup: 3,
      host: budget,
      gateway: budget,
    })
    const hang = () => new Promise<void>(() => undefined)
    for (let i = 0; i < 3; i++) void s.run(`evil-${i}:80`, 'evil', hang)
    await new Promise((r) => setTimeout(r, 40))
    const err = await s.run('evil-99:80', 'evil', hang).catch((e) => e)
    expect(err).toBeInstanceOf(HostBackedOff)
    expect(err.reason).toBe('busy')
    // Other collections are not affected.
    await expect(s.run('evil-99:80', 'other', async () => 'ok')).resolves.toBe('ok')
  })

  it('a finishing fetch (media of a token in memory) queues past the cap where a new one is refused', async () => {
    const s = new HostScheduler({
      concurrency: 1,
      host: { concurrency: 1, maxQueued: 1, maxQueuedPerGroup: 100 },
      gateway: budget,
    })
    let release!: () => void
    const first = s.run('h:80', 'c', () => new Promise<void>((r) => (release = r)))
    // The cap is two waiting (twice the host's concurrency at least): a new fetch is refused at two.
    const queued = [
      s.run('h:80', 'c', async () => 'second', { finishing: true }),
      s.run('h:80', 'c', async () => 'third'),
    ]
    const refused = await s.run('h:80', 'c', async () => 'refused').catch((e) => e)
    expect(refused).toBeInstanceOf(HostBackedOff)
    // A finishing fetch still waits, up to four.
    queued.push(
      s.run('h:80', 'c', async () => 'fourth', { finishing: true }),
      s.run('h:80', 'c', async () => 'fifth', { finishing: true }),
    )
    const busy = await s.run('h:80', 'c', async () => 'sixth', { finishing: true }).catch((e) => e)
    expect(busy).toBeInstanceOf(HostBackedOff)
    expect(busy.reason).toBe('busy')
    await tick()
    release()
    await first
    expect(await Promise.all(queued)).toEqual(['second', 'third', 'fourth', 'fifth'])
  })

  it('a finishing fetch waits a bounded time, then is refused with the next free turn of the host', async () => {
    const s = new HostScheduler({
      concurrency: 1,
      maxFinishingWaitMs: 30,
      host: { concurrency: 1, maxQueued: 100, maxQueuedPerGroup: 100 },
      gateway: budget,
    })
    let release!: () => void
    const first = s.run('h:80', 'c', () => new Promise<void>((r) => (release = r)))
    let ran = 0
    const waiting = [1, 2, 3].map(() =>
      s.run('h:80', 'c', async () => ran++, { finishing: true }).catch((e: HostBackedOff) => e),
    )
    const refused = (await Promise.all(waiting)) as HostBackedOff[]
    expect(ran).toBe(0)
    for (const err of refused) {
      expect(err).toBeInstanceOf(HostBackedOff)
      expect(err.reason).toBe('busy')
    }
    // Each refused token is given a later turn than the one before it: they come back in file.
    const turns = refused.map((err) => err.until)
    expect(turns[1]).toBeGreaterThan(turns[0]!)
    expect(turns[2]).toBeGreaterThan(turns[1]!)
    // Out of the queue: nothing waits for the host any more, and it serves the next fetch.
    expect(s.stats().queued).toBe(0)
    release()
    await first
    await expect(s.run('h:80', 'c', async () => 'next')).resolves.toBe('next')
  })
})
