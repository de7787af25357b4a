/**
 * Fair scheduling of metadata and media fetches: work is queued per host
 * (and per collection inside a host); a host gets a bounded number of
 * requests in flight and of queued fetches; hosts are served round-robin, and
 * the collections of a host round-robin too, so a slow or failing host only
 * delays its own tokens. Circuit breakers (./circuit-breaker.ts) back off a
 * collection on a host that keeps failing or timing out for it — a shared
 * host or gateway where only some paths or CIDs are slow — and the host as a
 * whole only when its failures span collections (or it answers 429 with
 * Retry-After). docs/metadata.md, "Fair scheduling".
 */
import type { BackedOffHostState } from '@/db/queries/indexer-state'
import { CircuitBreaker, type FailureOutcome } from './circuit-breaker'
import { type HostBudget, Lane, type Waiter } from './host-lane'
import { FetchFailure } from './outcome'

export interface HostSchedulerOptions {
  /**
   * Requests actively in flight over all hosts. A request still waiting after
   * stalledAfterMs (a slow or dead host) stops counting here, so stalled hosts
   * cannot take the machine's share from the fast ones; it still counts
   * toward maxInFlight.
   */
  concurrency: number
  /** Requests in flight at all, stalled ones included (sockets); default 8 × concurrency. */
  maxInFlight?: number
  /** Default 1,000 ms. */
  stalledAfterMs?: number
  /**
   * Longest wait in a host's queue of a fetch that finishes a token already in
   * memory (its media); past it the fetch is refused as `busy` (default 5,000 ms).
   */
  maxFinishingWaitMs?: number
  /**
   * Stalled requests one collection may hold over all hosts (default 16): a
   * collection whose tokens each name another slow host is bounded too.
   */
  maxStalledPerGroup?: number
  /** Budget of an ordinary host. */
  host: HostBudget
  /** Budget of a configured IPFS/Arweave gateway (many collections share it). */
  gateway: HostBudget
  /** host:port keys of the configured gateways, with the label shown for them. */
  gateways?: ReadonlyMap<string, string>
  /** Consecutive timeouts / connection failures / 429 / 502-504 that open a collection's breaker on a host. */
  failureThreshold?: number
  /** First open period; doubles on each failed probe up to maxCooldownMs. */
  cooldownMs?: number
  maxCooldownMs?: number
  now?: () => number
  /** Told when a host, or a collection on a host, is backed off (open) or recovers (closed). */
  onBreaker?: (event: BreakerEvent) => void
}

export interface BreakerEvent {
  host: string
  /** Set when the breaker is one collection's on the host. */
  collection?: string
  state: 'open' | 'closed'
  until: number
  outcome: string
}

/**
 * Collections whose breakers opened since the host's last success that back
 * off the host as a whole: failures that span collections are the host's.
 */
const HOST_SPAN = 2

/**
 * Thrown instead of fetching: the host is backed off (`open`) — for every
 * collection, or for `collection` only — or has enough queued (`busy`).
 */
export class HostBackedOff extends FetchFailure {
  constructor(
    readonly host: string,
    readonly reason: 'open' | 'busy',
    /** Not before this time is it worth trying again. */
    readonly until: number,
    outcome: FailureOutcome,
    readonly collection?: string,
  ) {
    const what = reason === 'busy' ? 'busy' : collection ? `backed off for ${collection}` : 'backed off'
    super(outcome, `${host} is ${what}`, true)
    this.name = 'HostBackedOff'
  }
}

export interface BackedOffHost extends BackedOffHostState {
  state: 'open' | 'half_open'
}

/** A collection backed off on one host (the host serves the others). */
export interface BackedOffCollection extends BackedOffHost {
  collection: string
}

export interface SchedulerStats {
  hosts: number
  inFlight: number
  stalled: number
  queued: number
  /** Hosts backed off as a whole. */
  backedOff: BackedOffHost[]
  backedOffCollections: BackedOffCollection[]
}

export class HostScheduler {
  private readonly lanes = new Map<string, Lane>()
  /** Round-robin ring of lanes with waiters. */
  private ring: Lane[] = []
  private ringCursor = 0
  private inFlight = 0
  /** In flight for longer than stalledAfterMs. */
  private stalled = 0
  private readonly stalledByGroup = new Map<string, number>()
  private readonly threshold: number
  private readonly cooldownMs: number
  private readonly maxCooldownMs: number
  private readonly now: () => number

