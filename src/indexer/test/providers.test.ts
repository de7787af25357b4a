/**
 * The indexer through each fault hosted providers are documented to show
 * (src/test/provider-proxy/): after each run the database equals the chain
 * (owners = ownerOf(), transfers = the chain's logs) and neither the head nor
 * the confirmed block ever ran backwards.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PROVIDER_STYLES, type ProviderStyle } from '@/test/provider-proxy'
import { startTestChain, type TestChain } from './chain'
import { expectDatabaseMatchesChain, waitForIndexed } from './oracle'
import {
  buildHistory,
  type History,
  indexThrough,
  liveBlock,
  runThroughProviders,
  verificationCounts,
  waitForVerified,
} from './provider-run'

let chain: TestChain
let history: History

beforeAll(async () => {
  chain = await startTestChain()
  history = await buildHistory(chain)
}, 120_000)

afterAll(async () => {
  await chain?.stop()
})

type ProxySetup = Parameters<typeof runThroughProviders>[2][number]

describe('provider faults, one at a time', () => {
  it('a load-balanced node a few blocks behind: the head never runs backwards, null blocks are waited for', async () => {
    const run = await runThroughProviders(chain, history, [{ faults: { lagging: 0.4, lagBlocks: 3 } }])
    await indexThrough(run, chain, history, 5)
    expect(run.proxies[0]!.stats().lagging).toBeGreaterThan(0)
    // Lag is never taken for a reorganisation.
    expect(run.log.count(/reorg detected/)).toBe(0)
    await run.finish()
  }, 120_000)

  it('log reads served by nodes behind the head, answering ranges past it short without an error', async () => {
    // Every range read ends two blocks past its node's head (CONFIRMATIONS is 2, the node is 4
    // behind), so both reads of a range agree on the same short answer. No receipts: reads only.
    const run = await runThroughProviders(chain, history, [
      { faults: { shortLogs: 1, lagBlocks: 4 }, noBlockReceipts: true },
    ])
    await indexThrough(run, chain, history)
    expect(run.proxies[0]!.stats().shortLogs).toBeGreaterThan(0)
    // Found in the answers, not by chance: the blocks they left out were read by hash.
    expect(run.log.count(/and no error \(a node behind the head\): read by block hash/)).toBeGreaterThan(0)
    await run.finish()
  }, 120_000)

  it('429 with Retry-After, 502 HTML pages and non-JSON bodies are transient', async () => {
    const run = await runThroughProviders(chain, history, [
      { faults: { rateLimited: 0.1, badGateway: 0.1, nonJson: 0.05 }, retryAfterSeconds: 1 },
    ])
    await indexThrough(run, chain, history)
    const stats = run.proxies[0]!.stats()
    expect(stats.rateLimited).toBeGreaterThan(0)
    expect(stats.badGateway).toBeGreaterThan(0)
    expect(stats.nonJson).toBeGreaterThan(0)
    await run.finish()
  }, 120_000)

  /** Faults met during a run; each is counted by the proxy and, where named, logged by the indexer. */
  const counted: Array<[string, ProxySetup, string, RegExp | null]> = [
    [
      'per-item errors inside a batch are retried item by item',
      { faults: { itemError: 0.15 } },
      'itemError',
      null,
    ],
    [
      'duplicated and out-of-order logs are normalised',
      { faults: { duplicateAndReorder: 0.6 } },
      'duplicateAndReorder',
      null,
    ],
    [
      'an answer cut at a result cap without an error is read again in smaller ranges',
      { silentResultCap: 50 },
      'silentCut',
      /left the rest out without an error/,
    ],
    [
      'logs of blocks a request did not ask for (a broken range filter) are left out',
      { faults: { strayLog: 1 } },
      'strayLog',
      /of blocks it was not asked for: left out/,
    ],
  ]
  it.each(counted)(
    '%s',
    async (_, setup, counter, logged) => {
      const run = await runThroughProviders(chain, history, [setup])
      await indexThrough(run, chain, history)
      expect(run.proxies[0]!.stats()[counter]).toBeGreaterThan(0)
      await run.finish()
      if (logged) expect(run.log.count(logged)).toBeGreaterThan(0)
    },
    120_000,
  )

  it('dropped connections and hung requests (cut by the time-out)', async () => {
    const run = await runThroughProviders(
      chain,
      history,
      [{ faults: { dropConnection: 0.05, hang: 0.03 } }],
      {
        timeoutMs: 800,
      },
    )
    await waitForVerified(run.db.pool, chain)
    // Moments when every request is dropped, then when every request hangs, while blocks arrive.
    for (const fault of [{ dropConnection: 1 }, { hang: 1 }]) {
      run.proxies[0]!.setFaults(fault)
      await liveBlock(chain, history)
      await new Promise((r) => setTimeout(r, 1_000))
      run.proxies[0]!.setFaults({ dropConnection: 0.05, hang: 0.03 })
    }
    await indexThrough(run, chain, history)
    const stats = run.proxies[0]!.stats()
    expect(stats.dropConnection).toBeGreaterThan(0)
    expect(stats.hang).toBeGreaterThan(0)
    await run.finish()
  }, 120_000)

  it('a log answered with the hash of a block a reorganisation replaced (a stale cache) is never stored', async () => {
    const run = await runThroughProviders(chain, history, [{ faults: { staleLog: 0.3 } }])
    // While the node keeps answering it, no read of its range is one chain's: the range waits.
    await expect.poll(() => run.proxies[0]!.stats().staleLog, { timeout: 30_000 }).toBeGreaterThan(3)
    const stored = await run.db.pool.query(
      `SELECT count(*)::int AS n FROM transfers WHERE block_hash LIKE '0x5a1e%'`,
    )
    expect(stored.rows[0].n).toBe(0)
    run.proxies[0]!.setFaults({ staleLog: 0 })
    await indexThrough(run, chain, history)
    await run.finish()
    expect(run.log.count(/logs of two blocks at height/)).toBeGreaterThan(0)
  }, 120_000)

  it.each(Object.keys(PROVIDER_STYLES) as ProviderStyle[])(
    'eth_getLogs range and result caps in the words of %s',
    async (style) => {
      const run = await runThroughProviders(chain, history, [
        { getLogsCap: { maxBlocks: 6, maxResults: 40, style } },
      ])
      await indexThrough(run, chain, history, 1)
      const stats = run.proxies[0]!.stats()
      expect((stats.capRange ?? 0) + (stats.capResults ?? 0)).toBeGreaterThan(0)
      await run.finish()
    },
    120_000,
  )
})

