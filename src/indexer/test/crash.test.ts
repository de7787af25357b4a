import type { Address } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { reorgChain } from '@/dev/devnet/reorg'
import { createTestDatabase, isEmbeddedTestDatabase, type TestDatabase } from '@/test/db'
import { startTestChain, type TestChain } from './chain'
import { type ChildIndexer, spawnIndexer } from './child'
import { expectConsistentPrefix, expectDatabaseMatchesChain, waitFor, waitForIndexed } from './oracle'

let chain: TestChain
let db: TestDatabase
let nft: Address
let consecutive: Address
let editions: Address
const children: ChildIndexer[] = []
let leader: ChildIndexer | undefined

const nfts = () => ({ standard: [nft, consecutive], legacy: [], multi: [editions] })
const env = (extra: Record<string, string> = {}) => ({
  DATABASE_URL: db.url,
  RPC_URL: chain.anvil.rpcUrl,
  CONFIRMATIONS: '12',
  // One-block ranges and small commits: the backfill takes many reads and transactions
  // (more than a fast machine finishes between the test's two kills), so a kill lands
  // between and inside them.
  INDEXER_RANGE_BLOCKS: '1',
  INDEXER_COMMIT_EVENTS: '50',
  MEDIA_DIR: '/tmp/indexer-crash-media',
  ...extra,
})
const spawn = (extra?: Record<string, string>) => {
  const child = spawnIndexer(env(extra))
  children.push(child)
  return child
}

beforeAll(async () => {
  ;[chain, db] = await Promise.all([startTestChain(), createTestDatabase()])
  const [alice, bob] = chain.accounts
  nft = (await chain.deploy('TestNFT', ['Crash Apes', 'CRASH', ''])).address
  consecutive = (
    await chain.deploy('TestConsecutive', [
      [alice, bob],
      [2000n, 1500n],
    ])
  ).address
  editions = (await chain.deploy('TestEditions', [''])).address
  for (let i = 0; i < 120; i++) {
    await chain.send(nft, 'TestNFT', 'mintBatch', [i % 2 ? alice : bob, BigInt(i * 100), 20n])
    if (i % 10 === 9) await chain.send(consecutive, 'TestConsecutive', 'move', [alice, bob, BigInt(i)])
    // ERC-1155 batches among them (all sent by alice, so in this order): mints, transfers and
    // burns that empty balances, with id 7 in every mint and transfer.
    const [id, prev] = [BigInt(i), BigInt(i - 1)]
    if (i % 4 === 0)
      await chain.send(editions, 'TestEditions', 'mintBatch', [alice, [id, id + 1n, 7n], [5n, 5n, 1n]])
    if (i % 4 === 1)
      await chain.send(editions, 'TestEditions', 'safeBatchTransferFrom', [
        alice,
        bob,
        [prev, 7n],
        [2n, 1n],
        '0x',
      ])
    if (i % 8 === 2)
      await chain.send(editions, 'TestEditions', 'burnBatch', [alice, [id - 2n, prev], [3n, 5n]])
  }
  await waitFor(
    async () =>
      (await chain.clients.public.getTransactionCount({ address: alice!, blockTag: 'pending' })) > 0,
  )
  await chain.call(nft, 'TestNFT', 'burn', [100n], alice)
}, 120_000)

afterAll(async () => {
  await Promise.all(children.splice(0).map((c) => c.kill9()))
  await chain?.stop()
  await db?.drop()
})

describe('crash safety (kill -9 of the indexer process)', () => {
  it('refuses to run against the wrong chain, with one line and a non-zero exit', {
    timeout: 60_000,
  }, async () => {
    const child = spawn({ CHAIN_ID: '1' })
    const { code } = await child.exited
    expect(code).toBe(3)
    expect(child.stderr.join('').trim().split('\n')).toEqual([
      'Chain id mismatch: CHAIN_ID is 1 but the node at RPC_URL reports 31337',
    ])
  })

  it('converges after kills during backfill', async () => {
    const head = await chain.head()
    let lastSeen = -1n
    for (let round = 0; round < 2; round++) {
      const child = spawn()
      await waitFor(
        async () => {
          const { rows } = await db.pool.query('SELECT last_indexed_block::text AS b FROM indexer_state')
          return rows[0]?.b !== undefined && rows[0].b !== null && BigInt(rows[0].b) > lastSeen
        },
        60_000,
        'a backfill commit',
      )
      // A random moment: between commits or inside one.
      await new Promise((r) => setTimeout(r, Math.random() * 150))
      await child.kill9()
      lastSeen = await expectConsistentPrefix(db.pool, chain.clients, nfts())
    }
    expect(lastSeen).toBeLessThan(head)
    leader = spawn()
    await waitForIndexed(db.pool, chain.clients, 90_000)
    await expectDatabaseMatchesChain(db.pool, chain.clients, nfts())
  }, 180_000)

  it('a kill during a rollback: the waiting second instance takes over and converges', async () => {
    const [alice, bob, carol] = chain.accounts
    // PGlite (embedded test server) is one session: advisory locks cannot exclude there,
    // so the second instance is started after the kill instead of waiting beside the first.
    const standby = isEmbeddedTestDatabase() ? undefined : spawn()
    await standby?.waitForLine(/another indexer holds the leader lock/, 60_000)
    // Heavy orphaned blocks: thousands of token states to rebuild in the rollback transaction.
    for (let i = 0; i < 3; i++)
      await chain.call(nft, 'TestNFT', 'mintBatch', [carol, BigInt(100_000 + i * 400), 400n])
    await waitForIndexed(db.pool, chain.clients)
    const before = await db.pool.query('SELECT count(*)::int AS n FROM transfers')
    await reorgChain(chain.clients, {
      depth: 3,
      accounts: chain.accounts,
      sendReplacementTransactions: async (i) => {
        await chain.send(
          nft,
          'TestNFT',
          'move',
          [i % 2 ? alice : bob, carol, BigInt(i * 100 + 3)],
          i % 2 ? alice : bob,
        )
      },
    })
    await leader!.waitForLine(/rolling back to block/)
    await leader!.kill9()
    const after = await db.pool.query('SELECT count(*)::int AS n FROM transfers')
    // Either the rollback had not committed (all rows still there) or it had: never half of it.
    expect([before.rows[0].n, before.rows[0].n - 1200]).toContain(after.rows[0].n)
    await (standby ?? spawn()).waitForLine(/leader lock acquired/, 30_000)
    await waitForIndexed(db.pool, chain.clients, 60_000)
    await expectDatabaseMatchesChain(db.pool, chain.clients, nfts())
  }, 180_000)
})
