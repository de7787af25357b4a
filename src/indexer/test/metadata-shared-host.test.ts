/**
 * Breakers per collection inside a host, with real local HTTP servers: one
 * host serves a collection whose documents drip (a byte every two seconds)
 * from one path and a well-behaved collection from another; an IPFS gateway
 * serves one CID that drips (not pinned) and one that answers. The
 * well-behaved collections reach ok in their normal time while their slow
 * neighbours time out, and neither host is backed off as a whole.
 */
import type { Address } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import { startTestChain, type TestChain } from './chain'
import { json, type Route, startServer, type TestServer } from './http-server'
import { type RunningIndexer, startIndexer, testConfig } from './indexer'
import { waitFor, waitForIndexed } from './oracle'

const SLOW_CID = `Qm${'S'.repeat(44)}`
const GOOD_CID = `Qm${'G'.repeat(44)}`

/** Headers at once, then a space every two seconds: the document never completes in time. */
const drip: Route = (_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json' })
  const timer = setInterval(() => res.write(' '), 2_000)
  res.on('close', () => clearInterval(timer))
}
const named: Route = (req, res) => json({ name: `Token ${req.url!.split('/').pop()}` })(req, res)

let chain: TestChain
let db: TestDatabase
let shared: TestServer
let gateway: TestServer
let indexer: RunningIndexer | undefined

beforeAll(async () => {
  shared = await startServer({ '/slow/*': drip, '/fast/*': named }, '127.0.0.7')
  gateway = await startServer({ [`/ipfs/${SLOW_CID}/*`]: drip, [`/ipfs/${GOOD_CID}/*`]: named }, '127.0.0.8')
  ;[chain, db] = await Promise.all([startTestChain(), createTestDatabase()])
}, 120_000)

afterAll(async () => {
  await indexer?.stop()
  await chain?.stop()
  await db?.drop()
  for (const s of [shared, gateway]) await s?.close()
})

async function count(collection: Address, status: string, fromId = 0n): Promise<number> {
  const { rows } = await db.pool.query(
    `SELECT count(*)::int AS n FROM tokens
      WHERE collection_address = $1 AND metadata_status = $2 AND token_id >= $3`,
    [collection, status, fromId.toString()],
  )
  return rows[0].n
}

/** Mints `n` tokens of each collection and returns how long until all of them are ok. */
async function timeToOk(collections: Address[], firstId: bigint, n = 10): Promise<number> {
  const [alice] = chain.accounts
  const minted = Date.now()
  for (const c of collections) await chain.call(c, 'TestNFT', 'mintBatch', [alice, firstId, BigInt(n)])
  await waitFor(
    async () => {
      const done = await Promise.all(collections.map((c) => count(c, 'ok', firstId)))
      return done.every((d) => d === n)
    },
    30_000,
    'the well-behaved tokens to be ok',
  )
  return Date.now() - minted
}

describe('metadata queue: a slow collection on a shared host', () => {
  it('keeps the well-behaved collections of the same host and gateway on time', async () => {
    const [alice] = chain.accounts
    const deploy = async (name: string, base: string) =>
      (await chain.deploy('TestNFT', [name, name.toUpperCase(), base])).address
    const goodHost = await deploy('Good', `${shared.origin}/fast/`)
    const goodCid = await deploy('Pinned', `ipfs://${GOOD_CID}/`)
    indexer = startIndexer(
      testConfig({
        DATABASE_URL: db.url,
        RPC_URL: chain.anvil.rpcUrl,
        IPFS_GATEWAY: `${gateway.origin}/ipfs/`,
        FETCH_ALLOW_HOSTS: new URL(shared.origin).host,
      }),
      db.pool,
      {
        metadata: {
          timeoutMs: 3_000,
          maxAttempts: 3,
          retryBaseMs: 500,
          breakerCooldownMs: 5_000,
          reportMs: 500,
        },
      },
    )
    await waitForIndexed(db.pool, chain.clients)
    const normal = await timeToOk([goodHost, goodCid], 1n)

    const slowHost = await deploy('Slow', `${shared.origin}/slow/`)
    const slowCid = await deploy('Unpinned', `ipfs://${SLOW_CID}/`)
    for (const c of [slowHost, slowCid]) await chain.call(c, 'TestNFT', 'mintBatch', [alice, 1n, 40n])
    // Enough time-outs on each to open a breaker (5 in a row).
    await waitFor(
      async () => (await count(slowHost, 'timeout')) >= 5 && (await count(slowCid, 'timeout')) >= 5,
      60_000,
      'the slow collections to time out',
    )

    // Through the slow collections' back-offs and their half-open probes (5 s, then 10 s).
    const during: number[] = []
    for (let round = 0; round < 4; round++) {
      during.push(await timeToOk([goodHost, goodCid], BigInt(100 + round * 100)))
      await new Promise((r) => setTimeout(r, 2_000))
    }
    expect(Math.max(...during)).toBeLessThan(Math.max(2 * normal, 1_500))

    // The report names the slow collections on their hosts, not the hosts.
    const report = await waitFor(
      async () => {
        const { rows } = await db.pool.query('SELECT metadata_queue FROM indexer_state')
        const q = rows[0]?.metadata_queue
        return q?.backed_off_collections?.length === 2 ? q : undefined
      },
      30_000,
      'the slow collections to show as backed off',
    )
    expect(report.backed_off_hosts).toEqual([])
    const collections = report.backed_off_collections.map((c: { host: string; collection: string }) => [
      c.host,
      c.collection,
    ])
    expect(collections).toEqual(
      expect.arrayContaining([
        [new URL(shared.origin).host, slowHost.toLowerCase()],
        ['ipfs-gateway-1', slowCid.toLowerCase()],
      ]),
    )
    console.log(`shared host: normal ${normal} ms, next to slow collections ${during.join(', ')} ms`)
  }, 240_000)
})