describe('logs left out with HTTP 200', () => {
  it('are caught by the second read during backfill and never counted as confirmed', async () => {
    // No receipts: disagreements are settled by reads that agree.
    const run = await runThroughProviders(chain, history, [
      { faults: { omitLog: 0.3 }, noBlockReceipts: true },
    ])
    await indexThrough(run, chain, history)
    expect(run.proxies[0]!.omitted().length).toBeGreaterThan(0)
    expect((await verificationCounts(run.db.pool)).mismatches).toBeGreaterThan(0)
    await run.finish()
  }, 120_000)

  /** Mints one block at a time, each followed at the head (read by block hash), not backfilled. */
  async function followedBlocks(run: Awaited<ReturnType<typeof runThroughProviders>>, count: number) {
    for (let i = 0; i < count; i++) {
      const id = history.nextId
      history.nextId += 3n
      await chain.call(history.nft, 'TestNFT', 'mintBatch', [chain.accounts[0], id, 3n])
      await waitForIndexed(run.db.pool, chain.clients)
    }
  }

  it('in followed blocks never reach the head where receipts prove each new block', async () => {
    const run = await runThroughProviders(chain, history, [{}])
    await waitForVerified(run.db.pool, chain)
    // Every eth_getLogs answer now leaves one log out; each new block's receipts prove what it holds.
    run.proxies[0]!.setFaults({ omitLog: 1 })
    await followedBlocks(run, 3)
    // Checked at the head, before any block is confirmed: nothing is missing.
    await expectDatabaseMatchesChain(run.db.pool, chain.clients, history.nfts)
    const counts = await verificationCounts(run.db.pool)
    expect(counts).toEqual({ mismatches: expect.any(Number), repairs: 0 })
    expect(counts.mismatches).toBeGreaterThanOrEqual(3)
    run.proxies[0]!.setFaults({ omitLog: 0 })
    await run.finish()
  }, 120_000)

  it('are not taken from a node that answers no logs for a block it does not have yet', async () => {
    // Three requests in ten reach a node a block or two behind, which answers a new block's
    // logs by hash with none and no error. No receipts: the read by hash is all there is.
    const run = await runThroughProviders(chain, history, [
      { faults: { lagging: 0.3, lagBlocks: 2 }, emptyForUnknownHash: true, noBlockReceipts: true },
    ])
    await waitForVerified(run.db.pool, chain)
    for (let i = 0; i < 8; i++) {
      await followedBlocks(run, 1)
      // Checked at the head, before the block is confirmed (and verified): nothing is missing.
      await expectDatabaseMatchesChain(run.db.pool, chain.clients, history.nfts)
    }
    expect(run.proxies[0]!.stats().lagging).toBeGreaterThan(0)
    await run.finish()
  }, 120_000)

  it('in followed blocks, without receipts, are found once confirmed and repaired through the rollback path', async () => {
    const run = await runThroughProviders(chain, history, [{ noBlockReceipts: true }])
    await waitForVerified(run.db.pool, chain)
    // Every read by block hash (how blocks at the head are read) now leaves one log out: each
    // followed block is stored wrong first, and found out by reads by range once confirmed.
    run.proxies[0]!.setFaults({ omitLogByHash: 1 })
    await followedBlocks(run, 3)
    run.proxies[0]!.setFaults({ omitLogByHash: 0 })
    for (let i = 0; i < 3; i++) await liveBlock(chain, history)
    await waitForVerified(run.db.pool, chain)
    const counts = await verificationCounts(run.db.pool)
    expect(counts.repairs).toBeGreaterThan(0)
    expect(run.log.count(/verification: repaired blocks/)).toBe(counts.repairs)
    await run.finish()
  }, 120_000)

  it('an ERC-1155 URI event left out of a followed block is found once confirmed and repaired', async () => {
    const run = await runThroughProviders(chain, history, [{ noBlockReceipts: true }])
    await waitForVerified(run.db.pool, chain)
    // Every read by block hash leaves one log out: a block holding only a URI event is stored without it.
    run.proxies[0]!.setFaults({ omitLogByHash: 1 })
    await chain.call(history.editions, 'TestEditions', 'setURI', [1n, 'ipfs://left-out'])
    await waitForIndexed(run.db.pool, chain.clients)
    const stored = async () =>
      (await run.db.pool.query(`SELECT count(*)::int AS n FROM erc1155_uris WHERE uri = 'ipfs://left-out'`))
        .rows[0].n
    expect(await stored()).toBe(0)
    run.proxies[0]!.setFaults({ omitLogByHash: 0 })
    await liveBlock(chain, history)
    await waitForVerified(run.db.pool, chain)
    expect(await stored()).toBe(1)
    expect((await verificationCounts(run.db.pool)).repairs).toBeGreaterThan(0)
    await run.finish()
  }, 120_000)
})
