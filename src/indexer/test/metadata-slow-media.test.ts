/**
 * A slow media host does not hold the token queue (docs/metadata.md, "Slow
 * media hosts"): a collection whose documents come fast but whose images take
 * half a second each (served, never failing) fills the tokens in memory; a
 * collection minted after it still gets its metadata on time, and every slow
 * image is stored in the end, each asked for about once, each document once.
 */
import type { Address } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import { startTestChain, type TestChain } from './chain'
import { json, PNG_1x1, startServer, type TestServer } from './http-server'
import { type RunningIndexer, startIndexer, testConfig } from './indexer'
import { waitFor, waitForIndexed } from './oracle'

/** Tokens held in memory at once; the slow collection has two and a half times as many. */
const IN_MEMORY = 80
const SLOW_TOKENS = 200
const IMAGE_DELAY_MS = 500
/**
 * Held up by the slow images (4 at a time, half a second each), tokens minted after the slow
 * collection wait for most of its 200 images: 18 s and more. Served on their own, about the
 * time a finishing fetch may wait (5 s) and a page of tokens.
 */
const NOT_HELD_MS = 12_000

let chain: TestChain
let db: TestDatabase
let documents: TestServer
let images: TestServer
let indexer: RunningIndexer | undefined

beforeAll(async () => {
  images = await startServer(
    {
      '/img/*': (_req, res) => {
        const timer = setTimeout(
          () => res.writeHead(200, { 'content-type': 'image/png' }).end(PNG_1x1),
          IMAGE_DELAY_MS,
        )
        res.on('close', () => clearTimeout(timer))
      },
    },
    '127.0.0.2',
  )
  documents = await startServer({
    '/slow/*': (req, res) => {
      const id = req.url!.split('/').pop()
      json({ name: `Slow ${id}`, image: `${images.origin}/img/${id}.png` })(req, res)
    },
    '/good/*': (req, res) => json({ name: `Good ${req.url!.split('/').pop()}` })(req, res),
  })
  ;[chain, db] = await Promise.all([startTestChain(), createTestDatabase()])
}, 120_000)

afterAll(async () => {
  await indexer?.stop()
  await chain?.stop()
  await db?.drop()
  for (const s of [documents, images]) await s?.close()
})

async function countWhere(collection: Address, condition: string): Promise<number> {
  const { rows } = await db.pool.query(
    `SELECT count(*)::int AS n FROM tokens WHERE collection_address = $1 AND ${condition}`,
    [collection],
  )
  return rows[0].n
}

describe('metadata queue: a slow media host', () => {
  it('settles tokens without waiting for their slow images, and stores every image later', async () => {
    const [alice] = chain.accounts
    const slow = (await chain.deploy('TestNFT', ['Slow', 'SLOW', `${documents.origin}/slow/`])).address
    const good = (await chain.deploy('TestNFT', ['Good', 'GOOD', `${documents.origin}/good/`])).address
    indexer = startIndexer(
      testConfig({
        DATABASE_URL: db.url,
        RPC_URL: chain.anvil.rpcUrl,
        FETCH_ALLOW_HOSTS: [documents, images].map((s) => new URL(s.origin).host).join(','),
      }),
      db.pool,
      { metadata: { maxInMemory: IN_MEMORY, timeoutMs: 10_000 } },
    )
    await waitForIndexed(db.pool, chain.clients)
    // The documents' host has shown its pace (queue.ts lets a fast host queue more).
    await chain.call(good, 'TestNFT', 'mintBatch', [alice, 1n, 40n])
    await waitFor(async () => (await countWhere(good, "metadata_status = 'ok'")) === 40, 60_000, 'warm-up')

    await chain.call(slow, 'TestNFT', 'mintBatch', [alice, 1n, BigInt(SLOW_TOKENS)])
    await waitForIndexed(db.pool, chain.clients)
    // Queued behind every slow token.
    await chain.call(good, 'TestNFT', 'mintBatch', [alice, 41n, 10n])
    const minted = Date.now()
    await waitFor(
      async () => (await countWhere(good, "metadata_status = 'ok'")) === 50,
      60_000,
      'good tokens',
    )
    const goodMs = Date.now() - minted
    expect(goodMs).toBeLessThan(NOT_HELD_MS)

    // Every slow token is settled with its document, and its image is stored in the end.
    await waitFor(
      async () =>
        (await countWhere(slow, "metadata_status = 'ok' AND media_sha256 IS NOT NULL")) === SLOW_TOKENS,
      120_000,
      'every slow image stored',
    )
    const storedMs = Date.now() - minted
    expect(await countWhere(slow, 'metadata_recheck_at IS NOT NULL')).toBe(0)
    // A token refused by the busy host came back for its media alone: one document per token.
    expect(documents.hits.filter((path) => path.startsWith('/slow/'))).toHaveLength(SLOW_TOKENS)
    // Refused fetches never reach the host: each image is asked for once (a timed-out one again).
    expect(images.hits.length).toBeLessThan(SLOW_TOKENS + 10)
    console.log(`slow media: good tokens ok in ${goodMs} ms, every slow image stored in ${storedMs} ms`)
  }, 240_000)
})
