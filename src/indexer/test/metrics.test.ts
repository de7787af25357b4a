/**
 * The indexer's Prometheus metrics (docs/operations.md, "Metrics") against a
 * real devnet chain and database: block gauges read from indexer_state on
 * scrape, RPC attempts by method and fault kind, the metadata backlog.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type MetricsEndpoint, serveMetrics } from '@/config/metrics-endpoint'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import { freePort } from '@/test/free-port'
import { startProviderProxy } from '@/test/provider-proxy'
import { IndexerMetrics } from '../metrics'
import { createRpc } from '../rpc/client'
import { EndpointPool } from '../rpc/endpoint-pool'
import { AdaptiveRange, fetchLogs } from '../rpc/get-logs'
import { startTestChain, type TestChain } from './chain'
import { startIndexer, testConfig, testLogger } from './indexer'
import { waitFor, waitForIndexed } from './oracle'

let chain: TestChain
let db: TestDatabase

beforeAll(async () => {
  ;[chain, db] = await Promise.all([startTestChain(), createTestDatabase()])
}, 120_000)

afterAll(async () => {
  await chain?.stop()
  await db?.drop()
})

/** The value of one sample line (`name{labels} value`), or undefined when absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `))
  return line === undefined ? undefined : Number(line.slice(series.length + 1))
}

describe('indexer metrics', () => {
  it('serves block progress, RPC requests by method and the metadata backlog', async () => {
    const [alice] = chain.accounts
    const nft = (await chain.deploy('TestNFT', ['Gauges', 'GAU', 'http://127.0.0.1:9/meta/'])).address
    await chain.call(nft, 'TestNFT', 'mintBatch', [alice, 1n, 5n])
    const config = testConfig({ DATABASE_URL: db.url, RPC_URL: chain.anvil.rpcUrl })
    const metrics = new IndexerMetrics(db.pool, config.NETWORK)
    let endpoint: MetricsEndpoint | undefined
    const indexer = startIndexer(config, db.pool, { metrics, metadata: { reportMs: 100 } })
    try {
      endpoint = await serveMetrics({
        registry: metrics.registry,
        port: 0,
        host: '127.0.0.1',
        beforeScrape: () => metrics.refresh(),
      })
      await waitForIndexed(db.pool, chain.clients)
      const head = Number(await chain.head())
      const scrape = async () => {
        const res = await fetch(`http://127.0.0.1:${endpoint!.port}/metrics`)
        expect(res.status).toBe(200)
        return res.text()
      }
      // The queue reports its backlog on its timer: wait for the first report.
      const text = await waitFor(async () => {
        const t = await scrape()
        return t.includes('nft_indexer_metadata_backlog{outcome="pending"}') ? t : undefined
      })
      expect(sample(text, 'nft_indexer_head_block')).toBeGreaterThanOrEqual(head)
      expect(sample(text, 'nft_indexer_indexed_block')).toBeGreaterThanOrEqual(head)
      // Two confirmations on the test chain, each verified by a second read.
      expect(sample(text, 'nft_indexer_confirmed_block')).toBeGreaterThanOrEqual(0)
      expect(sample(text, 'nft_indexer_verified_block')).toBeGreaterThanOrEqual(
        sample(text, 'nft_indexer_confirmed_block')!,
      )
      expect(sample(text, 'nft_indexer_lag_blocks')).toBe(
        sample(text, 'nft_indexer_head_block')! - sample(text, 'nft_indexer_indexed_block')!,
      )
      expect(sample(text, 'nft_indexer_leader')).toBe(1)
      expect(
        sample(text, 'nft_indexer_rpc_requests_total{method="eth_getLogs",endpoint="1"}'),
      ).toBeGreaterThan(0)
      expect(
        sample(text, 'nft_indexer_rpc_requests_total{method="eth_getBlockByNumber",endpoint="1"}'),
      ).toBeGreaterThan(0)
      expect(sample(text, 'nft_indexer_state_read_failures_total')).toBe(0)
      expect(text).toMatch(/# TYPE nft_indexer_metadata_backlog gauge/)
      // anvil leaves no log out.
      expect(sample(text, 'nft_indexer_log_omission_ratio')).toBe(0)
    } finally {
      await indexer.stop()
      await endpoint?.close()
    }
    // Stopped: the lock is given back.
    expect(sample(await metrics.registry.metrics(), 'nft_indexer_leader')).toBe(0)
  }, 120_000)

  it('shows how often the provider leaves logs out of eth_getLogs answers', async () => {
    const nft = (await chain.deploy('TestNFT', ['Omitted', 'OMI', 'http://127.0.0.1:9/meta/'])).address
    await chain.call(nft, 'TestNFT', 'mintBatch', [chain.accounts[0], 1n, 8n])
    const proxy = await startProviderProxy({ upstream: chain.anvil.rpcUrl, faults: { omitLog: 0.5 } })
    const other = await createTestDatabase()
    const config = testConfig({ DATABASE_URL: other.url, RPC_URL: proxy.url })
    const metrics = new IndexerMetrics(other.pool, config.NETWORK)
    const indexer = startIndexer(config, other.pool, { metrics, metadata: { enabled: false } })
    try {
      const ratio = await waitFor(async () => {
        await metrics.refresh()
        const r = sample(await metrics.registry.metrics(), 'nft_indexer_log_omission_ratio')
        return r !== undefined && r > 0 ? r : undefined
      })
      expect(proxy.stats().omitLog).toBeGreaterThan(0)
      expect(ratio).toBeLessThanOrEqual(1)
    } finally {
      await indexer.stop()
      await proxy.stop()
      await other.drop()
    }
  }, 120_000)

  it('counts failed RPC attempts by fault kind', async () => {
    const closed = await freePort()
    const metrics = new IndexerMetrics(db.pool, 'devnet')
    const rpc = (url: string) =>
      createRpc({
        pool: new EndpointPool({ urls: [url], observer: metrics }),
        logger: testLogger(),
        retries: 0,
      })
    await expect(rpc(`http://127.0.0.1:${closed}`).request('eth_blockNumber', [])).rejects.toThrow()
    await expect(rpc(chain.anvil.rpcUrl).request('eth_noSuchMethod', [])).rejects.toThrow()
    await rpc(chain.anvil.rpcUrl).request('eth_blockNumber', [])
    const text = await metrics.registry.metrics()
    expect(
      sample(text, 'nft_indexer_rpc_errors_total{method="eth_blockNumber",endpoint="1",kind="network"}'),
    ).toBe(1)
    expect(
      sample(text, 'nft_indexer_rpc_errors_total{method="eth_noSuchMethod",endpoint="1",kind="rpc"}'),
    ).toBe(1)
    expect(sample(text, 'nft_indexer_rpc_requests_total{method="eth_blockNumber",endpoint="1"}')).toBe(2)
    expect(sample(text, 'nft_indexer_rpc_requests_total{method="eth_noSuchMethod",endpoint="1"}')).toBe(1)
  })

  it("counts eth_getLogs range answers found short past their node's head, by endpoint", async () => {
    const nft = (await chain.deploy('TestNFT', ['Short', 'SHO', 'http://127.0.0.1:9/meta/'])).address
    for (let i = 0; i < 3; i++)
      await chain.call(nft, 'TestNFT', 'mintBatch', [chain.accounts[0], BigInt(100 + i * 10), 2n])
    // Log queries go to a node two blocks behind, which answers up to its own head.
    const proxy = await startProviderProxy({
      upstream: chain.anvil.rpcUrl,
      faults: { shortLogs: 1, lagBlocks: 2 },
    })
    const metrics = new IndexerMetrics(db.pool, 'devnet')
    const logger = testLogger()
    const rpc = createRpc({ pool: new EndpointPool({ urls: [proxy.url], observer: metrics }), logger })
    try {
      const head = await chain.head()
      rpc.pool.endpoints[0]!.observeHead(head)
      rpc.pool.endpoints[0]!.takeServedHead(head)
      const logs = await fetchLogs(rpc, head - 5n, head, { topics: [], range: new AdaptiveRange(), logger })
      // The last two blocks' mints, left out of the answer, are read by hash.
      expect(logs.filter((l) => BigInt(l.blockNumber) > head - 2n)).toHaveLength(4)
      const text = await metrics.registry.metrics()
      expect(sample(text, 'nft_indexer_rpc_short_answers_total{endpoint="1"}')).toBe(1)
    } finally {
      await proxy.stop()
    }
  })

  it('keeps serving when indexer_state cannot be read, and counts the failure', async () => {
    const metrics = new IndexerMetrics(db.pool, 'no-such-network')
    await metrics.refresh()
    const text = await metrics.registry.metrics()
    expect(sample(text, 'nft_indexer_state_read_failures_total')).toBe(1)
    // Never read: the gauges stay at 0.
    expect(sample(text, 'nft_indexer_head_block')).toBe(0)
  })
})
