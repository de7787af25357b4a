/**
 * The production topology in small (docs/operations.md, "Replicas and
 * failover"): two web processes and two indexer processes on one PostgreSQL
 * and one Redis, over a real anvil chain. While transfers are being mined,
 * the indexer that holds the writer lock (src/indexer/store/lock.ts) is
 * killed with SIGKILL; the standby takes over, the index ends equal to the
 * chain — no transfer lost, none twice — and both web processes answer
 * throughout.
 */
import { mkdtempSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { Address } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestChain, type TestChain } from '@/indexer/test/chain'
import { type ChildIndexer, spawnIndexer } from '@/indexer/test/child'
import { chainTransfers, expectDatabaseMatchesChain, waitFor, waitForIndexed } from '@/indexer/test/oracle'
import { createApiKey, ensureUser } from '@/server/api/portal/keys/api-keys'
import { TEST_LIMITS } from './api-client'
import { createTestDatabase, isEmbeddedTestDatabase, type TestDatabase } from './db'
import { startTestRedis, type TestRedis } from './redis-server'
import { asDatabase, get } from './serve-api'
import { startWebProcess, type WebProcess } from './web-process'

const STATUS = '/v1/indexer/status'
const LEADER = /leader lock acquired/
const STANDBY = /another indexer holds the leader lock/
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

let chain: TestChain
let db: TestDatabase
let redis: TestRedis
let nft: Address
let secret: string
const webs: WebProcess[] = []
const indexers: ChildIndexer[] = []

/** Which of the two indexers writes: the one that logged taking the lock. */
async function leaderAndStandby(): Promise<[ChildIndexer, ChildIndexer]> {
  const [first, second] = indexers as [ChildIndexer, ChildIndexer]
  const leader = await Promise.any([first.waitForLine(LEADER, 60_000), second.waitForLine(LEADER, 60_000)])
  const [holder, other] = first.lines.includes(leader) ? [first, second] : [second, first]
  await other.waitForLine(STANDBY, 30_000)
  return [holder, other]
}

// Advisory locks exclude only across sessions of a server PostgreSQL (DATABASE_URL, as in CI);
// the embedded test server has one session.
describe.skipIf(isEmbeddedTestDatabase())('two web processes and two indexers', () => {
  beforeAll(async () => {
    ;[chain, db, redis] = await Promise.all([startTestChain(), createTestDatabase(), startTestRedis()])
    nft = (await chain.deploy('TestNFT', ['Failover Apes', 'FAIL', ''])).address
    await chain.call(nft, 'TestNFT', 'mintBatch', [chain.accounts[0], 1n, 40n])
    const user = await ensureUser(asDatabase(db), '0x0000000000000000000000000000000000000f0f')
    ;({ secret } = await createApiKey(
      asDatabase(db),
      { userId: user.id, address: user.address },
      { name: 'ha' },
    ))
    const webEnv = {
      DATABASE_URL: db.url,
      REDIS_URL: redis.url,
      LOG_LEVEL: 'info',
      RATE_LIMIT_KEY: TEST_LIMITS,
      RATE_LIMIT_IP_KEY: TEST_LIMITS,
    }
    const indexerEnv = {
      DATABASE_URL: db.url,
      RPC_URL: chain.anvil.rpcUrl,
      CONFIRMATIONS: '12',
      MEDIA_DIR: mkdtempSync(path.join(os.tmpdir(), 'failover-media-')),
    }
    indexers.push(spawnIndexer(indexerEnv), spawnIndexer(indexerEnv))
    webs.push(...(await Promise.all([startWebProcess('web A', webEnv), startWebProcess('web B', webEnv)])))
  }, 120_000)

  afterAll(async () => {
    try {
      await Promise.all([...indexers.map((i) => i.kill9()), ...webs.map((w) => w.stop())])
      await chain?.stop()
      await db?.drop()
    } finally {
      await redis?.stop()
    }
  })

  it('kill -9 of the writing indexer while transfers are mined: the standby takes over, the index equals the chain', {
    timeout: 180_000,
  }, async () => {
    const [leader, standby] = await leaderAndStandby()
    await waitForIndexed(db.pool, chain.clients, 60_000)

    // Transfers keep coming: a mint, a move and now and then a burn, one block each.
    const [alice, bob] = chain.accounts as [Address, Address]
    let mining = true
    let nextId = 1000n
    const miner = (async () => {
      for (let i = 0; mining; i++) {
        const id = nextId++
        await chain.call(nft, 'TestNFT', 'mint', [alice, id])
        await chain.call(nft, 'TestNFT', 'move', [alice, bob, id], alice)
        if (i % 3 === 0) await chain.call(nft, 'TestNFT', 'burn', [id], bob)
        await sleep(50)
      }
    })()
    // Both web processes are asked all along; every answer must be a 200 (0: no answer at all).
    const answers: number[] = []
    let asking = true
    const asker = (async () => {
      while (asking) {
        for (const web of webs) {
          const res = await get(web.base, STATUS, { credential: secret }).catch(() => undefined)
          await res?.arrayBuffer()
          answers.push(res?.status ?? 0)
        }
        await sleep(100)
      }
    })()
    const indexedBlock = async () =>
      BigInt((await db.pool.query('SELECT last_indexed_block::text AS b FROM indexer_state')).rows[0].b)

    try {
      // The leader is writing the new transfers when it dies.
      const startHead = await chain.head()
      await waitFor(async () => (await indexedBlock()) > startHead, 60_000, 'the leader indexing new blocks')
      await sleep(1000)
      const headAtKill = await chain.head()
      await leader.kill9()
      const killedAt = Date.now()
      await standby.waitForLine(LEADER, 30_000)
      const takeoverMs = Date.now() - killedAt
      console.log(`standby took the writer lock ${takeoverMs} ms after the kill`)
      // The new writer indexes blocks mined after the kill, while mining goes on.
      await waitFor(async () => (await indexedBlock()) > headAtKill, 60_000, 'blocks after the kill indexed')
      await sleep(1000)
    } finally {
      mining = false
      await miner
    }
    try {
      await waitForIndexed(db.pool, chain.clients, 60_000)
    } finally {
      asking = false
      await asker
    }

    expect(answers.length).toBeGreaterThan(10)
    expect(answers.filter((s) => s !== 200)).toEqual([])
    // The database equals the chain: every transfer once, owners, counters.
    await expectDatabaseMatchesChain(db.pool, chain.clients, { standard: [nft], legacy: [] })

    // And both web processes serve it.
    const head = (await chain.head()).toString()
    const transfers = (await chainTransfers(chain.clients, { standard: [nft], legacy: [] })).length
    console.log(
      `${transfers} transfers on the chain and in the index; ${answers.length} status answers, all 200`,
    )
    for (const web of webs) {
      // A web process reuses the indexer snapshot it last read for a moment (docs/api.md,
      // "Freshness headers"): it reports the final block within a few seconds.
      await waitFor(
        async () => {
          const status = await get(web.base, STATUS, { credential: secret })
          expect(status.status, web.name).toBe(200)
          return (await status.json()).data.last_indexed_block === head
        },
        10_000,
        `${web.name} reporting block ${head}`,
      )
      const collection = await get(web.base, `/v1/collections/${nft}`, { credential: secret })
      expect(collection.status, web.name).toBe(200)
      expect((await collection.json()).data.total_transfers, web.name).toBe(String(transfers))
    }
  })
})
