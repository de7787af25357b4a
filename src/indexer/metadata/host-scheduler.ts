/**
 * Fair scheduling of metadata and media fetches: work is queued per host
 * (and per collection inside a host); a host gets a bounded number of
 * requests in flight and of queued fetches; hosts are served round-robin, and
 * the collections of a host round-robin too, so a slow or failing host only
 * delays its own tokens. A host that keeps failing or timing out is backed
 * off as a whole by a circuit breaker (open for a cooldown that doubles, then
 * one half-open probe); a 429 with Retry-After opens it for that long.
 */
import type { BackedOffHostState } from '@/db/indexer-state'
import { FetchFailure, type MetadataOutcome } from './outcome'

export interface HostBudget {
  /** Requests in flight to the host at once. */
  concurrency: number
  /** Fetches waiting for the host; more are refused as `busy` (the caller defers them). */
  maxQueued: number
  /** Waiting fetches of one collection on this host; more are refused as `busy`. */
  maxQueuedPerGroup: number
}

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
  /** Consecutive timeouts / connection failures / 429 / 502-504 that open the breaker. */
  failureThreshold?: number
  /** First open period; doubles on each failed probe up to maxCooldownMs. */
  cooldownMs?: number
  maxCooldownMs?: number
  now?: () => number
  /** Told when a host is backed off (open) or recovers (closed). */
  onBreaker?: (event: { host: string; state: 'open' | 'closed'; until: number; outcome: string }) => void
}

/** Thrown instead of fetching: the host is backed off (`open`) or has enough queued (`busy`). */
export class HostBackedOff extends FetchFailure {
  constructor(
    readonly host: string,
    readonly reason: 'open' | 'busy',
    /** Not before this time is it worth trying again. */
    readonly until: number,
    outcome: Exclude<MetadataOutcome, 'ok' | 'pending'>,
  ) {
    super(outcome, `${host} is ${reason === 'open' ? 'backed off' : 'busy'}`, true)
    this.name = 'HostBackedOff'
  }
}

type BreakerState = 'closed' | 'open' | 'half_open'

interface Waiter {
  start: () => void
  reject: (err: unknown) => void
}

class Lane {
  readonly groups = new Map<string, Waiter[]>()
  groupCursor = 0
  queued = 0
  inFlight = 0
  state: BreakerState = 'closed'
  failures = 0
  openUntil = 0
  cooldownMs: number
  lastOutcome: Exclude<MetadataOutcome, 'ok' | 'pending'> = 'timeout'
  /** Moving average of a fetch's duration, for how long a queue takes to drain. */
  avgMs = 200
  lastUsed = 0
  constructor(
    readonly key: string,
    readonly budget: HostBudget,
    readonly label: string,
    cooldownMs: number,
  ) {
    this.cooldownMs = cooldownMs
  }
}

export interface BackedOffHost extends BackedOffHostState {
  state: 'open' | 'half_open'
}

