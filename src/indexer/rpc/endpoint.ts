/**
 * One JSON-RPC endpoint and what the indexer has learned about it: its
 * health (recent errors and latency), its head (the highest block it has
 * reported and a node has served: a load-balanced provider answers from
 * nodes a few blocks apart, and a number alone is only a claim),
 * a cool-down after a rate limit, and how many requests it takes at once
 * (like TCP: doubled per window of clean answers until the first overload,
 * then additive increase, multiplicative decrease: halved on 429/5xx and
 * time-outs, grown by one per window of clean answers).
 */
import { HttpJsonRpc, type RpcFaultKind, RpcRequestError } from './transport'

export type EndpointState = 'ok' | 'lagging' | 'rate_limited' | 'failing' | 'syncing'

export interface EndpointOptions {
  batchSize: number
  timeoutMs: number
  /** Most requests in flight at once. */
  maxConcurrency: number
  /** Blocks behind the best head from which an endpoint counts as lagging. */
  lagThreshold: bigint
  /** Rest an endpoint that keeps failing (only useful when another can take its traffic). */
  restOnFailure: boolean
  /** Largest answer accepted (rpc/transport.ts). */
  maxBodyBytes: number
}

const SLOW_START_LIMIT = 4

/**
 * Two lanes share an endpoint's slots: the sync loop's requests go first, and
 * background work (the metadata queue's eth_calls) takes at most half of the
 * slots and only those the sync loop does not wait for, so head-following
 * never queues behind a batch of tokenURI reads.
 */
export type Lane = 'sync' | 'background'

export class Endpoint {
  readonly wire: HttpJsonRpc
  readonly backgroundWire: HttpJsonRpc
  /**
   * Highest block this endpoint has reported, as far as a node served a block
   * there (takeServedHead); never lowered, except by a proven reorg.
   */
  head = -1n
  /** The node said it is still syncing (eth_syncing): never trusted as the head. */
  syncing = false
  /** Its head is far ahead of any block it serves (sync/sync.ts, servedHead): shown as failing. */
  headUnserved = false
  /** The chain id it answered last when that was not CHAIN_ID: no request goes to it meanwhile. */
  wrongChainId: number | null = null
  /** Exponentially weighted share of failed requests (0..1). */
  errorRate = 0
  /** Exponentially weighted latency of successful requests, ms. */
  latencyMs = 100
  /** No request before this time (Retry-After, or a back-off after repeated failures). */
  coolUntil = 0
  /**
   * No background request before this time: a Retry-After received by the
   * metadata queue's requests rests that lane only, so the sync loop's few
   * requests are not held up by the bulk traffic that ran into the limit
   * (a Retry-After received by the sync loop rests both lanes).
   */
  backgroundCoolUntil = 0
  private consecutiveFailures = 0
  private lastFault: RpcFaultKind | undefined
  /** Current concurrency limit (AIMD between 1 and maxConcurrency). */
  limit: number
  /**
   * Below this limit it grows by one per clean answer (slow start: doubled per
   * window); from it on by one per window. Unbounded until the first
   * overload, then the limit that overload left.
   */
  private slowStartThreshold = Number.POSITIVE_INFINITY
  private active = 0
  private activeBackground = 0
  /** Waiting requests per lane, lowest block first (see withSlot). */
  private readonly waiting: Record<Lane, Array<{ block: number; start: () => void }>> = {
    sync: [],
    background: [],
  }
  private lastDecrease = 0
  /** Failures already counted (see failed). */
  private readonly counted = new WeakSet<object>()
  readonly faults: Partial<Record<RpcFaultKind, number>> = {}
  requests = 0

  constructor(
    readonly url: string,
    /** Position in RPC_URL, for logs and status (the URL itself may carry an API key). */
    readonly index: number,
    private readonly options: EndpointOptions,
  ) {
    this.limit = Math.min(SLOW_START_LIMIT, options.maxConcurrency)
    const wire = {
      url,
      batchSize: options.batchSize,
      timeoutMs: options.timeoutMs,
      maxBodyBytes: options.maxBodyBytes,
    }
    this.wire = new HttpJsonRpc(wire, (exchange, block) => this.withSlot(exchange, 'sync', block))
    this.backgroundWire = new HttpJsonRpc(wire, (exchange, block) =>
      this.withSlot(exchange, 'background', block),
    )
  }

  /** `rpc#1 (host)`: enough to tell endpoints apart in a log without printing a key. */
  get label(): string {
    let host = 'unparsable url'
    try {
      host = new URL(this.url).host
    } catch {}
    return `rpc#${this.index + 1} (${host})`
  }

  private canStart(lane: Lane): boolean {
    const slots = Math.floor(this.limit)
    if (this.active >= slots) return false
    if (lane === 'sync') return true
    return this.waiting.sync.length === 0 && this.activeBackground < Math.max(1, Math.floor(slots / 2))
  }

  /**
   * Runs one exchange in a slot. Waiting exchanges start lowest block first
   * (requests without a block, such as the head, before all): the backfill
   * commits in block order, so a retried read of its oldest range must not
   * queue behind the reads of ranges after it.
   */
  private async withSlot(exchange: () => Promise<void>, lane: Lane, block: number): Promise<void> {
    while (!this.canStart(lane)) {
      await new Promise<void>((start) => {
        const queue = this.waiting[lane]
        let at = queue.length
        while (at > 0 && queue[at - 1]!.block > block) at--
        queue.splice(at, 0, { block, start })
      })
    }
    this.active++
    if (lane === 'background') this.activeBackground++
    try {
      await exchange()
    } finally {
      this.active--
      if (lane === 'background') this.activeBackground--
      this.wake()
    }
  }

