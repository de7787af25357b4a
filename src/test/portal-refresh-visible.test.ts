/**
 * A refresh asked for in the portal reaches /v1 (docs/metadata.md, "Refresh
 * requests"): a token whose document changed on its host after it settled
 * `ok` keeps the old document until a user refreshes it through the portal's
 * procedure; then the real metadata queue (LISTEN/NOTIFY pick-up, priority
 * read, fetch from a local HTTP host) writes the new one, and GET /v1 serves
 * it — also to a client revalidating with the old ETag. A collection refresh
 * reads the collection's name again and every one of its tokens.
 */
import pino from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runMetadataQueue } from '@/indexer/metadata/queue'
import { startServer, type TestServer } from '@/indexer/test/http-server'
import { testConfig } from '@/indexer/test/indexer'
import { createPortalHandler } from '@/server/api/portal/handler'
import { ensureUser } from '@/server/api/portal/keys/api-keys'
import { CLIENT_IP_HEADER } from '@/server/http/client-ip'
import type { SessionUser } from '@/server/portal-auth/session-user'
import { type ApiServer, startApiServer } from '@/test/api-client'
import { addr, fakeRpc, fixturePool, SimulatedChain, tempMediaDir, ZERO } from '@/test/api-fixtures'
import { createTestDatabase, isEmbeddedTestDatabase, type TestDatabase } from '@/test/db'

const collection = addr('refreshable')
const stalledCollection = addr('stalled-backlog')
const owner = addr('refresh-owner')

/** What the host serves: the document's version, per token. */
const version = new Map<number, number>()

let db: TestDatabase
let host: TestServer
/** Accepts every request and never answers: its tokens stay in flight until the fetch time-out. */
let stalled: TestServer
let api: ApiServer
let chain: SimulatedChain
let user: SessionUser
let stopQueue: () => Promise<void>
let portal: ReturnType<typeof createPortalHandler>

beforeAll(async () => {
  host = await startServer({
    '/doc/*': (req, res) => {
      const id = Number(req.url!.split('/').pop())
      const v = version.get(id) ?? 1
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          name: `Token ${id} v${v}`,
          description: `version ${v}`,
          attributes: [{ trait_type: 'Version', value: v }],
        }),
      )
    },
  })
  stalled = await startServer({ '/doc/*': () => {} })
  db = await createTestDatabase()
  const pool = fixturePool(db.url)
  chain = new SimulatedChain(pool)
  await chain.init()
  chain.contracts.set(collection, {
    name: 'Refreshable',
    symbol: 'RFR',
    deployBlock: 1n,
    tokenUri: (id) => `${host.origin}/doc/${id}`,
  })
  await chain.mine(1, (_b, emit) => {
    for (let id = 1n; id <= 3n; id++) emit({ collection, tokenId: id, from: ZERO, to: owner })
  })
  await chain.describeCollections()
  api = await startApiServer(db.url)
  user = await ensureUser(api.db, '0x00000000000000000000000000000000000f1e50')
  portal = createPortalHandler(api.services, async () => user)
  // The metadata queue as the indexer runs it, on its own pool.
  const controller = new AbortController()
  const queuePool = fixturePool(db.url)
  const done = runMetadataQueue(
    {
      config: testConfig({
        FETCH_ALLOW_HOSTS: `127.0.0.1:${host.port},127.0.0.1:${stalled.port}`,
        MEDIA_DIR: tempMediaDir(),
      }),
      pool: queuePool,
      rpc: fakeRpc(chain.contracts),
      logger: pino({ level: 'silent' }),
      signal: controller.signal,
    },
    // Polling far apart: the pick-up here is the notification's — except on the embedded server
    // (PGlite), which delivers no notification to another connection, where the poll is the pick-up.
    // A small memory and a long time-out, so that a backlog on the stalled host fills the queue (the last test).
    {
      idleMs: 200,
      refreshPollMs: isEmbeddedTestDatabase() ? 500 : 60_000,
      reportMs: 60_000,
      maxInMemory: 60,
      timeoutMs: 60_000,
    },
  )
  stopQueue = async () => {
    controller.abort()
    await done.catch(() => undefined)
    await queuePool.end()
    await pool.end()
  }
  // Settled: every token ok at version 1.
  await eventually(
    async () => (await nft(3)).metadata_status === 'ok' && (await nft(1)).metadata_status === 'ok',
  )
}, 60_000)

afterAll(async () => {
  await stopQueue?.()
  await api?.close()
  await db?.drop()
  await host?.close()
  await stalled?.close()
})