  constructor(private readonly options: HostSchedulerOptions) {
    this.threshold = options.failureThreshold ?? 5
    this.cooldownMs = options.cooldownMs ?? 30_000
    this.maxCooldownMs = options.maxCooldownMs ?? 30 * 60_000
    this.now = options.now ?? Date.now
  }

  /**
   * Runs `fn` (one request to `host`) when the host and the machine have
   * room, in turn with other hosts and with the host's other collections
   * (`group`). Throws HostBackedOff instead when the host, or the collection
   * on it, is backed off, or the host already has enough waiting.
   *
   * `finishing`: the fetch finishes a token already in memory (its image or
   * animation). It may wait while the host has up to twice its queue cap
   * waiting (a new token's document is refused at the cap, so tokens already
   * read go first), and for maxFinishingWaitMs at most: a slow host never
   * holds the tokens in memory for long. Refused, it is told the host's next
   * free turn (Lane.reserveTurn), so refused tokens come back at the pace the
   * host serves them (docs/metadata.md, "Slow media hosts").
   */
  async run<T>(
    host: string,
    group: string,
    fn: () => Promise<T>,
    options: { finishing?: boolean } = {},
  ): Promise<T> {
    const lane = this.lane(host)
    lane.lastUsed = this.now()
    this.checkOpen(lane, group)
    const waiting = lane.groups.get(group)
    const finishing = options.finishing ?? false
    const cap = lane.queueCap() * (finishing ? 2 : 1)
    const groupCap = Math.min(cap, lane.budget.maxQueuedPerGroup * (finishing ? 2 : 1))
    const busyUntil = (soonest: number) =>
      finishing ? Math.max(soonest, lane.reserveTurn(this.now())) : soonest
    if (lane.queued >= cap || (waiting?.length ?? 0) >= groupCap) {
      throw new HostBackedOff(lane.label, 'busy', busyUntil(this.now() + lane.drainMs()), lane.lastOutcome)
    }
    if ((this.stalledByGroup.get(group) ?? 0) >= (this.options.maxStalledPerGroup ?? 16)) {
      throw new HostBackedOff(lane.label, 'busy', busyUntil(this.now() + 5_000), lane.lastOutcome)
    }
    const breaker = await new Promise<CircuitBreaker | undefined>((start, reject) => {
      const list = waiting ?? []
      if (!waiting) lane.groups.set(group, list)
      const waiter: Waiter = { start, reject }
      if (finishing) this.limitWait(lane, group, waiter)
      list.push(waiter)
      lane.queued++
      if (lane.queued === 1) this.ring.push(lane)
      this.pump()
    })
    // A probe of a collection already known to fail on this host: its failure is the collection's.
    const probe = breaker?.state === 'half_open'
    const started = this.now()
    let failure: unknown = null
    let stalled = false
    const stallTimer = setTimeout(() => {
      stalled = true
      this.stalled++
      this.stalledByGroup.set(group, (this.stalledByGroup.get(group) ?? 0) + 1)
      this.pump()
    }, this.options.stalledAfterMs ?? 1_000)
    stallTimer.unref?.()
    try {
      return await fn()
    } catch (err) {
      failure = err
      throw err
    } finally {
      clearTimeout(stallTimer)
      if (stalled) {
        this.stalled--
        const n = (this.stalledByGroup.get(group) ?? 1) - 1
        if (n > 0) this.stalledByGroup.set(group, n)
        else this.stalledByGroup.delete(group)
      }
      this.inFlight--
      lane.inFlight--
      if (breaker) breaker.inFlight--
      lane.avgMs = lane.avgMs * 0.8 + (this.now() - started) * 0.2
      this.record(lane, group, failure, probe)
      this.pump()
    }
  }

