/**
 * ERC-1155 end to end against the chain itself: an OpenZeppelin ERC-1155 on
 * anvil with single and batch mints, transfers (by the holder and by an
 * operator approved with setApprovalForAll), burns, URI events and two
 * reorganisations that orphan batches. Once everything is confirmed, every
 * balance equals balanceOfBatch() at the confirmed block, every token and
 * collection counter a model of the chain's logs, every stored transfer row
 * the logs read with eth_getLogs, and nothing of the orphaned blocks remains.
 */
import type { Address, Hex } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { reorgChain } from '@/dev/devnet/reorg'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import { startTestChain, type TestChain } from './chain'
import { type RunningIndexer, startIndexer, testConfig } from './indexer'
import { expectDatabaseMatchesChain, waitForIndexed } from './oracle'
import { waitForVerified } from './provider-run'

const MAX = 2n ** 256n - 1n
let chain: TestChain
let db: TestDatabase
let indexer: RunningIndexer
let editions: Address
let nft: Address
let alice: Address, bob: Address, carol: Address, dave: Address, eve: Address

/** Sends `fn` on the editions contract, waits for its block, returns its transaction hash. */
async function tx(fn: string, args: unknown[], from?: Address): Promise<Hex> {
  const hash = await chain.send(editions, 'TestEditions', fn, args, from)
  const receipt = await chain.clients.public.waitForTransactionReceipt({ hash })
  if (receipt.status !== 'success') throw new Error(`TestEditions.${fn} reverted`)
  return hash
}

const nfts = () => ({ standard: [nft], legacy: [], multi: [editions] })

/** What the database still holds of transactions `hashes` (transfers, URI events). */
async function traces(hashes: Hex[]) {
  const { rows } = await db.pool.query(
    `SELECT (SELECT count(*)::int FROM transfers WHERE transaction_hash = ANY($1)) AS transfers,
            (SELECT count(*)::int FROM erc1155_uris WHERE transaction_hash = ANY($1)) AS uris`,
    [hashes.map((h) => h.toLowerCase())],
  )
  return rows[0] as { transfers: number; uris: number }
}

/** Rows of ids `ids` in tokens and token_balances. */
async function idRows(ids: bigint[]) {
  const { rows } = await db.pool.query(
    `SELECT (SELECT count(*)::int FROM tokens WHERE collection_address = $1 AND token_id = ANY($2::numeric[])) AS tokens,
            (SELECT count(*)::int FROM token_balances
              WHERE collection_address = $1 AND token_id = ANY($2::numeric[])) AS balances`,
    [editions, ids.map(String)],
  )
  return rows[0] as { tokens: number; balances: number }
}

const urisOf = async (id: bigint) =>
  (
    await db.pool.query(
      'SELECT uri FROM erc1155_uris WHERE collection_address = $1 AND token_id = $2 ORDER BY block_number',
      [editions, id.toString()],
    )
  ).rows.map((r) => r.uri)

beforeAll(async () => {
  ;[chain, db] = await Promise.all([startTestChain(), createTestDatabase()])
  ;[alice, bob, carol, dave, eve] = chain.accounts as [Address, Address, Address, Address, Address]
  editions = (await chain.deploy('TestEditions', ['ipfs://editions/{id}.json'])).address
  nft = (await chain.deploy('TestNFT', ['Truth Apes', 'TRUTH', ''])).address
  // History before the indexer starts (backfilled): every ERC-1155 shape.
  await tx('mint', [alice, 1n, 100n])
  await tx('mintBatch', [bob, [2n, 3n, 4n], [10n, 20n, 30n]])
  await tx('mint', [alice, MAX, 5n])
  // A batch naming one id twice, and a value of 0 (both allowed by EIP-1155).
  await tx('mintBatch', [carol, [5n, 5n, 9n], [1n, 2n, 0n]])
  await chain.call(nft, 'TestNFT', 'mint', [alice, 1n])
  await tx('safeTransferFrom', [alice, bob, 1n, 30n, '0x'], alice)
  await tx('safeBatchTransferFrom', [bob, carol, [2n, 3n], [4n, 20n], '0x'], bob)
  // Dave moves carol's tokens as her operator.
  await tx('setApprovalForAll', [dave, true], carol)
  await tx('safeTransferFrom', [carol, eve, 2n, 1n, '0x'], dave)
  await tx('safeBatchTransferFrom', [carol, alice, [3n, 2n, 5n], [5n, 3n, 3n], '0x'], dave)
  await tx('burn', [alice, 1n, 70n])
  await tx('burnBatch', [bob, [4n, 1n], [30n, 30n]])
  await tx('setURI', [2n, 'ipfs://two'])
  await tx('safeTransferFrom', [eve, eve, 2n, 1n, '0x'], eve)
  await tx('safeTransferFrom', [alice, carol, 3n, 0n, '0x'], alice)
  indexer = startIndexer(testConfig({ DATABASE_URL: db.url, RPC_URL: chain.anvil.rpcUrl }), db.pool, {
    metadata: { enabled: false },
  })
  await waitForIndexed(db.pool, chain.clients)
}, 120_000)

