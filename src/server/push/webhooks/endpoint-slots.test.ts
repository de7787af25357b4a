import { describe, expect, it } from 'vitest'
import { type AttemptOutcome, type EndpointSlotOptions, EndpointSlots } from './endpoint-slots'

/**
 * Slots whose attempts are recorded, each with its end, on a clock the test moves. An
 * endpoint has as many slots unproven as proven unless a test says otherwise.
 */
function slotsOf(options: Partial<EndpointSlotOptions> = {}) {
  const clock = { now: 0 }
  const started: string[] = []
  const releases = new Map<string, (outcome?: AttemptOutcome) => void>()
  const slots = new EndpointSlots<string>(
    {
      perEndpoint: 2,
      perUnprovenEndpoint: options.perEndpoint ?? 2,
      unprovenShare: 100,
      failingShare: options.unprovenShare ?? 100,
      rememberMs: 60_000,
      maxRemembered: 100,
      holdPerEndpoint: 2,
      maxHeld: 100,
      maxHoldMs: 1_000,
      pullableMs: 5_000,
      maxParked: 100,
      ...options,
    },
    (job, release) => {
      started.push(job)
      releases.set(job, release)
    },
    () => clock.now,
  )
  /** Ends the attempts of these jobs (with nothing sent). */
  const end = (...jobs: string[]) => {
    for (const job of jobs) releases.get(job)!()
  }
  /** Ends the attempts of these jobs with an outcome. */
  const endAs = (outcome: AttemptOutcome, ...jobs: string[]) => {
    for (const job of jobs) releases.get(job)!(outcome)
  }
  const jobsOf = (list: { job: string }[]) => list.map((x) => x.job)
  return { slots, clock, started, end, endAs, jobsOf }
}

