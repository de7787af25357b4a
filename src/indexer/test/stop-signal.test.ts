/**
 * Every RPC request in flight, or waiting for an endpoint, listens on the
 * indexer's stop signal until it ends (rpc/transport.ts, rpc/retry.ts): with
 * many ranges reading at once that is more listeners than Node's default
 * warning threshold (10), which is by design, not a leak, and must not print
 * a warning on every backfill. That each listener is removed is tested in
 * rpc/endpoint-pool.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import { type ProviderProxy, startProviderProxy } from '@/test/provider-proxy'
import { startTestChain, type TestChain } from './chain'
import { startIndexer, testConfig } from './indexer'
import { waitForIndexed } from './oracle'

let chain: TestChain
let db: TestDatabase
let proxy: ProviderProxy

beforeAll(async () => {
  ;[chain, db] = await Promise.all([startTestChain(), createTestDatabase()])
  await chain.clients.test.mine({ blocks: 300 })
  // A few milliseconds per request, so that the requests sent together are open together.
  proxy = await startProviderProxy({ upstream: chain.anvil.rpcUrl, latencyMs: [5, 10] })
}, 120_000)

afterAll(async () => {
  await proxy?.stop()
  await chain?.stop()
  await db?.drop()
})

describe('the stop signal', () => {
  it('takes a listener per request in flight without a MaxListenersExceededWarning', async () => {
    const warnings: Error[] = []
    const onWarning = (w: Error) => warnings.push(w)
    process.on('warning', onWarning)
    const config = testConfig({ DATABASE_URL: db.url, RPC_URL: proxy.url })
    // One-block ranges, twelve reading at once, each read twice: far more than ten requests in flight.
    const indexer = startIndexer(config, db.pool, {
      metadata: { enabled: false },
      sync: { initialRange: 1n, maxRange: 1n, rangesInFlight: { min: 12, max: 12 } },
      rpc: { maxConcurrency: 32 },
    })
    try {
      await waitForIndexed(db.pool, chain.clients)
    } finally {
      await indexer.stop()
      process.off('warning', onWarning)
    }
    expect(proxy.stats().peakInFlight).toBeGreaterThan(10)
    expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([])
  })
})