afterAll(async () => {
  await indexer?.stop()
  await chain?.stop()
  await db?.drop()
})

describe('ERC-1155 against the chain', () => {
  it('backfilled history and followed blocks match the chain (balances = balanceOfBatch)', async () => {
    await expectDatabaseMatchesChain(db.pool, chain.clients, nfts())
    // Followed at the head: a batch mint, a batch transfer and a mint of a burned-out id.
    await tx('mintBatch', [dave, [2n, 10n], [7n, 7n]])
    await tx('safeBatchTransferFrom', [dave, bob, [10n, 2n], [2n, 7n], '0x'], dave)
    // Id 4 was burned out (supply 0): minted again, it is held again.
    await tx('mint', [eve, 4n, 2n])
    await waitForIndexed(db.pool, chain.clients)
    await expectDatabaseMatchesChain(db.pool, chain.clients, nfts())
  })

  it('a reorganisation above the confirmed block orphans a batch and a URI event: no trace remains', async () => {
    const orphaned = [
      await tx('mintBatch', [eve, [100n, 101n, 2n], [5n, 6n, 7n]]),
      await tx('setURI', [2n, 'ipfs://orphaned']),
    ]
    await waitForIndexed(db.pool, chain.clients)
    // Indexed before the reorganisation: what must go is there.
    expect(await traces(orphaned)).toEqual({ transfers: 3, uris: 1 })
    expect(await urisOf(2n)).toEqual(['ipfs://two', 'ipfs://orphaned'])
    await reorgChain(chain.clients, {
      depth: 2,
      accounts: chain.accounts,
      // Other batches in the replacement blocks.
      sendReplacementTransactions: async (i) => {
        if (i === 0) await chain.send(editions, 'TestEditions', 'mintBatch', [carol, [200n, 2n], [1n, 1n]])
        if (i === 1) await chain.send(editions, 'TestEditions', 'burnBatch', [carol, [3n], [1n]])
      },
    })
    await waitForIndexed(db.pool, chain.clients)
    expect(await traces(orphaned)).toEqual({ transfers: 0, uris: 0 })
    expect(await idRows([100n, 101n])).toEqual({ tokens: 0, balances: 0 })
    expect(await urisOf(2n)).toEqual(['ipfs://two'])
    await expectDatabaseMatchesChain(db.pool, chain.clients, nfts())
  })

  it('a reorganisation below the confirmed block orphans batch transfers, burns and mints: no trace remains', async () => {
    const orphaned = [
      await tx('safeBatchTransferFrom', [bob, carol, [2n, 10n], [1n, 1n], '0x'], bob),
      await tx('burnBatch', [eve, [2n], [1n]]),
      await tx('mintBatch', [alice, [300n, 301n], [1n, 1n]]),
      await tx('setURI', [300n, 'ipfs://orphan-300']),
    ]
    await waitForIndexed(db.pool, chain.clients)
    expect(await traces(orphaned)).toEqual({ transfers: 5, uris: 1 })
    await reorgChain(chain.clients, {
      depth: 4,
      accounts: chain.accounts,
      sendReplacementTransactions: async (i) => {
        if (i === 0)
          await chain.send(editions, 'TestEditions', 'safeBatchTransferFrom', [alice, eve, [MAX], [1n], '0x'])
        if (i === 1) await chain.send(editions, 'TestEditions', 'mint', [dave, 400n, 4n])
        if (i === 2) await chain.send(editions, 'TestEditions', 'burnBatch', [carol, [3n, 200n], [1n, 1n]])
      },
    })
    await waitForIndexed(db.pool, chain.clients)
    expect(await traces(orphaned)).toEqual({ transfers: 0, uris: 0 })
    expect(await idRows([300n, 301n])).toEqual({ tokens: 0, balances: 0 })
    expect(await urisOf(300n)).toEqual([])
    await expectDatabaseMatchesChain(db.pool, chain.clients, nfts())
  })

  it('once confirmed and verified: every balance equals balanceOfBatch at the confirmed block', async () => {
    const lastActivity = await chain.head()
    // Empty blocks until every block with activity is confirmed (CONFIRMATIONS is 2).
    await chain.clients.test.mine({ blocks: 3 })
    await waitForVerified(db.pool, chain)
    const { rows } = await db.pool.query(
      'SELECT last_confirmed_block::text AS confirmed, verification_mismatches::int AS mismatches FROM indexer_state',
    )
    const confirmed = BigInt(rows[0].confirmed)
    expect(confirmed).toBeGreaterThanOrEqual(lastActivity)
    await expectDatabaseMatchesChain(db.pool, chain.clients, nfts(), { blockNumber: confirmed })
    // The reads of an honest node never disagree.
    expect(rows[0].mismatches).toBe(0)
    const collection = await db.pool.query(
      `SELECT standard, total_supply::int, unique_holders::int, total_transfers::int FROM collections
        WHERE address = $1`,
      [editions],
    )
    // Not vacuous: the chain's counters as the oracle computed them, spelled out once.
    expect(collection.rows[0].standard).toBe('ERC1155')
    expect(collection.rows[0].total_transfers).toBeGreaterThan(30)
    expect(collection.rows[0].unique_holders).toBe(5)
  })
})