  /**
   * Refuses a finishing fetch still waiting after maxFinishingWaitMs as `busy`
   * (taking it out of the host's queue); once started or refused otherwise, nothing.
   */
  private limitWait(lane: Lane, group: string, waiter: Waiter) {
    const { start, reject } = waiter
    const timer = setTimeout(() => {
      const list = lane.groups.get(group)
      const at = list?.indexOf(waiter) ?? -1
      if (!list || at < 0) return
      list.splice(at, 1)
      if (list.length === 0) lane.groups.delete(group)
      lane.queued--
      if (lane.queued === 0) this.leaveRing(lane)
      reject(new HostBackedOff(lane.label, 'busy', lane.reserveTurn(this.now()), lane.lastOutcome))
    }, this.options.maxFinishingWaitMs ?? 5_000)
    timer.unref?.()
    waiter.start = (breaker) => {
      clearTimeout(timer)
      start(breaker)
    }
    waiter.reject = (err) => {
      clearTimeout(timer)
      reject(err)
    }
  }

  /** The hosts and the collections on hosts currently backed off, and totals. */
  stats(): SchedulerStats {
    const now = this.now()
    const backedOff: BackedOffHost[] = []
    const backedOffCollections: BackedOffCollection[] = []
    const shown = (host: string, b: CircuitBreaker): BackedOffHost => ({
      host,
      state: b.shownState(now),
      until: new Date(b.openUntil).toISOString(),
      outcome: b.lastOutcome,
    })
    let queued = 0
    for (const lane of this.lanes.values()) {
      queued += lane.queued
      if (lane.breaker.state !== 'closed') backedOff.push(shown(lane.label, lane.breaker))
      for (const [collection, b] of lane.groupBreakers)
        if (b.state !== 'closed') backedOffCollections.push({ ...shown(lane.label, b), collection })
    }
    this.prune(now)
    return {
      hosts: this.lanes.size,
      inFlight: this.inFlight,
      stalled: this.stalled,
      queued,
      backedOff,
      backedOffCollections,
    }
  }

  /** Is the host worth trying now (its own breaker closed, or open period over)? */
  available(host: string): boolean {
    const lane = this.lanes.get(host)
    if (lane === undefined) return true
    return lane.breaker.state !== 'open' || lane.breaker.openUntil <= this.now()
  }

  private lane(host: string): Lane {
    let lane = this.lanes.get(host)
    if (!lane) {
      const gatewayLabel = this.options.gateways?.get(host)
      const budget = gatewayLabel ? this.options.gateway : this.options.host
      lane = new Lane(
        host,
        budget,
        gatewayLabel ?? host,
        () => new CircuitBreaker(this.cooldownMs, this.maxCooldownMs),
      )
      this.lanes.set(host, lane)
    }
    return lane
  }

  /** Refuses a request while the host, or the collection on it, is backed off. */
  private checkOpen(lane: Lane, group: string) {
    const now = this.now()
    if (lane.breaker.refuses(now))
      throw new HostBackedOff(lane.label, 'open', lane.breaker.openUntil, lane.breaker.lastOutcome)
    const breaker = lane.groupBreakers.get(group)
    if (breaker?.refuses(now))
      throw new HostBackedOff(lane.label, 'open', breaker.openUntil, breaker.lastOutcome, group)
  }

  /** Starts waiters round-robin over hosts, and over collections inside a host. */
  private pump() {
    let idle = 0
    const maxInFlight = this.options.maxInFlight ?? this.options.concurrency * 8
    while (
      this.inFlight - this.stalled < this.options.concurrency &&
      this.inFlight < maxInFlight &&
      this.ring.length > 0 &&
      idle < this.ring.length
    ) {
      if (this.ringCursor >= this.ring.length) this.ringCursor = 0
      const lane = this.ring[this.ringCursor]!
      const group = lane.canStart() ? lane.nextGroup() : undefined
      if (group === undefined) {
        this.ringCursor++
        idle++
        continue
      }
      idle = 0
      const list = lane.groups.get(group)!
      const waiter = list.shift()!
      if (list.length === 0) lane.groups.delete(group)
      lane.queued--
      if (lane.queued === 0) {
        this.ring.splice(this.ringCursor, 1)
        lane.groupCursor = 0
      } else this.ringCursor++
      lane.inFlight++
      this.inFlight++
      const breaker = lane.groupBreakers.get(group)
      if (breaker) breaker.inFlight++
      waiter.start(breaker)
    }
  }

