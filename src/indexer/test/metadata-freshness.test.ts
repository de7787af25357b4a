/**
 * Metadata that stays fresh (docs/metadata.md, "Freshness"), against anvil,
 * PostgreSQL and local metadata hosts:
 * - a collection whose name() read fails on an RPC error while it appears is
 *   read again with backoff, and is listed within a minute of recovery;
 * - a token whose host failed is re-checked on its schedule, outside the
 *   backlog, keeping its outcome until the re-check writes a new one;
 * - ERC-7572 ContractURIUpdated reads the collection again, also when it
 *   comes while the collection's read is in flight.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Address } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { selectListedCollections } from '@/db/queries/collections'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import { countMetadataBacklog } from '../store/metadata-queue'
import { startTestChain, type TestChain } from './chain'
import { json, startServer, type TestServer } from './http-server'
import { type RunningIndexer, startIndexer, testConfig } from './indexer'
import { waitFor } from './oracle'

/** name()'s selector: the RPC fails every request that asks for it while `namesDown`. */
const NAME_SELECTOR = '06fdde03'

let chain: TestChain
let db: TestDatabase
let host: TestServer
let rpcProxy: http.Server
let rpcUrl: string
let namesDown = false
let refusedNameReads = 0
let recovered = false
let contractDoc = { description: 'First words' }
let indexer: RunningIndexer | undefined
let config: ReturnType<typeof testConfig>
let flakyContractHits = 0
/** Requests for /contract-held wait here until released, and are then answered with heldDoc. */
const held: Array<() => void> = []
let heldDoc = { description: 'Old words' }

beforeAll(async () => {
  host = await startServer({
    // 404 until the host "recovers" (a reveal, a host brought back).
    '/late/*': (req, res) =>
      recovered ? json({ name: `Late ${req.url!.split('/').pop()}` })(req, res) : res.writeHead(404).end(),
    '/contract': (req, res) => json(contractDoc)(req, res),
    // 503 (a transient fault) for its first three requests.
    '/contract-flaky': (req, res) =>
      ++flakyContractHits <= 3
        ? res.writeHead(503).end()
        : json({ description: 'Eventually', image: `${host.origin}/img.png` })(req, res),
    '/contract-held': (req, res) => {
      const doc = heldDoc
      held.push(() => json(doc)(req, res))
    },
  })
  ;[chain, db] = await Promise.all([startTestChain(), createTestDatabase()])
  // The node's JSON-RPC endpoint, failing (HTTP 503, as a load balancer in an outage) the requests
  // that read a name while namesDown: the sync goes on and finds the collection, its reads fail.
  rpcProxy = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c) => chunks.push(c))
    req.on('end', async () => {
      const body = Buffer.concat(chunks).toString('utf8')
      if (namesDown && body.includes(NAME_SELECTOR)) {
        refusedNameReads++
        res.writeHead(503).end('service unavailable')
        return
      }
      try {
        const upstream = await fetch(chain.anvil.rpcUrl, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
        })
        res.writeHead(upstream.status, { 'content-type': 'application/json' }).end(await upstream.text())
      } catch {
        res.destroy()
      }
    })
  })
  await new Promise<void>((resolve) => rpcProxy.listen(0, '127.0.0.1', resolve))
  rpcUrl = `http://127.0.0.1:${(rpcProxy.address() as AddressInfo).port}`
  config = testConfig({ DATABASE_URL: db.url, RPC_URL: rpcUrl, FETCH_ALLOW_HOSTS: `127.0.0.1:${host.port}` })
  indexer = startIndexer(
    config,
    db.pool,
    // Re-checks after 2 s, 4 s, then 8 s: the schedule of docs/metadata.md, shortened.
    {
      metadata: { timeoutMs: 1_000, maxAttempts: 2, retryBaseMs: 50, recheckDelaysMs: [2_000, 4_000, 8_000] },
    },
  )
}, 120_000)

afterAll(async () => {
  await indexer?.stop()
  await chain?.stop()
  await db?.drop()
  await host?.close()
  await new Promise((resolve) => rpcProxy?.close(resolve))
})

