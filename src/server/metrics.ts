/**
 * The web process's Prometheus metrics (docs/operations.md, "Metrics"): requests
 * by route template and status, rate-limiter decisions, the credential cache,
 * the database pool. Built only when METRICS_PORT is set; without it nothing
 * is recorded (every recording site checks `metrics?.`).
 *
 * The request path pays one label lookup per record: label sets are built once
 * per (route, method, status) and kept, so a request allocates no label object.
 */
import type pg from 'pg'
import { Counter, Gauge, Histogram, Registry } from 'prom-client'
import type { PolicyName } from '@/server/ratelimit/policy'

/** The route label of a request no route matched (unknown path): never the raw path, whose values are unbounded. */
export const UNMATCHED_ROUTE = 'unmatched'

type RequestLabels = { route: string; method: string; status: string }
type DecisionLabels = { policy: string; scope: string; decision: string }

export class WebMetrics {
  readonly registry = new Registry()
  private readonly requests: Histogram<'route' | 'method' | 'status'>
  private readonly decisions: Counter<'policy' | 'scope' | 'decision'>
  private readonly cache: Counter<'result'>
  private readonly requestLabels = new Map<string, Map<string, Map<number, RequestLabels>>>()
  /** Label sets of allowed and of refused decisions, by policy. */
  private readonly decisionLabels = {
    allowed: new Map<string, DecisionLabels>(),
    refused: new Map<string, DecisionLabels>(),
  }
  private readonly hit = { result: 'hit' }
  private readonly miss = { result: 'miss' }

  constructor(pool: pg.Pool) {
    const registers = [this.registry]
    this.requests = new Histogram({
      name: 'nft_http_request_duration_seconds',
      help: 'Time from the arrival of a request to the end of its response, by route template, method and status (its _count is the number of requests).',
      labelNames: ['route', 'method', 'status'],
      // Most /v1 answers take a few milliseconds; the statement time-out bounds the tail.
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    })
    this.decisions = new Counter({
      name: 'nft_ratelimit_decisions_total',
      help: 'Rate-limit decisions, by policy, scope (ip or credential) and decision (allowed or refused).',
      labelNames: ['policy', 'scope', 'decision'],
      registers,
    })
    this.cache = new Counter({
      name: 'nft_credential_cache_total',
      help: 'Credential verifications answered from the process cache (hit) or by the database (miss).',
      labelNames: ['result'],
      registers,
    })
    // The pool's counts are read when Prometheus scrapes: nothing to do per checkout.
    const poolGauge = (name: string, help: string, read: () => number) =>
      new Gauge({
        name,
        help,
        registers,
        collect() {
          this.set(read())
        },
      })
    poolGauge(
      'nft_db_pool_connections',
      'Connections the database pool holds (idle and in use).',
      () => pool.totalCount,
    )
    poolGauge('nft_db_pool_idle_connections', 'Idle connections in the database pool.', () => pool.idleCount)
    poolGauge(
      'nft_db_pool_waiting_requests',
      'Queries waiting for a connection of the database pool (all connections busy).',
      () => pool.waitingCount,
    )
    poolGauge(
      'nft_db_pool_max_connections',
      'The most connections the database pool opens.',
      () => pool.options.max,
    )
  }

  /** One answered request: `route` is the route template (`/v1/collections/{address}`), never the raw path. */
  request(route: string, method: string, status: number, seconds: number): void {
    let byMethod = this.requestLabels.get(route)
    if (!byMethod) {
      byMethod = new Map()
      this.requestLabels.set(route, byMethod)
    }
    let byStatus = byMethod.get(method)
    if (!byStatus) {
      byStatus = new Map()
      byMethod.set(method, byStatus)
    }
    let labels = byStatus.get(status)
    if (!labels) {
      labels = { route, method, status: String(status) }
      byStatus.set(status, labels)
    }
    this.requests.observe(labels, seconds)
  }

  /** One rate-limiter decision. */
  limitDecision(policy: PolicyName, scope: 'ip' | 'credential', allowed: boolean): void {
    // A policy always applies to the same scope: policy and decision name the label set.
    const decision = allowed ? 'allowed' : 'refused'
    const byPolicy = this.decisionLabels[decision]
    let labels = byPolicy.get(policy)
    if (!labels) {
      labels = { policy, scope, decision }
      byPolicy.set(policy, labels)
    }
    this.decisions.inc(labels)
  }

  /** One credential verification: from the cache, or a database lookup. */
  credentialCache(hit: boolean): void {
    this.cache.inc(hit ? this.hit : this.miss)
  }
}
