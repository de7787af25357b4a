/**
 * The indexer process's Prometheus metrics (docs/operations.md, "Metrics"):
 * block progress and lag, JSON-RPC requests and their faults, how often
 * eth_getLogs answers leave logs out, the metadata backlog. Built only when
 * METRICS_PORT is set.
 *
 * Block gauges are read from indexer_state when Prometheus scrapes (one small
 * query, the row /v1/indexer/status shows); the metadata backlog is the count
 * the metadata queue already takes on its report timer. Nothing is counted
 * per event except RPC requests, with label sets built once.
 */
import type pg from 'pg'
import { Counter, Gauge, Registry } from 'prom-client'
import type { Logger } from '@/config/logger'
import type { RpcObserver } from './rpc/endpoint-pool'
import type { RpcFaultKind } from './rpc/transport'
import { readIndexerState } from './store/state'
import type { OmissionRate } from './verify/omission-rate'

type RequestLabels = { method: string; endpoint: string }

export class IndexerMetrics implements RpcObserver {
  readonly registry = new Registry()
  private readonly head: Gauge
  private readonly indexed: Gauge
  private readonly confirmed: Gauge
  private readonly verified: Gauge
  private readonly lag: Gauge
  private readonly stateReadFailures: Counter
  private readonly leaderGauge: Gauge
  private readonly backlog: Gauge<'outcome'>
  private readonly omissionRatio: Gauge
  private omissions?: OmissionRate
  private readonly rpcRequests: Counter<'method' | 'endpoint'>
  private readonly rpcErrors: Counter<'method' | 'endpoint' | 'kind'>
  private readonly rpcHedges: Counter<'method' | 'endpoint'>
  private readonly rpcShortAnswers: Counter<'endpoint'>
  /** Label sets by method, then by endpoint position. */
  private readonly requestLabels = new Map<string, RequestLabels[]>()

  constructor(
    private readonly pool: pg.Pool,
    private readonly network: string,
    private readonly logger?: Logger,
  ) {
    const registers = [this.registry]
    const gauge = (name: string, help: string) => new Gauge({ name, help, registers })
    const counter = <L extends string>(name: string, help: string, labelNames: L[] = []) =>
      new Counter<L>({ name, help, labelNames, registers })
    this.head = gauge('nft_indexer_head_block', 'The chain head the indexer last saw (last_seen_block).')
    this.indexed = gauge(
      'nft_indexer_indexed_block',
      'End of the contiguously indexed range (last_indexed_block).',
    )
    this.confirmed = gauge(
      'nft_indexer_confirmed_block',
      'The last block served as confirmed: indexed, deep enough and verified (last_confirmed_block).',
    )
    this.verified = gauge(
      'nft_indexer_verified_block',
      'End of the verified prefix (last_verified_block); 0 before the first verified block.',
    )
    this.lag = gauge(
      'nft_indexer_lag_blocks',
      'Blocks between the chain head and the indexed end (lag_blocks).',
    )
    this.stateReadFailures = counter(
      'nft_indexer_state_read_failures_total',
      'Scrapes whose read of indexer_state failed (the block gauges then keep their last values).',
    )
    this.leaderGauge = gauge(
      'nft_indexer_leader',
      '1 while this process holds the leader lock and writes; 0 while it waits as a standby.',
    )
    this.leaderGauge.set(0)
    this.omissionRatio = gauge(
      'nft_indexer_log_omission_ratio',
      'Share of recent eth_getLogs answers (about the last 200 verified) that lacked logs their blocks hold: how often the provider leaves logs out.',
    )
    this.backlog = new Gauge({
      name: 'nft_indexer_metadata_backlog',
      help: 'Tokens waiting for a metadata fetch or retry, by current outcome (as of the last queue report).',
      labelNames: ['outcome'],
      registers,
    })
    this.rpcRequests = counter(
      'nft_indexer_rpc_requests_total',
      'JSON-RPC requests sent (each attempt), by method and endpoint (position in RPC_URL).',
      ['method', 'endpoint'],
    )
    this.rpcErrors = counter(
      'nft_indexer_rpc_errors_total',
      'Failed JSON-RPC attempts, by method, endpoint and fault kind (rate_limited, http, bad_body, network, timeout, rpc).',
      ['method', 'endpoint', 'kind'],
    )
    this.rpcHedges = counter(
      'nft_indexer_rpc_hedges_total',
      'Requests sent once more because the first attempt had no answer for twice the usual time, by method and the endpoint asked again.',
      ['method', 'endpoint'],
    )
    this.rpcShortAnswers = counter(
      'nft_indexer_rpc_short_answers_total',
      'eth_getLogs range answers that left out, without an error, the logs of blocks past the head of the node that answered, by endpoint.',
      ['endpoint'],
    )
  }

  /** One JSON-RPC attempt; `fault` when it failed. `endpoint` is the 0-based position in RPC_URL. */
  rpcAttempt(method: string, endpoint: number, fault?: RpcFaultKind): void {
    const labels = this.labelsOf(method, endpoint)
    this.rpcRequests.inc(labels)
    if (fault) this.rpcErrors.inc({ ...labels, kind: fault })
  }

  rpcHedge(method: string, endpoint: number): void {
    this.rpcHedges.inc(this.labelsOf(method, endpoint))
  }

  rpcShortAnswer(endpoint: number): void {
    this.rpcShortAnswers.inc({ endpoint: String(endpoint + 1) })
  }

  /** One label object per method and endpoint, made once: attempts are counted by the thousand. */
  private labelsOf(method: string, endpoint: number): RequestLabels {
    let byEndpoint = this.requestLabels.get(method)
    if (!byEndpoint) {
      byEndpoint = []
      this.requestLabels.set(method, byEndpoint)
    }
    let labels = byEndpoint[endpoint]
    if (!labels) {
      labels = { method, endpoint: String(endpoint + 1) }
      byEndpoint[endpoint] = labels
    }
    return labels
  }

  /** The metadata queue's latest count of its backlog, by outcome. */
  metadataBacklog(backlog: Record<string, number>): void {
    for (const [outcome, n] of Object.entries(backlog)) this.backlog.set({ outcome }, n)
  }

  /** This process took (true) or gave up (false) the leader lock. */
  leader(holds: boolean): void {
    this.leaderGauge.set(holds ? 1 : 0)
  }

  /** The sync loop's estimate of how often answers leave logs out (verify/omission-rate.ts). */
  watchOmissions(rate: OmissionRate): void {
    this.omissions = rate
  }

  /** Reads the block gauges from indexer_state (on failure they keep their last values) and the omission ratio. */
  async refresh(): Promise<void> {
    if (this.omissions) this.omissionRatio.set(this.omissions.observed())
    try {
      const state = await readIndexerState(this.pool, this.network)
      this.head.set(Number(state.lastSeenBlock))
      this.confirmed.set(Number(state.lastConfirmedBlock))
      if (state.lastIndexedBlock !== null) this.indexed.set(Number(state.lastIndexedBlock))
      if (state.lastVerifiedBlock !== null) this.verified.set(Number(state.lastVerifiedBlock))
      const lag = state.lastSeenBlock - (state.lastIndexedBlock ?? 0n)
      this.lag.set(lag > 0n ? Number(lag) : 0)
    } catch (err) {
      this.stateReadFailures.inc()
      this.logger?.debug({ err }, 'metrics: indexer_state not read')
    }
  }
}
