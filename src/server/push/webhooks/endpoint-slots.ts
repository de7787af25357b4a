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
 * An endpoint earns its `perEndpoint` slots by answering: until an attempt to it has been
 * delivered in this process, and again after an attempt fails, it is not proven and has
 * `perUnprovenEndpoint`. The endpoints not proven share `unprovenShare` slots between them, in
 * turn, so that any number of receivers that hang leave the rest of the process's slots to the
 * endpoints that answer. Among them, those known to fail (their last attempt failed, or their
 * job is a retry, which follows a failed attempt) have at most `failingShare` of those slots and
 * wait behind the endpoints not tried yet, so a new endpoint is not held up by old failures.
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
  /** Attempts at once per endpoint whose last attempt in this process was delivered. */
  perEndpoint: number
  /** Attempts at once per endpoint not delivered to yet in this process, or whose last attempt failed. */
  perUnprovenEndpoint: number
  /** Attempts at once over every endpoint not proven. */
  unprovenShare: number
  /** Attempts at once over every endpoint known to fail (part of the share). */
  failingShare: number
  /** Jobs held per endpoint for its next free slots. */
  holdPerEndpoint: number
  /** Held jobs over every endpoint. */
  maxHeld: number
  /** A job held this long is parked (ms). */
  maxHoldMs: number
  /** An endpoint's last outcome is remembered this long (ms). */
  rememberMs: number
  /** Endpoints whose last outcome is remembered (beyond, the least recent are forgotten: not tried again). */
  maxRemembered: number
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

/** How an attempt ended: delivered, failed, or nothing sent (the delivery was done already, the process stops). */
export type AttemptOutcome = 'delivered' | 'failed' | undefined

/** What the process knows of an endpoint: delivered to (proven), failing, or not tried yet. */
export type EndpointState = 'proven' | 'failing' | 'untried'

export class EndpointSlots<Job> {
  private readonly endpoints = new Map<string, EndpointLoad<Job>>()
  /** Each endpoint's last outcome and when, least recent first (absent: not tried). */
  private readonly outcomes = new Map<string, { delivered: boolean; at: number }>()
  /** Endpoints not proven with jobs held, in the order they get the next free share slot: those not tried first. */
  private readonly waiting = { untried: new Set<string>(), failing: new Set<string>() }
  private heldJobs = 0
  private parkedJobs = 0
  /** Attempts in flight; of those, started while their endpoint was not proven; of those, while it was failing. */
  private allOpen = 0
  private sharedOpen = 0
  private failingOpen = 0

