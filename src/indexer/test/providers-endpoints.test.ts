/**
 * Several endpoints, honest status when none answers, and everything at
 * once: all provider faults, live activity (ERC-721 and ERC-1155),
 * reorganisations and kill -9 of the indexer while it repairs. After each: the database equals the chain,
 * and the head never ran backwards.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { reorgChain } from '@/dev/devnet/reorg'
import { createTestDatabase } from '@/test/db'
import { NO_FAULTS, startProviderProxy } from '@/test/provider-proxy'
import { ChainIdMismatchError } from '../errors'
import { startTestChain, type TestChain } from './chain'
import { type ChildIndexer, spawnIndexer } from './child'
import { startIndexer, testConfig } from './indexer'
import { expectDatabaseMatchesChain, waitFor, waitForIndexed } from './oracle'
import {
  ALL_FAULTS,
  buildHistory,
  type History,
  liveBlock,
  multiBatch,
  runThroughProviders,
  verificationCounts,
  waitForVerified,
  watchMonotonic,
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

/** What the indexer writes for the status endpoint: each endpoint's state and when a head was last read. */
const rpcHealth = async (pool: import('pg').Pool) => {
  const { rows } = await pool.query(
    'SELECT rpc_endpoints AS endpoints, extract(epoch FROM now() - head_observed_at)::float AS age FROM indexer_state',
  )
  return rows[0] as {
    endpoints: Array<{ endpoint: number; state: string; head: string | null }>
    age: number
  }
}

describe('several endpoints', () => {
  it('a wrong chain on any endpoint refuses the start, naming the endpoint by position', async () => {
    const db = await createTestDatabase()
    const [good, wrong] = await Promise.all([
      startProviderProxy({ upstream: chain.anvil.rpcUrl }),
      startProviderProxy({ upstream: chain.anvil.rpcUrl, chainId: 1 }),
    ])
    try {
      const indexer = startIndexer(
        testConfig({ DATABASE_URL: db.url, RPC_URL: `${good.url},${wrong.url}` }),
        db.pool,
      )
      const error = await indexer.done.then(
        () => null,
        (err: unknown) => err,
      )
      expect(error).toBeInstanceOf(ChainIdMismatchError)
      expect((error as Error).message).toBe(
        `Chain id mismatch: CHAIN_ID is 31337 but RPC endpoint rpc#2 (${new URL(wrong.url).host}) reports 1`,
      )
    } finally {
      await Promise.all([good.stop(), wrong.stop(), db.drop()])
    }
  })

  it('fails over when one endpoint dies, and verification reads go to the other endpoint', async () => {
    const run = await runThroughProviders(chain, history, [{}, {}])
    await waitForVerified(run.db.pool, chain)
    const [first, second] = run.proxies
    // Both served: the second reads of verification prefer the endpoint the first read did not use.
    expect(first!.stats()['method.eth_getLogs']).toBeGreaterThan(0)
    expect(second!.stats()['method.eth_getLogs']).toBeGreaterThan(0)
    // The first endpoint now drops every connection: progress goes on through the second.
    first!.setFaults({ dropConnection: 1 })
    for (let i = 0; i < 3; i++) await liveBlock(chain, history)
    await waitForVerified(run.db.pool, chain)
    await waitFor(
      async () => (await rpcHealth(run.db.pool)).endpoints.map((e) => e.state).join() === 'failing,ok',
      10_000,
      'endpoint 1 shown failing',
    )
    await run.finish()
  }, 120_000)
})

describe('honest status', () => {
  it('records when no endpoint answers: every endpoint failing and the head growing old', async () => {
    const run = await runThroughProviders(chain, history, [{}, {}])
    await waitForVerified(run.db.pool, chain)
    expect((await rpcHealth(run.db.pool)).endpoints.map((e) => e.state)).toEqual(['ok', 'ok'])
    for (const proxy of run.proxies) proxy.setFaults({ dropConnection: 1 })
    await waitFor(
      async () => {
        const health = await rpcHealth(run.db.pool)
        return health.endpoints.every((e) => e.state === 'failing') && health.age > 3
      },
      20_000,
      'every endpoint failing, no fresh head',
    )
    for (const proxy of run.proxies) proxy.setFaults({ dropConnection: 0 })
    await waitFor(
      async () => {
        const health = await rpcHealth(run.db.pool)
        return health.endpoints.every((e) => e.state === 'ok') && health.age < 3
      },
      30_000,
      'endpoints ok again',
    )
    await run.finish()
  }, 120_000)
})

