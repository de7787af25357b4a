/**
 * The activity follower end to end: anvil mines real mints, the indexer
 * indexes them into PostgreSQL, the REST layer serves /v1/activity, and the
 * client's follower, polling its first page, hands out each new transfer
 * once and only once — a burst larger than a page included; through the
 * live stream when the server has it (removals after a real reorg
 * included), polling when it has none.
 */
import type { Address } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { reorgChain } from '@/dev/devnet/reorg'
import { startTestChain, type TestChain } from '@/indexer/test/chain'
import { type RunningIndexer, startIndexer, testConfig } from '@/indexer/test/indexer'
import { waitFor, waitForIndexed } from '@/indexer/test/oracle'
import { type ApiServer, startApiServer } from '@/test/api-client'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import {
  type ActivityItem,
  createNftDataClient,
  eventKey,
  type FollowOptions,
  type NftDataClientOptions,
} from './index'

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
function follow(options: FollowOptions, client: Partial<NftDataClientOptions> = {}) {
  const controller = new AbortController()
  const modes: string[] = []
  const removed: ActivityItem[] = []
  const nftClient = createNftDataClient({ baseUrl: api.base, apiKey: api.token, ...client })
  const events: ActivityItem[] = []
  const done = (async () => {
    for await (const event of nftClient.followActivity({
      onMode: (mode) => modes.push(mode),
      onRemoved: (event) => removed.push(event),
      ...options,
      signal: controller.signal,
    }))
      events.push(event)
  })()
  return {
    events,
    modes,
    removed,
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
    // Polling (the stream's own tests are below).
    const newOnly = follow({
      intervalMs: 150,
      skipExisting: true,
      stream: false,
      query: { limit: 2, collection: nft },
    })
    const everything = follow({ intervalMs: 150, stream: false, query: { collection: nft } })
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
      stream: false,
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

  it('uses the live stream: new events at once (no poll would come in time), and removals after a real reorg', async () => {
    // A poll every minute: whatever arrives within seconds came through the stream.
    const follower = follow({ intervalMs: 60_000, skipExisting: true, query: { collection: nft } })
    try {
      await waitFor(async () => follower.modes.length > 0, 10_000, 'the stream')
      expect(follower.modes).toEqual(['stream'])
      await chain.call(nft, 'TestNFT', 'mint', [chain.accounts[2], 300n])
      await waitFor(async () => follower.events.length >= 1, 10_000, 'the streamed mint')
      expect(tokenIds(follower.events)).toEqual(['300'])
      // The mint's block is replaced by one without it: the stream reports the removal.
      await reorgChain(chain.clients, { depth: 1, accounts: chain.accounts })
      await waitForIndexed(db.pool, chain.clients)
      await waitFor(async () => follower.removed.length >= 1, 10_000, 'the removal')
      expect(tokenIds(follower.removed)).toEqual(['300'])
      await chain.call(nft, 'TestNFT', 'mint', [chain.accounts[2], 301n])
      await waitFor(async () => follower.events.length >= 2, 10_000, 'the next mint')
      expect(tokenIds(follower.events)).toEqual(['300', '301'])
    } finally {
      await follower.stop()
    }
  })

  it('falls back to polling when the server has no stream (404) or fetch cannot stream a body', async () => {
    // A server without the stream: the path answers the API's own 404.
    const noStream = follow(
      { intervalMs: 150, skipExisting: true, query: { collection: nft } },
      {
        fetch: (request) =>
          fetch(
            request.url.includes('/v1/activity/stream')
              ? new Request(request.url.replace('/stream', '/streams'), request)
              : request,
          ),
      },
    )
    // A runtime whose fetch gives no body stream.
    const noBody = follow(
      { intervalMs: 150, skipExisting: true, query: { collection: nft } },
      {
        fetch: async (request) => {
          const response = await fetch(request)
          if (!request.url.includes('/v1/activity/stream')) return response
          await response.body?.cancel()
          return new Response(null, { status: response.status, headers: response.headers })
        },
      },
    )
    try {
      await waitFor(async () => noStream.modes.length > 0 && noBody.modes.length > 0, 10_000, 'the modes')
      expect(noStream.modes).toEqual(['poll'])
      expect(noBody.modes).toEqual(['poll'])
      await new Promise((r) => setTimeout(r, 400)) // the first poll, which yields nothing
      await chain.call(nft, 'TestNFT', 'mint', [chain.accounts[2], 400n])
      await waitForIndexed(db.pool, chain.clients)
      await waitFor(async () => noStream.events.length >= 1 && noBody.events.length >= 1, 10_000, 'the mint')
      expect(tokenIds(noStream.events)).toEqual(['400'])
      expect(tokenIds(noBody.events)).toEqual(['400'])
    } finally {
      await noStream.stop()
      await noBody.stop()
    }
  })

  it('through the stream, hands out the first page first (unless skipExisting), then new events, each once', async () => {
    const follower = follow({ intervalMs: 60_000, query: { collection: nft, limit: 3 } })
    try {
      await waitFor(async () => follower.events.length >= 3, 10_000, 'the first page')
      expect(follower.modes).toEqual(['stream'])
      const first = tokenIds(follower.events)
      await chain.call(nft, 'TestNFT', 'mint', [chain.accounts[2], 500n])
      await waitFor(async () => follower.events.length >= 4, 10_000, 'the new mint')
      await new Promise((r) => setTimeout(r, 300))
      expect(tokenIds(follower.events)).toEqual([...first, '500'])
    } finally {
      await follower.stop()
    }
  })

  it('passes `standard` to the stream: ERC-1155 transfers come through it, with their amount', async () => {
    const editions = (await chain.deploy('TestEditions', [''])).address
    // A poll every minute: an event that arrives within seconds came through the stream.
    const follower = follow({
      intervalMs: 60_000,
      skipExisting: true,
      query: { collection: editions.toLowerCase(), standard: 'all' },
    })
    try {
      await waitFor(async () => follower.modes.length > 0, 10_000, 'the stream')
      expect(follower.modes).toEqual(['stream'])
      await chain.call(editions, 'TestEditions', 'mint', [chain.accounts[2], 7n, 5n])
      await waitFor(async () => follower.events.length >= 1, 10_000, 'the streamed ERC-1155 mint')
      expect(follower.events.map((e) => [e.token_id, e.event_type, e.amount])).toEqual([['7', 'mint', '5']])
    } finally {
      await follower.stop()
    }
  })

  it('resumes a stream that broke off from the last event id: nothing lost, nothing twice', async () => {
    const resumedFrom: Array<string | null> = []
    let cut = false
    const follower = follow(
      { intervalMs: 60_000, skipExisting: true, query: { collection: nft } },
      {
        fetch: async (request) => {
          const response = await fetch(request)
          if (!request.url.includes('/v1/activity/stream')) return response
          resumedFrom.push(request.headers.get('Last-Event-ID'))
          if (cut || !response.body) return response
          cut = true
          // The first connection breaks off right after its first event.
          const reader = response.body.getReader()
          let text = ''
          const body = new ReadableStream<Uint8Array>({
            async pull(controller) {
              const { value, done } = await reader.read()
              if (done) return controller.close()
              controller.enqueue(value)
              text += new TextDecoder().decode(value)
              if (text.includes('\nid: ') || text.startsWith('id: ')) {
                await reader.cancel()
                controller.error(new TypeError('network error'))
              }
            },
          })
          return new Response(body, { status: response.status, headers: response.headers })
        },
      },
    )
    try {
      await waitFor(async () => follower.modes.length > 0, 10_000, 'the stream')
      await chain.call(nft, 'TestNFT', 'mint', [chain.accounts[2], 600n])
      await waitFor(async () => follower.events.length >= 1, 10_000, 'the first mint')
      // Mined while the follower waits to reconnect.
      await chain.call(nft, 'TestNFT', 'mint', [chain.accounts[2], 601n])
      await chain.call(nft, 'TestNFT', 'mint', [chain.accounts[2], 602n])
      await waitFor(async () => follower.events.length >= 3, 15_000, 'the mints after the break')
      await new Promise((r) => setTimeout(r, 300))
      expect(tokenIds(follower.events)).toEqual(['600', '601', '602'])
      expect(resumedFrom).toHaveLength(2)
      expect(resumedFrom[0]).toBeNull()
      expect(resumedFrom[1]).toMatch(/^[1-9][0-9]*$/)
    } finally {
      await follower.stop()
    }
  })
})
