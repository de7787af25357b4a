/**
 * The web process's Prometheus metrics (docs/operations.md, "Metrics"): requests
 * by route template and status, rate-limiter decisions, the credential cache,
 * webhook attempts, the database pool. Built only when METRICS_PORT is set; without it nothing
 * is recorded (every recording site checks `metrics?.`).
 *
 * The request path only adds to numbers in place: each label set (route,
 * method and status; policy and decision; cache result) gets a cell once, and
 * a record is a map lookup and an increment. prom-client's own observe() and
 * inc() hash and validate the labels on every call, about 1 µs each, which was
 * a tenth of a cached /v1 request (docs/api.md, "The request path"); the cells
 * are turned into Prometheus samples only when Prometheus scrapes.
 */
import type pg from 'pg'
import { Gauge, type Metric, Registry } from 'prom-client'
import type { PolicyName } from '@/server/ratelimit/policy'

/** The route label of a request no route matched (unknown path): never the raw path, whose values are unbounded. */
export const UNMATCHED_ROUTE = 'unmatched'

/** Upper bounds (seconds) of the request histogram: most /v1 answers take a few ms; the statement time-out bounds the tail. */
const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

type Labels = Record<string, string>
/** One sample line, as prom-client's registry formats it. */
type Sample = { labels: Labels; value: number; metricName?: string }

/**
 * A counter or histogram whose values live in cells its recorders hold. It
 * answers the registry's get() (the shape prom-client's own metrics return),
 * so the registry formats it with the others.
 */
abstract class CellMetric<Cell> {
  protected readonly cells: Cell[] = []

  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: 'counter' | 'histogram',
    registry: Registry,
  ) {
    // The registry reads name, help, type and get(); prom-client types only its own classes.
    registry.registerMetric(this as unknown as Metric)
  }

  protected abstract samples(): Sample[]

  async get() {
    return { name: this.name, help: this.help, type: this.type, aggregator: 'sum', values: this.samples() }
  }
}

interface CounterCell {
  labels: Labels
  value: number
}

class CellCounter extends CellMetric<CounterCell> {
  constructor(name: string, help: string, registry: Registry) {
    super(name, help, 'counter', registry)
  }

  /** The cell of one label set: `cell.value++` counts. */
  cell(labels: Labels): CounterCell {
    const cell = { labels, value: 0 }
    this.cells.push(cell)
    return cell
  }

  protected samples(): Sample[] {
    return this.cells.map(({ labels, value }) => ({ labels, value }))
  }
}

interface HistogramCell {
  labels: Labels
  /** Observations per bucket (not cumulative), the last one above every bound. */
  buckets: Float64Array
  sum: number
  count: number
}

class CellHistogram extends CellMetric<HistogramCell> {
  constructor(name: string, help: string, registry: Registry) {
    super(name, help, 'histogram', registry)
  }

  cell(labels: Labels): HistogramCell {
    const cell = { labels, buckets: new Float64Array(BUCKETS.length + 1), sum: 0, count: 0 }
    this.cells.push(cell)
    return cell
  }

  static observe(cell: HistogramCell, value: number): void {
    let i = 0
    while (i < BUCKETS.length && value > BUCKETS[i]!) i++
    cell.buckets[i]!++
    cell.sum += value
    cell.count++
  }

  protected samples(): Sample[] {
    const out: Sample[] = []
    for (const { labels, buckets, sum, count } of this.cells) {
      let cumulative = 0
      BUCKETS.forEach((bound, i) => {
        cumulative += buckets[i]!
        out.push({
          labels: { ...labels, le: String(bound) },
          value: cumulative,
          metricName: `${this.name}_bucket`,
        })
      })
      out.push({ labels: { ...labels, le: '+Inf' }, value: count, metricName: `${this.name}_bucket` })
      out.push({ labels, value: sum, metricName: `${this.name}_sum` })
      out.push({ labels, value: count, metricName: `${this.name}_count` })
    }
    return out
  }
}

/** The webhook attempt loop's slots (src/server/push/webhooks/endpoint-slots.ts). */
export interface WebhookSlotCounts {
  inFlight: { proven: number; untried: number; failing: number }
  held: number
}

export class WebMetrics {
  readonly registry = new Registry()
  private readonly requests: CellHistogram
  private readonly decisions: CellCounter
  /** Cells by route, then method, then status. */
  private readonly requestCells = new Map<string, Map<string, Map<number, HistogramCell>>>()
  /** Cells of allowed and of refused decisions, by policy (a policy always has the same scope). */
  private readonly decisionCells = {
    allowed: new Map<string, CounterCell>(),
    refused: new Map<string, CounterCell>(),
  }
  private readonly cacheHits: CounterCell
  private readonly cacheMisses: CounterCell
  private readonly webhookAttempts: { delivered: CounterCell; failed: CounterCell }
  private readonly webhookDisabled: CounterCell
  /** Reads the webhook attempt loop's slots at scrape time, once delivery has started. */
  private readWebhookSlots: (() => WebhookSlotCounts) | undefined