describe('everything at once', () => {
  it('all faults, live activity, reorgs and kill -9 during a repair: the index converges to the chain', async () => {
    const db = await createTestDatabase()
    const proxies = await Promise.all(
      [1, 2].map((seed) =>
        startProviderProxy({
          upstream: chain.anvil.rpcUrl,
          seed,
          faults: ALL_FAULTS,
          getLogsCap: { maxBlocks: 10, maxResults: 100, style: 'alchemy' },
          // Without receipts, followed blocks are verified (and repaired) once confirmed.
          noBlockReceipts: true,
          // A lagging node answers a block it does not have, asked by hash, with no logs.
          emptyForUnknownHash: true,
        }),
      ),
    )
    // Reorgs may roll the confirmed block back (a reorg deeper than CONFIRMATIONS); the head never.
    const watcher = watchMonotonic(db.pool, { confirmed: false })
    const children: ChildIndexer[] = []
    const spawn = () => {
      const child = spawnIndexer({
        DATABASE_URL: db.url,
        RPC_URL: proxies.map((p) => p.url).join(','),
        CONFIRMATIONS: '2',
        RPC_TIMEOUT_MS: '1000',
        MEDIA_DIR: '/tmp/indexer-provider-media',
      })
      children.push(child)
      return child
    }
    try {
      let indexer = spawn()
      await waitForVerified(db.pool, chain, 2n, 120_000)
      const [alice, bob, carol] = chain.accounts
      for (let round = 0; round < 3; round++) {
        // Followed blocks stored wrong (every answer by block hash leaves a log out) are repaired once confirmed...
        for (const p of proxies) p.setFaults({ omitLogByHash: 1 })
        for (let i = 0; i < 2; i++) {
          const id = history.nextId
          history.nextId += 3n
          await chain.call(history.nft, 'TestNFT', 'mintBatch', [bob, id, 3n])
          await multiBatch(chain, history, id)
          await waitForIndexed(db.pool, chain.clients, 60_000)
        }
        for (const p of proxies) p.setFaults({ omitLogByHash: 0 })
        await liveBlock(chain, history)
        // ...and the indexer is killed while it repairs.
        await indexer.waitForLine(/repairing stored rows/, 60_000)
        await new Promise((r) => setTimeout(r, Math.random() * 60))
        await indexer.kill9()
        await reorgChain(chain.clients, {
          depth: 1 + round,
          accounts: chain.accounts,
          sendReplacementTransactions: async (i) => {
            const id = 2_000_000n + BigInt(round * 10 + i)
            await chain.send(history.nft, 'TestNFT', 'mint', [i % 2 ? alice : bob, id])
            await chain.send(history.editions, 'TestEditions', 'mintBatch', [carol, [id, 4n], [3n, 1n]])
          },
        })
        indexer = spawn()
        await liveBlock(chain, history)
        await chain.call(history.nft, 'TestNFT', 'move', [alice, carol, BigInt(300 + round * 200 + 7)], alice)
      }
      // The faults clear; the chain moves on until every faulty read is confirmed, and thus verified.
      for (const p of proxies) p.setFaults(NO_FAULTS)
      await liveBlock(chain, history)
      await waitForVerified(db.pool, chain, 2n, 120_000)
      await indexer.kill9()
      await watcher.stop()
      await expectDatabaseMatchesChain(db.pool, chain.clients, history.nfts)
      expect(watcher.backwards).toEqual([])
      const counts = await verificationCounts(db.pool)
      expect(counts.repairs).toBeGreaterThan(0)
      expect(proxies.reduce((n, p) => n + p.omitted().length, 0)).toBeGreaterThan(0)
    } finally {
      await Promise.all(children.map((c) => c.kill9()))
      await watcher.stop()
      await Promise.all(proxies.map((p) => p.stop()))
      await db.drop()
    }
  }, 300_000)
})
