/**
 * The endpoints of RPC_URL (a comma-separated list) and the choice among
 * them: each request goes to the healthiest endpoint that can answer it
 * (not cooling down after a rate limit, not failing, not behind the block it
 * needs), so one provider failing or lagging moves traffic to the others
 * without losing progress. docs/indexer.md, "Providers".
 */
import type { RpcEndpointState } from '@/db/queries/indexer-state'
import { Endpoint, type EndpointOptions, type EndpointState, type Lane } from './endpoint'
import { HedgePolicy } from './hedge'
import { MAX_BODY_BYTES, type RpcFaultKind } from './transport'

/** Told of every JSON-RPC attempt (the process's metrics, src/indexer/metrics.ts). */
export interface RpcObserver {
  /** `endpoint`: 0-based position in RPC_URL; `fault`: set when the attempt failed. */
  rpcAttempt(method: string, endpoint: number, fault?: RpcFaultKind): void
  /** A request with no answer yet was sent once more, to `endpoint` (rpc/hedge.ts). */
  rpcHedge(method: string, endpoint: number): void
  /** An eth_getLogs range answer from `endpoint` left out the logs of blocks past its node's head (rpc/get-logs.ts). */
  rpcShortAnswer(endpoint: number): void
}

export interface EndpointPoolOptions extends Partial<EndpointOptions> {
  urls: string[]
  observer?: RpcObserver
}

export interface PickOptions {
  /** The request reads this block: endpoints known to be behind it come last. */
  minBlock?: bigint
  /** Prefer other endpoints (a verification read avoids the first read's endpoint). */
  avoid?: ReadonlySet<Endpoint>
  /** Endpoints that already failed this request. */
  exclude?: ReadonlySet<Endpoint>
  /** The lane asking (default sync): a background request also waits out the background lane's rest. */
  lane?: Lane
}

/** What indexer_state.rpc_endpoints records of an endpoint. */
export interface EndpointSummary extends RpcEndpointState {
  state: EndpointState
}

/** How long a request waits when every endpoint it may use serves another chain. */
const WRONG_CHAIN_WAIT_MS = 1_000

export class EndpointPool {
  readonly endpoints: Endpoint[]
  readonly observer: RpcObserver | undefined
  /** When a slow request is sent again, shared by every Rpc of the process. */
  readonly hedging: HedgePolicy
  private readonly settings: EndpointOptions

  constructor(options: EndpointPoolOptions) {
    if (options.urls.length === 0) throw new Error('at least one RPC endpoint is required')
    this.settings = {
      batchSize: options.batchSize ?? 100,
      timeoutMs: options.timeoutMs ?? 15_000,
      maxConcurrency: options.maxConcurrency ?? 32,
      lagThreshold: options.lagThreshold ?? 5n,
      restOnFailure: options.restOnFailure ?? options.urls.length > 1,
      maxBodyBytes: options.maxBodyBytes ?? MAX_BODY_BYTES,
    }
    this.endpoints = options.urls.map((url, i) => new Endpoint(url, i, this.settings))
    this.observer = options.observer
    this.hedging = new HedgePolicy(this.settings.timeoutMs)
  }

  /**
   * Requests the endpoints take at once now: their AIMD limits summed (a resting
   * endpoint counts, it comes back). The backfill keeps this many ranges reading.
   */
  get capacity(): number {
    let slots = 0
    for (const e of this.endpoints) slots += Math.floor(e.limit)
    return slots
  }

  /** The best head any trusted endpoint has reported. */
  get head(): bigint {
    let best = -1n
    let any = -1n
    for (const e of this.endpoints) {
      if (e.head > any) any = e.head
      if (!e.syncing && e.head > best) best = e.head
    }
    // Only syncing endpoints: their head is all there is (status shows them as syncing).
    return best >= 0n ? best : any
  }

  /**
   * The endpoint for the next request, or how long to wait until one can take
   * it (every endpoint is cooling down after a rate limit: Retry-After is honoured).
   */
  pick(options: PickOptions = {}): Endpoint | { waitMs: number } {
    const now = Date.now()
    let best: Endpoint | undefined
    let bestRank = Number.POSITIVE_INFINITY
    let soonest = Number.POSITIVE_INFINITY
    for (const e of this.endpoints) {
      if (options.exclude?.has(e)) continue
      // Serving another chain: asked again by the sync loop only, until it answers CHAIN_ID.
      if (e.wrongChainId !== null) {
        soonest = Math.min(soonest, WRONG_CHAIN_WAIT_MS)
        continue
      }
      const resting = e.restingUntil(options.lane ?? 'sync')
      if (resting > now) {
        soonest = Math.min(soonest, resting - now)
        continue
      }
      // Ranks: a tier (each condition pushes an endpoint behind every better one), then the score.
      let tier = 0
      if (options.avoid?.has(e)) tier += 1
      if (options.minBlock !== undefined && e.head < options.minBlock) tier += 2
      if (e.syncing) tier += 4
      const rank = tier * 1e9 + e.score()
      if (rank < bestRank) {
        best = e
        bestRank = rank
      }
    }
    if (best) return best
    if (soonest !== Number.POSITIVE_INFINITY) return { waitMs: soonest }
    // Every endpoint failed this request already: start over with the healthiest.
    return this.pick({ ...options, exclude: undefined })
  }

  /** The endpoint whose latest answer named the highest head (a shorter chain shows here first). */
  get latest(): Endpoint | undefined {
    let best: Endpoint | undefined
    for (const e of this.endpoints)
      if (e.reportedHead >= 0n && (!best || e.reportedHead > best.reportedHead)) best = e
    return best
  }

  /** Forgets heads after a reorganisation proven by block hashes shortened the chain. */
  resetHeads(head: bigint): void {
    for (const e of this.endpoints) if (e.head > head) e.head = head
  }

  summary(): EndpointSummary[] {
    const head = this.head
    return this.endpoints.map((e) => ({
      endpoint: e.index + 1,
      state: e.state(head),
      head: e.head >= 0n ? e.head.toString() : null,
    }))
  }
}