  constructor(pool: pg.Pool) {
    const registry = this.registry
    this.requests = new CellHistogram(
      'nft_http_request_duration_seconds',
      'Time from the arrival of a request to the end of its response, by route template, method and status (its _count is the number of requests).',
      registry,
    )
    this.decisions = new CellCounter(
      'nft_ratelimit_decisions_total',
      'Rate-limit decisions, by policy, scope (ip or credential) and decision (allowed or refused).',
      registry,
    )
    const cache = new CellCounter(
      'nft_credential_cache_total',
      'Credential verifications answered from the process cache (hit) or by the database (miss).',
      registry,
    )
    this.cacheHits = cache.cell({ result: 'hit' })
    this.cacheMisses = cache.cell({ result: 'miss' })
    const attempts = new CellCounter(
      'nft_webhook_attempts_total',
      'Webhook delivery attempts by this process, by outcome (delivered: a 2xx; failed: anything else).',
      registry,
    )
    this.webhookAttempts = {
      delivered: attempts.cell({ outcome: 'delivered' }),
      failed: attempts.cell({ outcome: 'failed' }),
    }
    this.webhookDisabled = new CellCounter(
      'nft_webhook_endpoints_disabled_total',
      'Webhook endpoints this process disabled after their failure run.',
      registry,
    ).cell({})
    const readSlots = () => this.readWebhookSlots?.()
    new Gauge({
      name: 'nft_webhook_attempts_in_flight',
      help: 'Webhook attempts in flight in this process, by what it knew of their endpoint when they started: proven (delivered to), untried, failing (docs/push.md, "Fair delivery").',
      labelNames: ['endpoints'],
      registers: [registry],
      collect() {
        const inFlight = readSlots()?.inFlight
        for (const endpoints of ['proven', 'untried', 'failing'] as const)
          this.set({ endpoints }, inFlight?.[endpoints] ?? 0)
      },
    })
    // Gauges without labels, read when Prometheus scrapes: nothing to do per checkout or job.
    const scrapeGauge = (name: string, help: string, read: () => number) =>
      new Gauge({
        name,
        help,
        registers: [registry],
        collect() {
          this.set(read())
        },
      })
    scrapeGauge(
      'nft_webhook_jobs_held',
      'Webhook jobs this process fetched and holds for a free slot of their endpoint.',
      () => readSlots()?.held ?? 0,
    )
    scrapeGauge(
      'nft_db_pool_connections',
      'Connections the database pool holds (idle and in use).',
      () => pool.totalCount,
    )
    scrapeGauge(
      'nft_db_pool_idle_connections',
      'Idle connections in the database pool.',
      () => pool.idleCount,
    )
    scrapeGauge(
      'nft_db_pool_waiting_requests',
      'Queries waiting for a connection of the database pool (all connections busy).',
      () => pool.waitingCount,
    )
    scrapeGauge(
      'nft_db_pool_max_connections',
      'The most connections the database pool opens.',
      () => pool.options.max ?? 10,
    )
  }

  /** One answered request: `route` is the route template (`/v1/collections/{address}`), never the raw path. */
  request(route: string, method: string, status: number, seconds: number): void {
    let byMethod = this.requestCells.get(route)
    if (!byMethod) {
      byMethod = new Map()
      this.requestCells.set(route, byMethod)
    }
    let byStatus = byMethod.get(method)
    if (!byStatus) {
      byStatus = new Map()
      byMethod.set(method, byStatus)
    }
    let cell = byStatus.get(status)
    if (!cell) {
      cell = this.requests.cell({ route, method, status: String(status) })
      byStatus.set(status, cell)
    }
    CellHistogram.observe(cell, seconds)
  }

  /** One rate-limiter decision. */
  limitDecision(policy: PolicyName, scope: 'ip' | 'credential', allowed: boolean): void {
    const decision = allowed ? 'allowed' : 'refused'
    const byPolicy = this.decisionCells[decision]
    let cell = byPolicy.get(policy)
    if (!cell) {
      cell = this.decisions.cell({ policy, scope, decision })
      byPolicy.set(policy, cell)
    }
    cell.value++
  }

  /** One webhook attempt (docs/push.md, "Attempts and retries"). */
  webhookAttempt(delivered: boolean): void {
    ;(delivered ? this.webhookAttempts.delivered : this.webhookAttempts.failed).value++
  }

  /** Where the webhook slot gauges read from (the attempt loop, once started). */
  webhookSlots(read: () => WebhookSlotCounts): void {
    this.readWebhookSlots = read
  }

  /** A webhook endpoint disabled after its failure run. */
  webhookEndpointDisabled(): void {
    this.webhookDisabled.value++
  }

  /** One credential verification: from the cache, or a database lookup. */
  credentialCache(hit: boolean): void {
    ;(hit ? this.cacheHits : this.cacheMisses).value++
  }
}