  /** `start` runs a job's attempt and calls `release` with its outcome once the attempt has ended. */
  constructor(
    private readonly options: EndpointSlotOptions,
    private readonly start: (job: Job, release: (outcome?: AttemptOutcome) => void) => void,
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

  /** Attempts in flight, by the state of their endpoint when they started (the share holds those not proven). */
  get inFlight(): Record<EndpointState, number> {
    return {
      proven: this.allOpen - this.sharedOpen,
      untried: this.sharedOpen - this.failingOpen,
      failing: this.failingOpen,
    }
  }

  /**
   * Starts the job if its endpoint has a slot free, else holds it if there is room, else says to
   * park it. `retry`: the job follows a failed attempt (its endpoint fails, unless this process
   * has delivered to it since).
   */
  place(endpointId: string, job: Job, retry = false): Placement {
    const load = this.loadOf(endpointId)
    if (load.incoming > 0) load.incoming--
    if (retry && !this.outcomes.has(endpointId)) this.record(endpointId, 'failed')
    if (this.canStart(endpointId, load)) {
      this.begin(endpointId, load, job)
      return 'started'
    }
    if (load.held.length < this.options.holdPerEndpoint && this.heldJobs < this.options.maxHeld) {
      load.held.push({ job, heldAt: this.now() })
      this.heldJobs++
      this.waitForShare(endpointId, load)
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
    const { holdPerEndpoint, maxHoldMs, pullableMs } = this.options
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
      if (load.held.length + incoming < this.slotsOf(endpointId) && load.parked.length > 0) {
        const pulled = load.parked.splice(0, holdPerEndpoint - load.held.length - incoming)
        for (const { job } of pulled) pull.push({ endpointId, job })
        this.parkedJobs -= pulled.length
        load.incoming = incoming + pulled.length
        load.incomingUntil = now + PULL_SETTLE_MS
      }
      if (load.open === 0 && load.held.length === 0 && load.parked.length === 0) {
        this.endpoints.delete(endpointId)
        this.leaveLine(endpointId)
      }
    }
    // Least recent first: forget outcomes until one is recent enough. (An endpoint in line
    // stays in its line until its turn, or until one of its attempts ends.)
    for (const [endpointId, { at }] of this.outcomes) {
      if (now - at <= this.options.rememberMs) break
      this.outcomes.delete(endpointId)
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
    this.waiting.untried.clear()
    this.waiting.failing.clear()
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

  private stateOf(endpointId: string): EndpointState {
    const outcome = this.outcomes.get(endpointId)
    if (outcome === undefined) return 'untried'
    return outcome.delivered ? 'proven' : 'failing'
  }

  /** The endpoint's attempts at once: all its slots once proven. */
  private slotsOf(endpointId: string): number {
    return this.stateOf(endpointId) === 'proven' ? this.options.perEndpoint : this.options.perUnprovenEndpoint
  }

  private canStart(endpointId: string, load: EndpointLoad<Job>): boolean {
    return load.open < this.slotsOf(endpointId) && this.shareHasRoom(this.stateOf(endpointId))
  }

  /** Whether the share has a slot for an endpoint in this state (a proven one needs none). */
  private shareHasRoom(state: EndpointState): boolean {
    if (state === 'proven') return true
    if (this.sharedOpen >= this.options.unprovenShare) return false
    return state === 'untried' || this.failingOpen < this.options.failingShare
  }

  private record(endpointId: string, outcome: AttemptOutcome) {
    if (outcome === undefined) return
    // Deleted first, so that the map stays in the order outcomes came in.
    this.outcomes.delete(endpointId)
    this.outcomes.set(endpointId, { delivered: outcome === 'delivered', at: this.now() })
    if (this.outcomes.size > this.options.maxRemembered)
      this.outcomes.delete(this.outcomes.keys().next().value!)
  }

  private begin(endpointId: string, load: EndpointLoad<Job>, job: Job) {
    const state = this.stateOf(endpointId)
    load.open++
    this.allOpen++
    if (state !== 'proven') this.sharedOpen++
    if (state === 'failing') this.failingOpen++
    let released = false
    this.start(job, (outcome) => {
      if (released) return
      released = true
      load.open--
      this.allOpen--
      if (state !== 'proven') this.sharedOpen--
      if (state === 'failing') this.failingOpen--
      this.record(endpointId, outcome)
      // Proven, its held jobs start on its own slots; else they wait at the end of the line of
      // its state, behind the endpoints that waited longer for the share.
      this.leaveLine(endpointId)
      if (this.stateOf(endpointId) === 'proven') this.startHeld(endpointId, load)
      else this.waitForShare(endpointId, load)
      this.startShareWaiters()
    })
  }

  /** Starts the endpoint's held jobs while it may. */
  private startHeld(endpointId: string, load: EndpointLoad<Job>) {
    while (load.held.length > 0 && this.canStart(endpointId, load)) {
      this.heldJobs--
      this.begin(endpointId, load, load.held.shift()!.job)
    }
    this.waitForShare(endpointId, load)
  }

  /**
   * Puts an endpoint not proven that holds jobs in line for the share, when the share (not its
   * own limit: the end of its own attempts starts its held jobs) is what keeps them waiting.
   */
  private waitForShare(endpointId: string, load: EndpointLoad<Job>) {
    if (load.held.length === 0 || load.open >= this.options.perUnprovenEndpoint) return
    const state = this.stateOf(endpointId)
    if (state !== 'proven') this.waiting[state].add(endpointId)
  }

  private leaveLine(endpointId: string) {
    this.waiting.untried.delete(endpointId)
    this.waiting.failing.delete(endpointId)
  }

  /** Gives free share slots to the endpoints waiting for one, in turn: those not tried first. */
  private startShareWaiters() {
    this.serveLine('untried')
    this.serveLine('failing')
  }

  private serveLine(state: 'untried' | 'failing') {
    for (const endpointId of this.waiting[state]) {
      if (!this.shareHasRoom(state)) return
      // Out of the line; back at the end of its state's line only if the share filled before
      // its turn was over.
      this.leaveLine(endpointId)
      const load = this.endpoints.get(endpointId)
      if (load) this.startHeld(endpointId, load)
    }
  }
}
