import { describe, expect, it } from 'vitest'
import { type EndpointSlotOptions, EndpointSlots } from './endpoint-slots'

/** Slots whose attempts are recorded, each with its end, on a clock the test moves. */
function slotsOf(options: Partial<EndpointSlotOptions> = {}) {
  const clock = { now: 0 }
  const started: string[] = []
  const releases = new Map<string, () => void>()
  const slots = new EndpointSlots<string>(
    {
      perEndpoint: 2,
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
  /** Ends the attempts of these jobs. */
  const end = (...jobs: string[]) => {
    for (const job of jobs) releases.get(job)!()
  }
  const jobsOf = (list: { job: string }[]) => list.map((x) => x.job)
  return { slots, clock, started, end, jobsOf }
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
})