interface Nft {
  name?: string
  description?: string
  metadata_status: string
  attributes?: unknown[]
}

async function nft(id: number): Promise<Nft> {
  const res = await api.request(`/v1/nfts/${collection}/${id}?include_metadata=true`)
  expect(res.status).toBe(200)
  return ((await res.json()) as { data: Nft }).data
}

async function eventually(check: () => Promise<boolean>, ms = 20_000): Promise<void> {
  const end = Date.now() + ms
  while (Date.now() < end) {
    if (await check()) return
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error('not within the wait')
}

async function refresh(path: string, input: unknown): Promise<number> {
  const res = await portal(
    new Request(`http://localhost/api/trpc/${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [CLIENT_IP_HEADER]: '198.51.100.77' },
      body: JSON.stringify(input),
    }),
  )
  await res.arrayBuffer()
  return res.status
}

describe('a refresh through the portal', () => {
  it('makes a changed document visible through /v1, which served the old one until then', async () => {
    expect((await nft(1)).name).toBe('Token 1 v1')
    const before = await api.request(`/v1/nfts/${collection}/1?include_metadata=true`)
    const etag = before.headers.get('etag')
    expect(etag).toBeTruthy()
    await before.arrayBuffer()
    version.set(1, 2)
    // Settled ok: nothing fetches it again by itself.
    await new Promise((r) => setTimeout(r, 1_000))
    expect((await nft(1)).name).toBe('Token 1 v1')

    expect(await refresh('refresh.token', { address: collection, token_id: '1' })).toBe(200)
    await eventually(async () => (await nft(1)).name === 'Token 1 v2')
    expect(await nft(1)).toMatchObject({
      metadata_status: 'ok',
      description: 'version 2',
      attributes: [{ trait_type: 'Version', value: 2 }],
    })
    const doc = await api.request(`/v1/nfts/${collection}/1/metadata`)
    expect(((await doc.json()) as { data: { document: unknown } }).data.document).toMatchObject({
      name: 'Token 1 v2',
    })
    // A client revalidating with the old ETag gets the new document, not a 304.
    const revalidated = await api.request(`/v1/nfts/${collection}/1?include_metadata=true`, {
      headers: { 'If-None-Match': etag! },
    })
    expect(revalidated.status).toBe(200)
    expect(((await revalidated.json()) as { data: Nft }).data.name).toBe('Token 1 v2')
    // The others were not fetched again.
    expect((await nft(2)).name).toBe('Token 2 v1')
    const { rows } = await db.pool.query(
      `SELECT applied_at IS NOT NULL AS applied FROM metadata_refresh_requests WHERE token_id = 1`,
    )
    expect(rows).toEqual([{ applied: true }])
  })

  it("reads a refreshed collection's name and every one of its tokens again", async () => {
    version.set(2, 3)
    version.set(3, 3)
    chain.contracts.get(collection)!.name = 'Refreshable Renamed'
    expect(await refresh('refresh.collection', { address: collection })).toBe(200)
    await eventually(async () => (await nft(2)).name === 'Token 2 v3' && (await nft(3)).name === 'Token 3 v3')
    await eventually(async () => {
      const res = await api.request(`/v1/collections/${collection}`)
      return ((await res.json()) as { data: { name: string } }).data.name === 'Refreshable Renamed'
    })
  })

  it('takes a refreshed token ahead of a backlog that fills the queue', async () => {
    chain.contracts.set(stalledCollection, {
      name: 'Stalled',
      symbol: 'STL',
      deployBlock: 1n,
      tokenUri: (id) => `${stalled.origin}/doc/${id}`,
    })
    await chain.mine(1, (_b, emit) => {
      for (let id = 1n; id <= 300n; id++)
        emit({ collection: stalledCollection, tokenId: id, from: ZERO, to: owner })
    })
    // The queue's memory (60 tokens) fills with the stalled host's tokens, none of which settles for a minute.
    await eventually(async () => stalled.hits.length >= 4)
    await new Promise((r) => setTimeout(r, 1_000))
    version.set(3, 5)
    expect(await refresh('refresh.token', { address: collection, token_id: '3' })).toBe(200)
    await eventually(async () => (await nft(3)).name === 'Token 3 v5')
    const { rows } = await db.pool.query(
      `SELECT count(*)::int AS settled FROM tokens
        WHERE collection_address = $1 AND metadata_fetched_at IS NOT NULL`,
      [stalledCollection],
    )
    // Passed, not waited for: not one token of the backlog had an outcome yet.
    expect(rows).toEqual([{ settled: 0 }])
  })
})
