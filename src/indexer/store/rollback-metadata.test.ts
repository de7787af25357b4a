/**
 * Metadata state that follows token state (docs/metadata.md, "A token that comes back from
 * burned"; docs/indexer.md, "Collections"):
 *  - a burned token's metadata outcome is final (no re-check while burned); when the token
 *    is live again — minted again, or its burn taken away by a reorganisation — without a
 *    document, it is queued (one with a document keeps it: src/indexer/store/rarity.test.ts);
 *  - a collection's fallback image is the image of its lowest token id that has one, also
 *    after a rollback deletes that token.
 */
import type { Hex } from 'viem'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import type { TransferEvent } from '../events/types'
import { recheckAt } from '../metadata/recheck'
import { refreshFallbackImages } from './collections'
import { commitBatch } from './commit'
import { saveTokenOutcomes, selectDueTokens } from './metadata-queue'
import { rollbackAfter } from './rollback'
import { ensureIndexerState } from './state'

let db: TestDatabase
const ZERO = '0x0000000000000000000000000000000000000000' as Hex
const A = '0x00000000000000000000000000000000000000a1' as Hex
const COLLECTION = '0x00000000000000000000000000000000000000f1' as Hex
const hash = (n: number) => `0x${n.toString(16).padStart(64, '0')}` as Hex
const now = BigInt(Math.floor(Date.now() / 1000)) - 1000n
let last: bigint | null = null

beforeAll(async () => {
  db = await createTestDatabase()
}, 60_000)
afterAll(async () => {
  await db?.drop()
})
beforeEach(async () => {
  await db.pool.query(
    'TRUNCATE transfers, tokens, token_documents, collections, collection_holders, blocks, indexed_ranges, indexer_state, activity_journal',
  )
  await ensureIndexerState(db.pool, { network: 'devnet', chainId: 31337, startBlock: 1 })
  last = null
})

const transfer = (block: number, tokenId: bigint, from: Hex, to: Hex): TransferEvent => ({
  collection: COLLECTION,
  tokenId,
  from,
  to,
  blockNumber: BigInt(block),
  blockHash: hash(block),
  blockTimestamp: now + BigInt(block),
  transactionHash: hash(0x1000 + block),
  logIndex: 0,
  batchIndex: 0,
  standard: 'ERC721',
})

/** Commits block `block` (unconfirmed: the head is the block itself). */
async function commitBlock(block: number, transfers: TransferEvent[]) {
  const number = BigInt(block)
  last = (
    await commitBatch(
      db.pool,
      { network: 'devnet', startBlock: 1n, expectedLastIndexed: last, keepBlocks: 64n },
      {
        fromBlock: number,
        toBlock: number,
        transfers,
        metadataUpdates: [],
        verified: false,
        blocks: [{ number, hash: hash(block), parentHash: hash(block - 1), timestamp: now + number }],
        lastSeenBlock: number,
        chainConfirmedBlock: 0n,
      },
    )
  ).lastIndexedBlock
}

const reorgTo = (ancestor: number) =>
  rollbackAfter(
    db.pool,
    { network: 'devnet', startBlock: 1n, lastSeenBlock: last!, chainConfirmedBlock: 0n },
    BigInt(ancestor),
  )

/** The metadata queue takes token `id` while it is burned: its tokenURI reverts, for good. */
async function settleWhileBurned(id: bigint) {
  const [due] = await selectDueTokens(db.pool, 10, [], [])
  expect(due?.token_id).toBe(id.toString())
  const empty = { uri: null, metadata: null, description: null, attributes: null, animationUrl: null }
  await saveTokenOutcomes(db.pool, [
    {
      ...empty,
      id: due!.id,
      outcome: 'uri_reverted',
      externalUrl: null,
      backgroundColor: null,
      name: null,
      image: null,
      media: null,
      retryAt: null,
      recheckAt: recheckAt('uri_reverted', 1, 0)!.toISOString(),
      recheck: false,
      attempts: due!.metadata_attempts,
      nextAttemptAt: due!.next_at,
      deferred: false,
      hostOutcome: null,
    },
  ])
  const settled = await queueState(id)
  // Final: neither queued nor re-checked.
  expect(settled).toMatchObject({ is_burned: true, metadata_status: 'uri_reverted', queued: false })
  expect(settled.recheck_at).toBeNull()
}

async function queueState(id: bigint) {
  const { rows } = await db.pool.query(
    `SELECT is_burned, metadata_status, metadata_attempts, coalesce(metadata_next_attempt_at <= now(), false) AS queued,
            metadata_recheck_at AS recheck_at
       FROM tokens WHERE collection_address = $1 AND token_id = $2`,
    [COLLECTION, id.toString()],
  )
  return rows[0]
}

const QUEUED = { is_burned: false, metadata_status: 'pending', metadata_attempts: 0, queued: true }

describe('metadata state after a burn is undone', () => {
  it('a token whose burn a reorganisation took away is queued again', async () => {
    await commitBlock(1, [transfer(1, 7n, ZERO, A)])
    await commitBlock(2, [])
    // Block 3, on a fork about to be replaced, burns it.
    await commitBlock(3, [transfer(3, 7n, A, ZERO)])
    await settleWhileBurned(7n)
    await reorgTo(2)
    expect(await queueState(7n)).toMatchObject(QUEUED)
  })

  it('a burned token minted again is queued again', async () => {
    await commitBlock(1, [transfer(1, 8n, ZERO, A)])
    await commitBlock(2, [transfer(2, 8n, A, ZERO)])
    await settleWhileBurned(8n)
    await commitBlock(3, [transfer(3, 8n, ZERO, A)])
    expect(await queueState(8n)).toMatchObject(QUEUED)
  })
})

describe("a collection's fallback image after a rollback", () => {
  const image = async () =>
    (await db.pool.query('SELECT image_url, image_source FROM collections WHERE address = $1', [COLLECTION]))
      .rows[0]
  const withImages = async () => {
    await db.pool.query(
      `UPDATE tokens SET metadata_status = 'ok', image_url = 'https://img.example/' || token_id::text
        WHERE collection_address = $1`,
      [COLLECTION],
    )
    await refreshFallbackImages(db.pool, [COLLECTION])
  }

  it('moves to the lowest token id that still has one', async () => {
    await commitBlock(1, [transfer(1, 5n, ZERO, A)])
    await commitBlock(2, [])
    await commitBlock(3, [transfer(3, 1n, ZERO, A)])
    await withImages()
    expect(await image()).toEqual({ image_url: 'https://img.example/1', image_source: 'token' })
    // Block 3 is replaced: token 1 never existed on the chain.
    await reorgTo(2)
    expect(await image()).toEqual({ image_url: 'https://img.example/5', image_source: 'token' })
  })

  it('is none when no token with an image is left', async () => {
    await commitBlock(1, [transfer(1, 5n, ZERO, A)])
    await withImages()
    await db.pool.query('UPDATE tokens SET image_url = NULL WHERE token_id = 5')
    await commitBlock(2, [transfer(2, 1n, ZERO, A)])
    await db.pool.query("UPDATE tokens SET image_url = 'https://img.example/1' WHERE token_id = 1")
    await refreshFallbackImages(db.pool, [COLLECTION])
    expect((await image()).image_url).toBe('https://img.example/1')
    await reorgTo(1)
    expect(await image()).toEqual({ image_url: null, image_source: null })
  })
})