export interface SchedulerStats {
  hosts: number
  inFlight: number
  stalled: number
  queued: number
  backedOff: BackedOffHost[]
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
   * (`group`). Throws HostBackedOff instead when the host is backed off or
   * already has enough waiting.
   */
  async run<T>(
    host: string,
    group: string,
    fn: () => Promise<T>,
    options: { waitWhenBusy?: boolean } = {},
  ): Promise<T> {
    const lane = this.lane(host)
    lane.lastUsed = this.now()
    this.checkOpen(lane)
    const waiting = lane.groups.get(group)
    const cap = this.queueCap(lane)
    const full = lane.queued >= cap || (waiting?.length ?? 0) >= Math.min(cap, lane.budget.maxQueuedPerGroup)
    if (full && !options.waitWhenBusy) {
      throw new HostBackedOff(lane.label, 'busy', this.now() + this.drainMs(lane), lane.lastOutcome)
    }
    if ((this.stalledByGroup.get(group) ?? 0) >= (this.options.maxStalledPerGroup ?? 16)) {
      throw new HostBackedOff(lane.label, 'busy', this.now() + 5_000, lane.lastOutcome)
    }
    await new Promise<void>((start, reject) => {
      const list = waiting ?? []
      if (!waiting) lane.groups.set(group, list)
      list.push({ start, reject })
      lane.queued++
      if (lane.queued === 1) this.ring.push(lane)
      this.pump()
    })
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
      lane.avgMs = lane.avgMs * 0.8 + (this.now() - started) * 0.2
      this.record(lane, failure)
      this.pump()
    }
  }

  /** The hosts currently backed off, and totals. */
  stats(): SchedulerStats {
    const now = this.now()
    const backedOff: BackedOffHost[] = []
    let queued = 0
    for (const lane of this.lanes.values()) {
      queued += lane.queued
      if (lane.state !== 'closed') {
        backedOff.push({
          host: lane.label,
          state: lane.state === 'open' && lane.openUntil > now ? 'open' : 'half_open',
          until: new Date(lane.openUntil).toISOString(),
          outcome: lane.lastOutcome,
        })
      }
    }
    this.prune(now)
    return { hosts: this.lanes.size, inFlight: this.inFlight, stalled: this.stalled, queued, backedOff }
  }

  /** Is the host worth trying now (breaker closed, or open period over)? */
  available(host: string): boolean {
    const lane = this.lanes.get(host)
    if (lane === undefined) return true
    return lane.state !== 'open' || lane.openUntil <= this.now()
  }

  private lane(host: string): Lane {
    let lane = this.lanes.get(host)
    if (!lane) {
      const gatewayLabel = this.options.gateways?.get(host)
      const budget = gatewayLabel ? this.options.gateway : this.options.host
      lane = new Lane(host, budget, gatewayLabel ?? host, this.cooldownMs)
      this.lanes.set(host, lane)
    }
    return lane
  }

  /** An open breaker whose period is over lets one probe through (half-open). */
  private checkOpen(lane: Lane) {
    if (lane.state !== 'open') return
    if (lane.openUntil > this.now())
      throw new HostBackedOff(lane.label, 'open', lane.openUntil, lane.lastOutcome)
    lane.state = 'half_open'
  }

  /**
   * How many fetches may wait for a host: about two seconds of its work at its
   * current pace, within its budget. A slow host gets few, so its tokens stay
   * in the database instead of filling memory.
   */
  private queueCap(lane: Lane): number {
    if (!Number.isFinite(lane.budget.maxQueued)) return Number.POSITIVE_INFINITY
    const perTwoSeconds = (2_000 / Math.max(lane.avgMs, 1)) * lane.budget.concurrency
    return Math.max(lane.budget.concurrency * 2, Math.min(lane.budget.maxQueued, Math.round(perTwoSeconds)))
  }

  private drainMs(lane: Lane): number {
    const ms = ((lane.queued + lane.inFlight) * lane.avgMs) / lane.budget.concurrency
    return Math.min(Math.max(ms, 250), 10 * 60_000)
  }

  private canStart(lane: Lane): boolean {
    if (lane.state === 'open') return false
    if (lane.state === 'half_open') return lane.inFlight === 0
    return lane.inFlight < lane.budget.concurrency
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
      if (!this.canStart(lane)) {
        this.ringCursor++
        idle++
        continue
      }
      idle = 0
      const groups = [...lane.groups.keys()]
      const group = groups[lane.groupCursor++ % groups.length]!
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
      waiter.start()
    }
  }

  private record(lane: Lane, err: unknown) {
    const fault = hostFault(err)
    if (!fault) {
      lane.failures = 0
      if (lane.state !== 'closed') {
        lane.state = 'closed'
        lane.cooldownMs = this.cooldownMs
        this.options.onBreaker?.({ host: lane.label, state: 'closed', until: 0, outcome: 'ok' })
      }
      return
    }
    lane.lastOutcome = fault.outcome
    lane.failures++
    if (fault.retryAfterMs !== undefined) {
      this.open(lane, Math.min(Math.max(fault.retryAfterMs, 1_000), 3_600_000), false)
    } else if (lane.state === 'half_open' || lane.failures >= this.threshold) {
      this.open(lane, lane.cooldownMs, true)
    }
  }

  private open(lane: Lane, ms: number, grow: boolean) {
    lane.state = 'open'
    lane.openUntil = Math.max(lane.openUntil, this.now() + ms)
    this.options.onBreaker?.({
      host: lane.label,
      state: 'open',
      until: lane.openUntil,
      outcome: lane.lastOutcome,
    })
    if (grow) lane.cooldownMs = Math.min(lane.cooldownMs * 2, this.maxCooldownMs)
    // Whatever waits for the host is handed back: the caller defers it to the end of the period.
    const err = new HostBackedOff(lane.label, 'open', lane.openUntil, lane.lastOutcome)
    for (const list of lane.groups.values()) for (const w of list) w.reject(err)
    lane.groups.clear()
    if (lane.queued > 0) {
      const at = this.ring.indexOf(lane)
      if (at >= 0) {
        this.ring.splice(at, 1)
        if (at < this.ringCursor) this.ringCursor--
      }
    }
    lane.queued = 0
  }

  /** Forgets idle, closed hosts (memory stays flat with many hosts over time). */
  private prune(now: number) {
    if (this.lanes.size < 10_000) return
    for (const [key, lane] of this.lanes) {
      const idle = lane.queued === 0 && lane.inFlight === 0 && now - lane.lastUsed > 10 * 60_000
      if (idle && (lane.state === 'closed' || lane.openUntil < now)) this.lanes.delete(key)
    }
  }
}

/** Failures that say the host itself is unwell (not that one document is bad). */
export function hostFault(err: unknown): FetchFailure | null {
  if (!(err instanceof FetchFailure) || err instanceof HostBackedOff) return null
  return err.hostFault ? err : null
}