  /** A freed or added slot goes to the sync lane first. */
  private wake() {
    if (this.waiting.sync.length > 0) {
      if (this.canStart('sync')) this.waiting.sync.shift()!.start()
    } else if (this.waiting.background.length > 0 && this.canStart('background')) {
      this.waiting.background.shift()!.start()
    }
  }

  /** Requests waiting for a slot, for choosing the least loaded endpoint. */
  get load(): number {
    return this.active + this.waiting.sync.length + this.waiting.background.length
  }

  succeeded(elapsedMs: number): void {
    this.answered(elapsedMs)
    this.consecutiveFailures = 0
    this.errorRate *= 0.9
    // Slow start (+1 per clean answer: doubled per window) until the first overload showed
    // where the provider's limit is; from then on additive increase, +1 per `limit` answers.
    if (this.limit < this.options.maxConcurrency) {
      const step = this.limit < this.slowStartThreshold ? 1 : 1 / this.limit
      this.limit = Math.min(this.options.maxConcurrency, this.limit + step)
      this.wake()
    }
  }

  /**
   * An attempt given up because its hedge answered first (rpc/hedge.ts): it
   * was at least this slow, which its latency learns; not a fault.
   */
  outpaced(elapsedMs: number): void {
    this.answered(elapsedMs)
  }

  /** One more request counted, and its time in the latency average. */
  private answered(elapsedMs: number): void {
    this.requests++
    this.latencyMs = this.latencyMs * 0.8 + elapsedMs * 0.2
  }

  /** When the lane may send again (now or earlier: at once). */
  restingUntil(lane: Lane): number {
    return lane === 'sync' ? this.coolUntil : Math.max(this.coolUntil, this.backgroundCoolUntil)
  }

  /**
   * Records a failed request; false when its fault was already recorded. A
   * failed HTTP exchange fails every item of its batch with the same error:
   * one fault, counted (and logged by the caller) once — fifty tokenURI reads
   * failed by one 502 page are not fifty consecutive failures.
   */
  failed(err: unknown, lane: Lane = 'sync'): boolean {
    this.requests++
    if (typeof err === 'object' && err !== null) {
      if (this.counted.has(err)) return false
      this.counted.add(err)
    }
    const kind = err instanceof RpcRequestError ? err.kind : 'network'
    this.faults[kind] = (this.faults[kind] ?? 0) + 1
    // A JSON-RPC error about the request (a revert, a range refusal), or an answer too large
    // for us, says nothing about the endpoint's health.
    if (kind === 'rpc' || kind === 'too_large') return true
    this.lastFault = kind
    this.errorRate = this.errorRate * 0.9 + 0.1
    this.consecutiveFailures++
    const now = Date.now()
    const overloaded =
      kind === 'rate_limited' || kind === 'timeout' || (kind === 'http' && isServerStatus(err))
    if (overloaded && now - this.lastDecrease > Math.max(100, 2 * this.latencyMs)) {
      // Multiplicative decrease, once per round trip: the failures of one overload halve once.
      this.limit = Math.max(1, this.limit / 2)
      this.slowStartThreshold = this.limit
      this.lastDecrease = now
    }
    const retryAfter = err instanceof RpcRequestError ? err.retryAfterMs : undefined
    if (retryAfter !== undefined) {
      const until = now + Math.min(retryAfter, 60_000)
      if (lane === 'sync') this.coolUntil = Math.max(this.coolUntil, until)
      else this.backgroundCoolUntil = Math.max(this.backgroundCoolUntil, until)
    } else if (this.options.restOnFailure && kind !== 'rate_limited' && this.consecutiveFailures >= 3) {
      // Failing again and again (down, dropping connections): rest it so others take the traffic.
      // A rate limit without Retry-After is handled by the halved concurrency instead.
      this.coolUntil = Math.max(
        this.coolUntil,
        now + Math.min(250 * 2 ** (this.consecutiveFailures - 3), 10_000),
      )
    }
    return true
  }

  /** The head of this endpoint's latest answer (a lagging backend may have given it, or a broken one). */
  reportedHead = -1n

  observeHead(block: bigint): void {
    this.reportedHead = block
  }

  /** Takes the reported head as this endpoint's, up to `served`: the highest head a node serves a block at. */
  takeServedHead(served: bigint): void {
    const head = this.reportedHead < served ? this.reportedHead : served
    if (head > this.head) this.head = head
  }

  state(bestHead: bigint, now = Date.now()): EndpointState {
    if (this.syncing) return 'syncing'
    if (this.headUnserved || this.wrongChainId !== null) return 'failing'
    if (this.coolUntil > now) return this.lastFault === 'rate_limited' ? 'rate_limited' : 'failing'
    if (this.consecutiveFailures > 0) return this.lastFault === 'rate_limited' ? 'rate_limited' : 'failing'
    if (bestHead >= 0n && bestHead - this.head > this.options.lagThreshold) return 'lagging'
    return 'ok'
  }

  /** Lower is better: latency, inflated by recent errors and by queueing. */
  score(): number {
    return this.latencyMs * (1 + 4 * this.errorRate) * (1 + this.load / Math.max(1, this.limit))
  }
}

function isServerStatus(err: unknown): boolean {
  const status = err instanceof RpcRequestError ? err.status : undefined
  return status !== undefined && (status >= 500 || status === 408)
}
