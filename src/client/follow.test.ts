/**
 * The activity follower end to end: anvil mines real mints, the indexer
 * indexes them into PostgreSQL, the REST layer serves /v1/activity, and the
 * client's follower, polling its first page, hands out each new transfer
 * once and only once — a burst larger than a page included.
 */
import type { Address } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestChain, type TestChain } from '@/indexer/test/chain'
import { type RunningIndexer, startIndexer, testConfig } from '@/indexer/test/indexer'
import { waitFor, waitForIndexed } from '@/indexer/test/oracle'
import { type ApiServer, startApiServer } from '@/test/api-client'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import { type ActivityItem, createNftDataClient, eventKey, type FollowOptions } from './index'

let chain: TestChain
let db: TestDatabase
let indexer: RunningIndexer
let api: ApiServer
let nft: Address

beforeAll(async () => {
  ;[chain, db] = await Promise.all([startTestChain(), createTestDatabase()])
  nft = (await chain.deploy('TestNFT', ['Followed', 'FLW', 'http://127.0.0.1:9/meta/'])).address
  await chain.call(nft, 'TestNFT', 'mint', [chain.accounts[1], 1n])
  await chain.call(nft, 'TestNFT', 'mint', [chain.accounts[1], 2n])
  const config = testConfig({ DATABASE_URL: db.url, RPC_URL: chain.anvil.rpcUrl })
  indexer = startIndexer(config, db.pool, { metadata: { enabled: false } })
  await waitForIndexed(db.pool, chain.clients)
  api = await startApiServer(db.url)
}, 120_000)

afterAll(async () => {
  await indexer?.stop()
  await api?.close()
  await chain?.stop()
  await db?.drop()
})

/** Runs a follower in the background, collecting what it yields until stopped. */
function follow(options: FollowOptions) {
  const controller = new AbortController()
  const client = createNftDataClient({ baseUrl: api.base, apiKey: api.token })
  const events: ActivityItem[] = []
  const done = (async () => {
    for await (const event of client.followActivity({ ...options, signal: controller.signal }))
      events.push(event)
  })()
  return {
    events,
    async stop() {
      controller.abort()
      await done
    },
  }
}

const tokenIds = (events: ActivityItem[]) => events.map((e) => e.token_id)

describe('followActivity', () => {
  it('sees each new transfer once and only once, oldest first, across polls and a burst larger than a page', async () => {
    // Page size 2: the burst of five below needs three pages in one poll.
    const newOnly = follow({ intervalMs: 150, skipExisting: true, query: { limit: 2, collection: nft } })
    const everything = follow({ intervalMs: 150, query: { collection: nft } })
    try {
      await waitFor(async () => everything.events.length >= 2, 10_000, 'the existing mints')
      await new Promise((r) => setTimeout(r, 400)) // a few polls with nothing new
      expect(newOnly.events).toEqual([])

      await chain.call(nft, 'TestNFT', 'mint', [chain.accounts[2], 10n])
      await chain.call(nft, 'TestNFT', 'mint', [chain.accounts[2], 11n])
      await waitForIndexed(db.pool, chain.clients)
      await waitFor(async () => newOnly.events.length >= 2, 10_000, 'two new mints')

      await chain.call(nft, 'TestNFT', 'mintBatch', [chain.accounts[3], 100n, 5n])
      await waitForIndexed(db.pool, chain.clients)
      await waitFor(async () => newOnly.events.length >= 7, 10_000, 'the batch')
      await new Promise((r) => setTimeout(r, 600)) // more polls: nothing may come twice

      expect(tokenIds(newOnly.events)).toEqual(['10', '11', '100', '101', '102', '103', '104'])
      expect(newOnly.events.every((e) => e.event_type === 'mint' && e.collection_address === nft)).toBe(true)
      expect(new Set(newOnly.events.map(eventKey)).size).toBe(7)
      expect(tokenIds(everything.events)).toEqual(['1', '2', '10', '11', '100', '101', '102', '103', '104'])
    } finally {
      await newOnly.stop()
      await everything.stop()
    }
  })

  it('reads a burst longer than maxPagesPerPoll on in the next polls: nothing skipped, oldest first', async () => {
    // Two pages of two per poll: a batch of nine needs five pages, three polls.
    const follower = follow({
      intervalMs: 150,
      skipExisting: true,
      maxPagesPerPoll: 2,
      query: { limit: 2, collection: nft },
    })
    try {
      await new Promise((r) => setTimeout(r, 400)) // the first poll, which yields nothing
      await chain.call(nft, 'TestNFT', 'mintBatch', [chain.accounts[4], 200n, 9n])
      await waitForIndexed(db.pool, chain.clients)
      await waitFor(async () => follower.events.length >= 9, 10_000, 'the batch of nine')
      await new Promise((r) => setTimeout(r, 600)) // more polls: nothing may come twice
      expect(tokenIds(follower.events)).toEqual([
        '200',
        '201',
        '202',
        '203',
        '204',
        '205',
        '206',
        '207',
        '208',
      ])
    } finally {
      await follower.stop()
    }
  })

  it('stops when its signal aborts, even mid-wait', async () => {
    const follower = follow({ intervalMs: 60_000 })
    await waitFor(async () => follower.events.length > 0, 10_000, 'the first poll')
    const started = Date.now()
    await follower.stop()
    expect(Date.now() - started).toBeLessThan(1000)
  })
})
