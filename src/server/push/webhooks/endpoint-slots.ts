/**
 * Attempt slots per endpoint in one process (docs/push.md, "Fair delivery"): at most
 * `perEndpoint` attempts to one endpoint at once, so that a receiver that hangs holds that many
 * of the process's attempt slots and no more, and other endpoints' events never wait behind it.
 *
 * A job fetched for an endpoint whose slots are all taken is held in memory (up to
 * `holdPerEndpoint`) and starts as soon as one of the endpoint's attempts ends, so a fast
 * receiver's slots never wait for a fetch. Beyond that the job is parked: it goes back to the
 * queue due only after a while (what brings it back if this process dies), and this process
 * pulls it forward, due at once, as soon as the endpoint's hold runs low. So an endpoint's
 * backlog moves at the pace its receiver takes it, with no estimate of that pace and no busy
 * loop of fetches. A job held longer than `maxHoldMs` (a slow receiver) is parked too: the job
 * queue's expiry of a job fetched and never finished must not come first.
 *
 * This module decides; the caller moves the jobs in the queue (webhook-delivery.ts).
 */

/** How long jobs pulled forward are expected back before the hold is topped up again (ms). */
const PULL_SETTLE_MS = 1_000

/** Where a fetched job went: to an attempt, held for the endpoint's next free slot, or to be parked. */
export type Placement = 'started' | 'held' | 'park'

/** A job to move in the queue, and its endpoint. */
export interface EndpointJob<Job> {
  endpointId: string
  job: Job
}

export interface EndpointSlotOptions {
  /** Attempts at once per endpoint. */
  perEndpoint: number
  /** Jobs held per endpoint for its next free slots. */
  holdPerEndpoint: number
  /** Held jobs over every endpoint. */
  maxHeld: number
  /** A job held this long is parked (ms). */
  maxHoldMs: number
  /** A parked job is pulled forward only this long after it was parked (ms): later it may be due on its own. */
  pullableMs: number
  /** Parked jobs remembered over every endpoint (beyond, a parked job comes back at its park time). */
  maxParked: number
}

interface EndpointLoad<Job> {
  /** Attempts in flight. */
  open: number
  /** Fetched jobs waiting for one of the endpoint's slots, first come first served. */
  held: { job: Job; heldAt: number }[]
  /** Its parked jobs this process may pull forward, oldest first. */
  parked: { job: Job; parkedAt: number }[]
  /** Jobs pulled forward and not fetched yet, counted until `incomingUntil` (another process may fetch them). */
  incoming: number
  incomingUntil: number
}

export class EndpointSlots<Job> {
  private readonly endpoints = new Map<string, EndpointLoad<Job>>()
  private heldJobs = 0
  private parkedJobs = 0

  /** `start` runs a job's attempt and calls `release` once the attempt has ended. */
  constructor(
    private readonly options: EndpointSlotOptions,
    private readonly start: (job: Job, release: () => void) => void,
    private readonly now: () => number = Date.now,
  ) {}

  /** Jobs held for a slot, over every endpoint. */
  get held(): number {
    return this.heldJobs
  }

  /** Endpoints with open attempts, held or parked jobs (what the process remembers). */
  get size(): number {
    return this.endpoints.size
  }

  /** Starts the job if its endpoint has a slot free, else holds it if there is room, else says to park it. */
  place(endpointId: string, job: Job): Placement {
    const load = this.loadOf(endpointId)
    if (load.incoming > 0) load.incoming--
    if (load.open < this.options.perEndpoint) {
      this.begin(load, job)
      return 'started'
    }
    if (load.held.length < this.options.holdPerEndpoint && this.heldJobs < this.options.maxHeld) {
      load.held.push({ job, heldAt: this.now() })
      this.heldJobs++
      return 'held'
    }
    return 'park'
  }

  /** Remembers a job parked in the queue, to pull it forward when its endpoint's hold runs low. */
  parked(endpointId: string, job: Job): void {
    if (this.parkedJobs >= this.options.maxParked) return
    this.loadOf(endpointId).parked.push({ job, parkedAt: this.now() })
    this.parkedJobs++
  }

  /**
   * What to move in the queue now: held jobs that waited too long (to park), and parked jobs
   * of endpoints whose hold runs low (to pull forward, as many as their hold takes).
   */
  sweep(): { park: EndpointJob<Job>[]; pull: EndpointJob<Job>[] } {
    const now = this.now()
    const { perEndpoint, holdPerEndpoint, maxHoldMs, pullableMs } = this.options
    const park: EndpointJob<Job>[] = []
    const pull: EndpointJob<Job>[] = []
    for (const [endpointId, load] of this.endpoints) {
      while (load.held.length > 0 && now - load.held[0]!.heldAt > maxHoldMs) {
        park.push({ endpointId, job: load.held.shift()!.job })
        this.heldJobs--
      }
      while (load.parked.length > 0 && now - load.parked[0]!.parkedAt > pullableMs) {
        load.parked.shift()
        this.parkedJobs--
      }
      const incoming = now < load.incomingUntil ? load.incoming : 0
      if (load.held.length + incoming < perEndpoint && load.parked.length > 0) {
        const pulled = load.parked.splice(0, holdPerEndpoint - load.held.length - incoming)
        for (const { job } of pulled) pull.push({ endpointId, job })
        this.parkedJobs -= pulled.length
        load.incoming = incoming + pulled.length
        load.incomingUntil = now + PULL_SETTLE_MS
      }
      if (load.open === 0 && load.held.length === 0 && load.parked.length === 0)
        this.endpoints.delete(endpointId)
    }
    return { park, pull }
  }

  /** Takes every held job out, and the parked ones still to pull (the process stops: they go back to the queue, due at once). */
  takeAll(): EndpointJob<Job>[] {
    const pullableSince = this.now() - this.options.pullableMs
    const jobs: EndpointJob<Job>[] = []
    for (const [endpointId, load] of this.endpoints) {
      for (const { job } of load.held.splice(0)) jobs.push({ endpointId, job })
      for (const { job, parkedAt } of load.parked.splice(0))
        if (parkedAt >= pullableSince) jobs.push({ endpointId, job })
    }
    this.heldJobs = 0
    this.parkedJobs = 0
    return jobs
  }

  private loadOf(endpointId: string): EndpointLoad<Job> {
    let load = this.endpoints.get(endpointId)
    if (!load) {
      load = { open: 0, held: [], parked: [], incoming: 0, incomingUntil: 0 }
      this.endpoints.set(endpointId, load)
    }
    return load
  }

  private begin(load: EndpointLoad<Job>, job: Job) {
    load.open++
    let released = false
    this.start(job, () => {
      if (released) return
      released = true
      load.open--
      const next = load.held.shift()
      if (next === undefined) return
      this.heldJobs--
      this.begin(load, next.job)
    })
  }
}