describe('EndpointSlots', () => {
  it('starts a job while its endpoint has a slot, else holds it, and starts a held one as an attempt ends', () => {
    const { slots, started, end } = slotsOf()
    expect(slots.place('a', 'a1')).toBe('started')
    expect(slots.place('a', 'a2')).toBe('started')
    expect(slots.place('a', 'a3')).toBe('held')
    expect(slots.place('a', 'a4')).toBe('held')
    expect(slots.place('a', 'a5')).toBe('park')
    // Another endpoint is not held up by the first one's slots.
    expect(slots.place('b', 'b1')).toBe('started')
    expect(slots.held).toBe(2)
    end('a1')
    end('a1') // a second end of one attempt frees nothing more
    expect(started).toEqual(['a1', 'a2', 'b1', 'a3'])
    expect(slots.held).toBe(1)
  })

  it('holds no more than its limit over every endpoint', () => {
    const { slots } = slotsOf({ perEndpoint: 1, maxHeld: 2 })
    for (const e of ['a', 'b', 'c']) slots.place(e, `${e}1`)
    expect(slots.place('a', 'a2')).toBe('held')
    expect(slots.place('b', 'b2')).toBe('held')
    expect(slots.place('c', 'c2')).toBe('park')
  })

  it("pulls an endpoint's parked jobs forward once its hold runs low, as many as it holds", () => {
    const { slots, clock, end, jobsOf } = slotsOf({ perEndpoint: 2, holdPerEndpoint: 3 })
    for (const job of ['a1', 'a2', 'h1', 'h2', 'h3']) slots.place('a', job)
    for (const job of ['p1', 'p2', 'p3', 'p4']) {
      expect(slots.place('a', job)).toBe('park')
      slots.parked('a', job)
    }
    // Three held: above the low mark (its slots' count), nothing is pulled.
    expect(slots.sweep()).toEqual({ park: [], pull: [] })
    // Two attempts end, two held jobs start: one held, below the mark: two are pulled.
    end('a1', 'a2')
    expect(jobsOf(slots.sweep().pull)).toEqual(['p1', 'p2'])
    // Not again while those two are on their way back, for a second at most.
    expect(jobsOf(slots.sweep().pull)).toEqual([])
    clock.now = 1_001
    expect(jobsOf(slots.sweep().pull)).toEqual(['p3', 'p4'])
    // Fetched back, they count as arrived: held again, they start as slots free.
    expect(slots.place('a', 'p1')).toBe('held')
  })

  it('parks a job held too long, and pulls forward only what the queue would not bring back itself', () => {
    const { slots, clock, jobsOf } = slotsOf({
      perEndpoint: 1,
      holdPerEndpoint: 2,
      maxHoldMs: 1_000,
      pullableMs: 5_000,
    })
    slots.place('slow', 's1')
    slots.place('slow', 'h1')
    clock.now = 600
    slots.place('slow', 'h2')
    // h1 waited 1,001 ms: parked; h2 (401 ms) stays.
    clock.now = 1_001
    const { park, pull } = slots.sweep()
    expect(jobsOf(park)).toEqual(['h1'])
    expect(pull).toEqual([])
    slots.parked('slow', 'h1-copy')
    // Parked more than 5 s ago: the queue brings it back itself; nothing to pull.
    clock.now = 6_002
    slots.sweep() // h2 parked in turn
    slots.parked('slow', 'h2-copy')
    expect(jobsOf(slots.sweep().pull)).toEqual(['h2-copy'])
  })

  it('forgets an endpoint with nothing open, held or parked; hands back what it holds and parks when the process stops', () => {
    const { slots, end, jobsOf } = slotsOf({ perEndpoint: 1 })
    slots.place('a', 'a1')
    slots.place('a', 'a2')
    slots.parked('a', 'p1')
    slots.place('b', 'b1')
    end('b1')
    slots.sweep()
    expect(slots.size).toBe(1)
    expect(jobsOf(slots.takeAll())).toEqual(['a2', 'p1'])
    end('a1')
    slots.sweep()
    expect(slots.size).toBe(0)
  })

  it('gives an endpoint its slots once it has answered, and takes them back when an attempt fails', () => {
    const { slots, started, endAs } = slotsOf({ perEndpoint: 3, perUnprovenEndpoint: 1, holdPerEndpoint: 10 })
    for (const job of ['a1', 'a2', 'a3', 'a4', 'a5', 'a6']) slots.place('a', job)
    // Not heard from yet: one attempt at once.
    expect(started).toEqual(['a1'])
    endAs('delivered', 'a1')
    // Delivered: its three slots.
    expect(started).toEqual(['a1', 'a2', 'a3', 'a4'])
    endAs('failed', 'a2')
    endAs('delivered', 'a3')
    // a2 failed: one slot again, and the delivered a3 proves it again.
    expect(started).toEqual(['a1', 'a2', 'a3', 'a4', 'a5', 'a6'])
    endAs('failed', 'a4', 'a5', 'a6')
    slots.place('a', 'a7')
    slots.place('a', 'a8')
    expect(started.slice(6)).toEqual(['a7'])
  })

  it('the endpoints not proven share their slots in turn, those not tried first; a proven endpoint is not held up by them', () => {
    const { slots, started, endAs } = slotsOf({
      perEndpoint: 5,
      perUnprovenEndpoint: 2,
      unprovenShare: 3,
      failingShare: 1,
    })
    slots.place('ok', 'ok0')
    endAs('delivered', 'ok0')
    // Never delivered to in this process: two slots each, three between them.
    for (const e of ['x', 'y', 'z']) for (const n of [1, 2, 3]) slots.place(e, `${e}${n}`)
    expect(started.slice(1)).toEqual(['x1', 'x2', 'y1'])
    expect(slots.inFlight).toEqual({ proven: 0, untried: 3, failing: 0 })
    // The proven endpoint starts while the share is full.
    expect(slots.place('ok', 'ok1')).toBe('started')
    // A share slot frees: the endpoint waiting longest takes it, not the one that freed it.
    endAs('failed', 'x1')
    expect(started.slice(5)).toEqual(['y2'])
    endAs('failed', 'y1')
    expect(started.slice(6)).toEqual(['z1'])
    // x and y fail now: z, not tried yet, goes before them though it waited less.
    endAs('failed', 'x2')
    expect(started.slice(7)).toEqual(['z2'])
    // An endpoint that answers leaves the share; the slot it frees goes to the failing
    // endpoint waiting longest (y: x went to the end when x2 failed), and the failing
    // endpoints have one slot at once.
    endAs('delivered', 'z1')
    expect(started.slice(8)).toEqual(['y3'])
    endAs('failed', 'y2')
    expect(started.slice(9)).toEqual([])
    expect(slots.inFlight).toEqual({ proven: 1, untried: 1, failing: 1 })
    // A new endpoint is not held up by the failing ones: it takes the free share slot.
    expect(slots.place('w', 'w1')).toBe('started')
  })

  it('a retry counts its endpoint as failing until this process delivers to it', () => {
    const { slots, started, endAs } = slotsOf({ unprovenShare: 10, failingShare: 1 })
    slots.place('a', 'a1', true)
    expect(slots.place('b', 'b1', true)).toBe('held')
    expect(slots.place('c', 'c1')).toBe('started')
    expect(slots.inFlight).toEqual({ proven: 0, untried: 1, failing: 1 })
    endAs('delivered', 'a1')
    expect(started).toEqual(['a1', 'c1', 'b1'])
    // Delivered to: a retry of a no longer counts it as failing.
    expect(slots.place('a', 'a2', true)).toBe('started')
    expect(slots.inFlight).toEqual({ proven: 1, untried: 1, failing: 1 })
  })

  it('forgets a proven endpoint after a while without a delivery, and beyond its count the least recent first', () => {
    const { slots, clock, started, endAs } = slotsOf({
      perEndpoint: 2,
      perUnprovenEndpoint: 1,
      rememberMs: 1_000,
      maxRemembered: 2,
    })
    const prove = (e: string) => {
      slots.place(e, `${e}-probe`)
      endAs('delivered', `${e}-probe`)
    }
    prove('a')
    prove('b')
    prove('c') // a forgotten: three remembered at most two
    for (const e of ['a', 'b']) for (const n of [1, 2]) slots.place(e, `${e}${n}`)
    expect(started.slice(3)).toEqual(['a1', 'b1', 'b2'])
    clock.now = 1_001
    slots.sweep()
    for (const n of [1, 2]) slots.place('c', `c${n}`)
    expect(started.slice(6)).toEqual(['c1'])
  })
})
