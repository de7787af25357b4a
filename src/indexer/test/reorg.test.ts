import pino from 'pino'
import type { Address } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { reorgChain } from '@/dev/devnet/reorg'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import { startTestChain, type TestChain } from './chain'
import { type RunningIndexer, startIndexer, testConfig } from './indexer'
import { expectDatabaseMatchesChain, waitForIndexed } from './oracle'

let chain: TestChain
let db: TestDatabase
let indexer: RunningIndexer
let nft: Address
let editions: Address
let nextId = 1000n

beforeAll(async () => {
  ;[chain, db] = await Promise.all([startTestChain(), createTestDatabase()])
  nft = (await chain.deploy('TestNFT', ['Reorg Apes', 'RAPE', ''])).address
  await chain.call(nft, 'TestNFT', 'mintBatch', [chain.accounts[0], 1n, 20n])
  editions = (await chain.deploy('TestEditions', [''])).address
  await chain.call(editions, 'TestEditions', 'mintBatch', [chain.accounts[0], [1n, 2n, 3n], [50n, 50n, 50n]])
  const config = testConfig({ DATABASE_URL: db.url, RPC_URL: chain.anvil.rpcUrl, CONFIRMATIONS: '12' })
  indexer = startIndexer(config, db.pool, { metadata: { enabled: false }, logger: rollbackRecorder() })
  await waitForIndexed(db.pool, chain.clients)
}, 120_000)

const rollbacks: { ancestor: bigint; level: number; msg: string }[] = []
/** A logger that remembers each rollback's line (the indexer logs one per reorg). */
function rollbackRecorder() {
  return pino(
    { level: 'info' },
    {
      write(line: string) {
        const entry = JSON.parse(line)
        if (entry.deletedTransfers !== undefined)
          rollbacks.push({ ancestor: BigInt(entry.ancestor), level: entry.level, msg: entry.msg })
      },
    },
  )
}

afterAll(async () => {
  await indexer?.stop()
  await chain?.stop()
  await db?.drop()
})

const [alice, bob, carol] = [0, 1, 2]
const expectMatch = () =>
  expectDatabaseMatchesChain(db.pool, chain.clients, { standard: [nft], legacy: [], multi: [editions] })

/**
 * One block per call: a mint, a transfer and a burn rotate so every event kind is orphaned;
 * each round ends with an ERC-1155 batch (mint of a new and an old id, batch transfer, batch
 * burn, in turn), so the newest block is always one.
 */
async function activity(blocks: number) {
  for (let i = 0; i < blocks; i++) {
    const id = nextId++
    await chain.call(nft, 'TestNFT', 'mint', [chain.accounts[bob], id])
    if (i % 3 === 1)
      await chain.call(nft, 'TestNFT', 'move', [chain.accounts[bob], chain.accounts[carol], id])
    if (i % 3 === 2) await chain.call(nft, 'TestNFT', 'burn', [id])
    const [to, from] = [chain.accounts[bob]!, chain.accounts[alice]!]
    if (i % 3 === 0) await chain.call(editions, 'TestEditions', 'mintBatch', [to, [id, 1n], [3n, 2n]])
    if (i % 3 === 1)
      await chain.call(editions, 'TestEditions', 'safeBatchTransferFrom', [
        from,
        to,
        [2n, 3n],
        [1n, 2n],
        '0x',
      ])
    if (i % 3 === 2) await chain.call(editions, 'TestEditions', 'burnBatch', [from, [1n, 3n], [1n, 1n]])
  }
}

/** Transactions of the ERC-1155 rows stored above `block`. */
const multiRowsAbove = async (block: bigint) =>
  (
    await db.pool.query(
      'SELECT DISTINCT transaction_hash FROM transfers WHERE amount IS NOT NULL AND block_number > $1',
      [block.toString()],
    )
  ).rows.map((r) => r.transaction_hash as string)

describe('reorganisations while following the head', () => {
  for (const depth of [1, 2, 3, 5, 8]) {
    it(`rolls back and re-ingests a reorg of depth ${depth}`, async () => {
      await activity(depth + 1)
      await waitForIndexed(db.pool, chain.clients)
      const orphaned = await db.pool.query('SELECT count(*)::int AS n FROM transfers')
      const orphanedBatches = await multiRowsAbove((await chain.head()) - BigInt(depth))
      const result = await reorgChain(chain.clients, {
        depth,
        accounts: chain.accounts,
        // Different NFT activity in the replacement blocks: new mints and moves of old tokens.
        sendReplacementTransactions: async (i) => {
          await chain.send(nft, 'TestNFT', 'mint', [chain.accounts[carol], 50_000n + nextId++])
          await chain.send(nft, 'TestNFT', 'move', [
            chain.accounts[alice],
            chain.accounts[bob],
            BigInt(1 + i),
          ])
          // And other ERC-1155 batches: an id of its own, and an old id moved.
          await chain.send(editions, 'TestEditions', 'mintBatch', [
            chain.accounts[carol],
            [60_000n + nextId++, 2n],
            [1n, 1n],
          ])
        },
      })
      expect(result.replaced).toHaveLength(depth)
      await waitForIndexed(db.pool, chain.clients)
      await expectMatch()
      const stored = await db.pool.query('SELECT number::text, hash FROM blocks WHERE number > $1', [
        result.commonAncestor.toString(),
      ])
      for (const row of stored.rows) {
        expect(row.hash).toBe(
          result.replaced.find((r) => r.number === BigInt(row.number))?.newHash ?? row.hash,
        )
      }
      expect(orphaned.rows[0].n).toBeGreaterThan(0)
      // A reorged ERC-1155 batch leaves no trace: none of its rows (balances: expectMatch).
      expect(orphanedBatches.length).toBeGreaterThan(0)
      const left = await db.pool.query(
        'SELECT count(*)::int AS n FROM transfers WHERE transaction_hash = ANY($1)',
        [orphanedBatches],
      )
      expect(left.rows[0].n).toBe(0)
      // The rollback went exactly to the common ancestor: blocks below it were kept, not re-ingested.
      // On the devnet a reorg is simulated on purpose: news (info) that says so, not a warning.
      expect(rollbacks.at(-1)).toEqual({
        ancestor: result.commonAncestor,
        level: 30,
        msg: expect.stringContaining('(the devnet simulates reorgs now and then: expected)'),
      })
    })
  }

  it('re-syncs from scratch when the devnet is recreated (no stored block survives)', async () => {
    const port = chain.anvil.port
    await indexer.stop()
    await chain.stop()
    chain = await startTestChain({ port })
    // Same deployer and nonce: the same contract address, different history.
    nft = (await chain.deploy('TestNFT', ['Second Chain', 'TWO', ''])).address
    await chain.call(nft, 'TestNFT', 'mint', [chain.accounts[carol], 7n])
    const config = testConfig({ DATABASE_URL: db.url, RPC_URL: chain.anvil.rpcUrl, CONFIRMATIONS: '12' })
    indexer = startIndexer(config, db.pool, { metadata: { enabled: false } })
    await waitForIndexed(db.pool, chain.clients)
    await expectMatch()
    const { rows } = await db.pool.query('SELECT count(*)::int AS n FROM transfers')
    expect(rows[0].n).toBe(1)
  })
})
