import type { Address } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import { startTestChain, type TestChain } from './chain'
import { startIndexer, testConfig } from './indexer'
import { expectDatabaseMatchesChain, waitForIndexed } from './oracle'

let chain: TestChain
let db: TestDatabase
const c: Record<string, Address> = {}

beforeAll(async () => {
  ;[chain, db] = await Promise.all([startTestChain(), createTestDatabase()])
  const [alice, bob, carol] = chain.accounts
  c.nft = (await chain.deploy('TestNFT', ['Test Apes', 'TAPE', 'http://127.0.0.1:9/meta/'])).address
  c.consecutive = (
    await chain.deploy('TestConsecutive', [
      [alice, bob],
      [5n, 3n],
    ])
  ).address
  c.legacy = (await chain.deploy('LegacyKitties')).address
  c.erc20 = (await chain.deploy('DecoyToken')).address
  c.legacyErc20 = (await chain.deploy('LegacyDecoyToken')).address

  await chain.call(c.nft, 'TestNFT', 'mint', [alice, 1n])
  await chain.call(c.nft, 'TestNFT', 'mint', [alice, 2n ** 256n - 1n])
  await chain.call(c.nft, 'TestNFT', 'mintBatch', [bob, 100n, 10n])
  await chain.call(c.nft, 'TestNFT', 'move', [alice, carol, 1n])
  await chain.call(c.nft, 'TestNFT', 'burn', [100n])
  await chain.call(c.consecutive, 'TestConsecutive', 'move', [alice, carol, 0n])
  await chain.call(c.consecutive, 'TestConsecutive', 'burn', [6n])
  await chain.call(c.legacy, 'LegacyKitties', 'birth', [alice, 7n])
  await chain.call(c.legacy, 'LegacyKitties', 'transfer', [bob, 7n], alice)
  await chain.call(c.erc20, 'DecoyToken', 'mint', [alice, 10n ** 18n])
  await chain.call(c.legacyErc20, 'LegacyDecoyToken', 'mint', [alice, 5n])
}, 120_000)

afterAll(async () => {
  await chain?.stop()
  await db?.drop()
})

describe('sync', () => {
  it('indexes every ERC-721 shape and nothing else, matching the chain', async () => {
    const config = testConfig({ DATABASE_URL: db.url, RPC_URL: chain.anvil.rpcUrl })
    const indexer = startIndexer(config, db.pool, { metadata: { enabled: false } })
    try {
      await waitForIndexed(db.pool, chain.clients)
      await expectDatabaseMatchesChain(db.pool, chain.clients, {
        standard: [c.nft!, c.consecutive!],
        legacy: [c.legacy!],
      })
      const { rows } = await db.pool.query('SELECT address, standard FROM collections ORDER BY address')
      expect(rows).toEqual(
        [
          { address: c.nft, standard: 'ERC721' },
          { address: c.consecutive, standard: 'ERC721' },
          { address: c.legacy, standard: 'ERC721_LEGACY' },
        ].sort((a, b) => a.address!.localeCompare(b.address!)),
      )
      const rejected = await db.pool.query('SELECT address FROM non_nft_contracts')
      expect(rejected.rows.map((r) => r.address)).toEqual([c.legacyErc20])
      const max = await db.pool.query('SELECT token_id::text FROM tokens WHERE token_id = 2^256 - 1::numeric')
      expect(max.rows).toEqual([{ token_id: (2n ** 256n - 1n).toString() }])
    } finally {
      await indexer.stop()
    }
  })
})