  /**
   * Books a request's outcome. A success closes the host's breaker and the
   * collection's. A host fault counts against the collection; the host opens
   * when collections' breakers opened since its last success reach HOST_SPAN,
   * at once on Retry-After, or when its own probe fails.
   */
  private record(lane: Lane, group: string, err: unknown, probe: boolean) {
    const fault = hostFault(err)
    if (!fault) {
      lane.successes++
      if (lane.breaker.succeeded()) this.told(lane, lane.breaker, 'closed')
      const breaker = lane.groupBreakers.get(group)
      lane.groupBreakers.delete(group)
      if (breaker?.succeeded()) this.told(lane, breaker, 'closed', group)
      return
    }
    lane.lastOutcome = fault.outcome
    if (fault.retryAfterMs !== undefined) {
      // A rate limit is the host's, whichever collection met it.
      lane.breaker.lastOutcome = fault.outcome
      this.openHost(lane, Math.min(Math.max(fault.retryAfterMs, 1_000), 3_600_000), false)
      return
    }
    const breaker = lane.groupBreaker(group)
    breaker.lastOutcome = fault.outcome
    breaker.failures++
    if (breaker.state === 'half_open' || breaker.failures >= this.threshold) {
      if (breaker.state === 'closed') breaker.openedAfter = lane.successes
      this.openGroup(lane, group, breaker)
    }
    if (probe) return
    const host = lane.breaker
    host.lastOutcome = fault.outcome
    if (host.state === 'half_open' || (host.state === 'closed' && lane.failingCollections() >= HOST_SPAN))
      this.openHost(lane, host.cooldownMs, true)
  }

  private told(lane: Lane, breaker: CircuitBreaker, state: 'open' | 'closed', collection?: string) {
    this.options.onBreaker?.({
      host: lane.label,
      ...(collection === undefined ? {} : { collection }),
      state,
      until: state === 'open' ? breaker.openUntil : 0,
      outcome: state === 'open' ? breaker.lastOutcome : 'ok',
    })
  }

  /** Backs the host off for every collection; whatever waits for it is handed back. */
  private openHost(lane: Lane, ms: number, grow: boolean) {
    lane.breaker.open(this.now(), ms, grow)
    this.told(lane, lane.breaker, 'open')
    // The caller defers what is handed back to the end of the period.
    const err = new HostBackedOff(lane.label, 'open', lane.breaker.openUntil, lane.breaker.lastOutcome)
    for (const list of lane.groups.values()) for (const w of list) w.reject(err)
    lane.groups.clear()
    lane.queued = 0
    this.leaveRing(lane)
  }

  /** Backs one collection off on the host; its waiting fetches are handed back. */
  private openGroup(lane: Lane, group: string, breaker: CircuitBreaker) {
    breaker.open(this.now(), breaker.cooldownMs, true)
    this.told(lane, breaker, 'open', group)
    const list = lane.groups.get(group)
    if (!list) return
    const err = new HostBackedOff(lane.label, 'open', breaker.openUntil, breaker.lastOutcome, group)
    for (const w of list) w.reject(err)
    lane.groups.delete(group)
    lane.queued -= list.length
    if (lane.queued === 0) this.leaveRing(lane)
  }

  /** Takes a lane with nothing waiting out of the round-robin ring. */
  private leaveRing(lane: Lane) {
    const at = this.ring.indexOf(lane)
    if (at < 0) return
    this.ring.splice(at, 1)
    if (at < this.ringCursor) this.ringCursor--
    lane.groupCursor = 0
  }

  /** Forgets idle, closed hosts (memory stays flat with many hosts over time). */
  private prune(now: number) {
    if (this.lanes.size < 10_000) return
    for (const [key, lane] of this.lanes) {
      const idle = lane.queued === 0 && lane.inFlight === 0 && now - lane.lastUsed > 10 * 60_000
      if (idle && (lane.breaker.state === 'closed' || lane.breaker.openUntil < now)) this.lanes.delete(key)
    }
  }
}

/** Failures that say the host itself is unwell (not that one document is bad). */
export function hostFault(err: unknown): FetchFailure | null {
  if (!(err instanceof FetchFailure) || err instanceof HostBackedOff) return null
  return err.hostFault ? err : null
}
