/**
 * A log index that leaves the same logs out of every eth_getLogs answer
 * (src/test/provider-proxy/, `brokenLogIndex`), behind one endpoint and
 * behind two that share it, with every other provider fault on: receipts
 * proofs (sampled blocks, small ranges, disputed blocks) find the lie (docs/indexer.md, "Verification"), the index
 * ends equal to the chain, and GET /v1/indexer/status says how it knows.
 * Here, not in src/indexer/test: it reads status the way the web side does.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestChain, type TestChain } from '@/indexer/test/chain'
import {
  ALL_FAULTS,
  buildHistory,
  type History,
  indexThrough,
  liveBlock,
  type ProviderRun,
  runThroughProviders,
  waitForVerified,
} from '@/indexer/test/provider-run'
import { clearIndexerSnapshot } from '@/server/api/read/indexer-snapshot'
import { getIndexerStatus } from '@/server/api/v1/indexer/status.handler'

let chain: TestChain
let history: History

beforeAll(async () => {
  chain = await startTestChain()
  history = await buildHistory(chain)
}, 120_000)

afterAll(async () => {
  await chain?.stop()
})

/**
 * Status after the lie was found: mismatches counted, the log index distrusted, and every
 * verified block proven by its receipts in the end (nothing claims reads or a second endpoint).
 */
function expectLieFoundAndEveryBlockProven(status: Awaited<ReturnType<typeof statusOf>>) {
  expect(Number(status.verification_mismatches)).toBeGreaterThan(0)
  expect(status.log_index_untrusted).toBe(true)
  expect(status.verified_by).toEqual([
    {
      from_block: status.coverage_start_block,
      to_block: status.last_verified_block,
      method: 'receipts_proof',
      proof_sample_rate: null,
    },
  ])
}

/** What GET /v1/indexer/status answers now (past its short-lived snapshot). */
function statusOf(run: ProviderRun) {
  clearIndexerSnapshot(run.db.pool)
  return getIndexerStatus({ config: run.config, db: { pool: run.db.pool } } as never, {})
}

describe('a log index that leaves the same logs out of every read', () => {
  it('with one endpoint and every other fault: proofs find it, and the index equals the chain', async () => {
    const run = await runThroughProviders(
      chain,
      history,
      [{ brokenLogIndex: 0.03, faults: ALL_FAULTS }],
      // A quarter of backfill blocks proven (a fixed seed: the same blocks every run), for a chain this small.
      { sync: { proofSample: { rate: 0.25, seed: 41 } }, confirmedMayDrop: true },
    )
    await indexThrough(run, chain, history)
    const status = await statusOf(run)
    // The database equals the chain, though every read of the log index lacked the same logs.
    await run.finish()
    expect(run.proxies[0]!.stats().brokenLogIndex).toBeGreaterThan(0)
    // Found by a proof during backfill (a sampled block, a small range or a disputed block), which then proved every block.
    expect(run.log.count(/the log index is not trusted, every block is proven from now on/)).toBeGreaterThan(
      0,
    )
    expectLieFoundAndEveryBlockProven(status)
  }, 240_000)
})

describe('two endpoints that share a log index leaving the same logs out', () => {
  it('agree with each other, yet proofs find the lie, and the index equals the chain', async () => {
    const run = await runThroughProviders(
      chain,
      history,
      [1, 2].map(() => ({ brokenLogIndex: 0.03, faults: ALL_FAULTS })),
      { sync: { proofSample: { rate: 0.25, seed: 41 } }, confirmedMayDrop: true },
    )
    await waitForVerified(run.db.pool, chain, 2n, 120_000)
    for (let i = 0; i < 3; i++) await liveBlock(chain, history)
    await waitForVerified(run.db.pool, chain, 2n, 120_000)
    const status = await statusOf(run)
    // The database equals the chain, though both endpoints' reads lacked the same logs.
    await run.finish()
    for (const proxy of run.proxies) expect(proxy.stats().brokenLogIndex).toBeGreaterThan(0)
    expectLieFoundAndEveryBlockProven(status)
  }, 240_000)
})
