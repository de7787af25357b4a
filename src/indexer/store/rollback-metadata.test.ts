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
import { beforeEach, describe, expect, it } from 'vitest'
import { JOURNAL_COLLECTION as COLLECTION, journalDatabase } from '@/test/journal-writes'
import { recheckAt } from '../metadata/recheck'
import { refreshFallbackImages } from './collections'
import { saveTokenOutcomes, selectDueTokens } from './metadata-queue'

const scope = journalDatabase()
const ZERO = '0x0000000000000000000000000000000000000000' as Hex
const A = '0x00000000000000000000000000000000000000a1' as Hex
let head = 0

beforeEach(() => {
  head = 0
})

/** Commits block `block` holding one transfer of token `id` (none when absent), the head on it. */
async function commitBlock(block: number, id?: bigint, from: Hex = ZERO, to: Hex = A) {
  head = block
  const transfers = id === undefined ? [] : [scope.writer.transfer(block, id, from, to)]
  await scope.writer.commit(scope.writer.blockBatch(block, block, { transfers }))
}

const reorgTo = (ancestor: number) => scope.writer.reorgTo(ancestor, head)

/** The metadata queue takes token `id` while it is burned: its tokenURI reverts, for good. */
async function settleWhileBurned(id: bigint) {
  const [due] = await selectDueTokens(scope.db.pool, 10, [], [])
  expect(due?.token_id).toBe(id.toString())
  const empty = { uri: null, metadata: null, description: null, attributes: null, animationUrl: null }
  await saveTokenOutcomes(scope.db.pool, [
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
  const { rows } = await scope.db.pool.query(
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
    await commitBlock(1, 7n)
    await commitBlock(2)
    // Block 3, on a fork about to be replaced, burns it.
    await commitBlock(3, 7n, A, ZERO)
    await settleWhileBurned(7n)
    await reorgTo(2)
    expect(await queueState(7n)).toMatchObject(QUEUED)
  })

  it('a burned token minted again is queued again', async () => {
    await commitBlock(1, 8n)
    await commitBlock(2, 8n, A, ZERO)
    await settleWhileBurned(8n)
    await commitBlock(3, 8n)
    expect(await queueState(8n)).toMatchObject(QUEUED)
  })
})

describe("a collection's fallback image after a rollback", () => {
  const image = async () =>
    (
      await scope.db.pool.query('SELECT image_url, image_source FROM collections WHERE address = $1', [
        COLLECTION,
      ])
    ).rows[0]
  const withImages = async () => {
    await scope.db.pool.query(
      `UPDATE tokens SET metadata_status = 'ok', image_url = 'https://img.example/' || token_id::text
        WHERE collection_address = $1`,
      [COLLECTION],
    )
    await refreshFallbackImages(scope.db.pool, [COLLECTION])
  }

  it('moves to the lowest token id that still has one', async () => {
    await commitBlock(1, 5n)
    await commitBlock(2)
    await commitBlock(3, 1n)
    await withImages()
    expect(await image()).toEqual({ image_url: 'https://img.example/1', image_source: 'token' })
    // Block 3 is replaced: token 1 never existed on the chain.
    await reorgTo(2)
    expect(await image()).toEqual({ image_url: 'https://img.example/5', image_source: 'token' })
  })

  it('is none when no token with an image is left', async () => {
    await commitBlock(1, 5n)
    await withImages()
    await scope.db.pool.query('UPDATE tokens SET image_url = NULL WHERE token_id = 5')
    await commitBlock(2, 1n)
    await scope.db.pool.query("UPDATE tokens SET image_url = 'https://img.example/1' WHERE token_id = 1")
    await refreshFallbackImages(scope.db.pool, [COLLECTION])
    expect((await image()).image_url).toBe('https://img.example/1')
    await reorgTo(1)
    expect(await image()).toEqual({ image_url: null, image_source: null })
  })
})