const collectionRow = async (address: Address) =>
  (await db.pool.query('SELECT * FROM collections WHERE address = $1', [address])).rows[0]

describe('metadata freshness', () => {
  it('reads a collection again after an RPC outage and lists it within a minute of recovery', async () => {
    namesDown = true
    const { address } = await chain.deploy('TestNFT', ['Outage Apes', 'OAPE', `${host.origin}/late/`])
    await chain.call(address, 'TestNFT', 'mint', [chain.accounts[0]!, 1n])
    // The RPC client's own retries run out (about 15 s), then the read counts as failed.
    await waitFor(
      async () => (await collectionRow(address))?.metadata_status === 'failed',
      60_000,
      'the collection read to fail',
    )
    expect(refusedNameReads).toBeGreaterThan(0)
    expect(await collectionRow(address)).toMatchObject({ listed: false, name: '' })

    namesDown = false
    const recoveredAt = Date.now()
    await waitFor(
      async () =>
        (await selectListedCollections({ pool: db.pool }, { rows: 10 })).some((c) => c.address === address),
      75_000,
      'the collection to be listed',
    )
    const seconds = (Date.now() - recoveredAt) / 1000
    console.log(`collection listed ${seconds.toFixed(1)} s after the RPC recovered`)
    expect(seconds).toBeLessThan(61)
    expect(await collectionRow(address)).toMatchObject({
      name: 'Outage Apes',
      symbol: 'OAPE',
      listed: true,
      metadata_status: 'ok',
      metadata_attempts: 0,
    })
  }, 180_000)

  it('re-checks a failed token on its schedule, outside the backlog, until it is ok', async () => {
    const { address } = await chain.deploy('TestNFT', ['Late Reveal', 'LATE', `${host.origin}/late/`])
    await chain.call(address, 'TestNFT', 'mint', [chain.accounts[0]!, 7n])
    const token = async () =>
      (
        await db.pool.query(
          `SELECT metadata_status, name, metadata_attempts, metadata_next_attempt_at, metadata_recheck_at
             FROM tokens WHERE collection_address = $1 AND token_id = 7`,
          [address],
        )
      ).rows[0]
    // Settled on http_error (a 404 is no transient fault): no retry queued, a re-check is.
    await waitFor(async () => (await token())?.metadata_status === 'http_error', 30_000, 'http_error')
    const settled = await token()
    expect(settled.metadata_next_attempt_at).toBeNull()
    expect(settled.metadata_recheck_at).not.toBeNull()
    // Settled tokens are not backlog.
    expect((await countMetadataBacklog(db.pool)).http_error).toBe(0)
    // Re-checked (the host still answers 404): the outcome stays, attempts grow, the wait grows.
    await waitFor(async () => (await token()).metadata_attempts >= 3, 30_000, 're-checks')
    const again = await token()
    expect(again.metadata_status).toBe('http_error')
    expect(again.metadata_recheck_at).not.toBeNull()
    const lateHits = host.hits.filter((h) => h === '/late/7').length
    expect(lateHits).toBeGreaterThanOrEqual(3)

    recovered = true
    const recoveredAt = Date.now()
    await waitFor(async () => (await token()).metadata_status === 'ok', 30_000, 'the token to be ok')
    console.log(`token ok ${((Date.now() - recoveredAt) / 1000).toFixed(1)} s after its host recovered`)
    expect(await token()).toMatchObject({
      metadata_status: 'ok',
      name: 'Late 7',
      metadata_next_attempt_at: null,
      metadata_recheck_at: null,
    })
  }, 90_000)

  it('reads a collection again on ERC-7572 ContractURIUpdated', async () => {
    const { address } = await chain.deploy('TestNFT', ['Contract Words', 'CW', `${host.origin}/late/`])
    await chain.call(address, 'TestNFT', 'setContractURI', [`${host.origin}/contract`])
    await chain.call(address, 'TestNFT', 'mint', [chain.accounts[0]!, 1n])
    await waitFor(
      async () => (await collectionRow(address))?.description === 'First words',
      30_000,
      'the first contractURI document',
    )
    contractDoc = { description: 'Second words' }
    // Without an event nothing is read again: a collection is read once.
    await chain.call(address, 'TestNFT', 'setContractURI', [`${host.origin}/contract?v=1`])
    await new Promise((r) => setTimeout(r, 2_000))
    expect((await collectionRow(address)).description).toBe('First words')
    // ContractURIUpdated(): read again, with the new document.
    await chain.call(address, 'TestNFT', 'updateContractURI', [`${host.origin}/contract?v=2`])
    await waitFor(
      async () => (await collectionRow(address))?.description === 'Second words',
      30_000,
      'the collection to be read again',
    )
    expect(await collectionRow(address)).toMatchObject({ name: 'Contract Words', metadata_status: 'ok' })
  }, 90_000)

  it('reads a collection again on a ContractURIUpdated that comes while its read is in flight', async () => {
    // A document fetch that may wait 20 s: the read is still in flight when the event is indexed.
    await indexer?.stop()
    indexer = startIndexer(config, db.pool, { metadata: { timeoutMs: 20_000 } })
    const { address } = await chain.deploy('TestNFT', ['Raced Words', 'RW', `${host.origin}/late/`])
    await chain.call(address, 'TestNFT', 'setContractURI', [`${host.origin}/contract-held`])
    await chain.call(address, 'TestNFT', 'mint', [chain.accounts[0]!, 1n])
    // The first read is in flight: it asked for the document, as it stood then.
    await waitFor(async () => held.length === 1, 30_000, 'the first read to ask for the document')
    const release = held.shift()!
    heldDoc = { description: 'New words' }
    const updated = await chain.call(address, 'TestNFT', 'updateContractURI', [
      `${host.origin}/contract-held`,
    ])
    await waitFor(
      async () =>
        BigInt(
          (await db.pool.query('SELECT last_indexed_block FROM indexer_state')).rows[0].last_indexed_block,
        ) >= updated,
      30_000,
      'the ContractURIUpdated block to be indexed',
    )
    // The read that began before the event ends now: it must not settle the request the event made.
    release()
    // Read again: its document asked for. The first read's result is stored meanwhile (named, listed),
    // the collection still due.
    await waitFor(async () => held.length === 1, 30_000, 'the collection to be read again')
    expect(await collectionRow(address)).toMatchObject({
      name: 'Raced Words',
      listed: true,
      description: 'Old words',
      metadata_status: 'pending',
    })
    held.shift()!()
    await waitFor(
      async () => (await collectionRow(address))?.description === 'New words',
      15_000,
      'the second read to be stored',
    )
    expect(await collectionRow(address)).toMatchObject({ name: 'Raced Words', metadata_status: 'ok' })
    expect(held).toEqual([])
  }, 90_000)

  it('reads a contractURI document again after its host failed, listing the collection meanwhile', async () => {
    // The first retry after about a second instead of a minute (collectionRetryBaseMs): an indexer of its own.
    await indexer?.stop()
    indexer = startIndexer(config, db.pool, { metadata: { timeoutMs: 1_000, collectionRetryBaseMs: 1_000 } })
    const { address } = await chain.deploy('TestNFT', ['Flaky Words', 'FW', `${host.origin}/late/`])
    await chain.call(address, 'TestNFT', 'setContractURI', [`${host.origin}/contract-flaky`])
    await chain.call(address, 'TestNFT', 'mint', [chain.accounts[0]!, 1n])
    // Name and symbol answered: listed at once, the document to be read again.
    await waitFor(async () => (await collectionRow(address))?.listed, 30_000, 'the collection to be listed')
    expect(await collectionRow(address)).toMatchObject({
      name: 'Flaky Words',
      metadata_status: 'failed',
      description: null,
    })
    await waitFor(
      async () => (await collectionRow(address))?.description === 'Eventually',
      30_000,
      'the contractURI document',
    )
    expect(await collectionRow(address)).toMatchObject({
      metadata_status: 'ok',
      metadata_attempts: 0,
      image_url: `${host.origin}/img.png`,
      image_source: 'contract',
    })
    expect(flakyContractHits).toBe(4)
  }, 90_000)
})
