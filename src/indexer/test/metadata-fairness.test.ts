/**
 * Fairness of the metadata queue against hostile hosts, with real local HTTP
 * servers on distinct loopback addresses: a slow host (a byte every two
 * seconds) behind a large ERC-2309 range and a 40-token mint, a dead host, a
 * host answering 429 with Retry-After and a huge document, next to a
 * well-behaved collection. The well-behaved tokens are never starved; the others get their named outcome; a restart loses no queue state.
 */
import { createServer, type Server } from 'node:net'
import type { Address } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import { startTestChain, type TestChain } from './chain'
import { json, startServer, type TestServer } from './http-server'
import { type RunningIndexer, startIndexer, testConfig } from './indexer'
import { waitFor, waitForIndexed } from './oracle'

let chain: TestChain
let db: TestDatabase
let fast: TestServer
let slow: TestServer
let limited: TestServer
let huge: TestServer
let dead: { origin: string; port: number }
let limitedSince = 0
const limitedHits: number[] = []

const RANGE = 50_000
/**
 * Starved, a well-behaved token would wait at least one fetch timeout of the bad hosts' fetches
 * holding every slot; served fairly it waits far less. The bound below is half a timeout: a
 * starvation check that a loaded machine cannot trip. How close to its normal time it stays is a
 * speed figure, measured by `npm run bench:metadata` (the fairness ratio, bench/RESULTS.md).
 */
const FETCH_TIMEOUT_MS = 8_000
const NOT_STARVED_MS = FETCH_TIMEOUT_MS / 2

beforeAll(async () => {
  fast = await startServer({
    '/meta/*': (req, res) => json({ name: `Fast ${req.url!.split('/').pop()}` })(req, res),
  })
  slow = await startServer(
    {
      '/meta/*': (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' })
        const timer = setInterval(() => res.write(' '), 2_000)
        res.on('close', () => clearInterval(timer))
      },
    },
    '127.0.0.2',
  )
  limited = await startServer(
    {
      '/meta/*': (req, res) => {
        limitedHits.push(Date.now())
        limitedSince ||= Date.now()
        if (Date.now() - limitedSince < 3_000) res.writeHead(429, { 'retry-after': '3' }).end()
        else json({ name: 'Limited' })(req, res)
      },
    },
    '127.0.0.4',
  )
  huge = await startServer(
    {
      '/meta/*': (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' })
        const chunk = Buffer.alloc(64 * 1024, 0x20)
        const pump = () => {
          while (res.write(chunk)) if (res.writableLength > 1 << 20) break
        }
        res.on('drain', pump)
        pump()
      },
    },
    '127.0.0.5',
  )
  // A port nothing listens on: every connection is refused.
  const probe: Server = createServer()
  await new Promise<void>((r) => probe.listen(0, '127.0.0.3', r))
  const port = (probe.address() as { port: number }).port
  await new Promise<void>((r) => probe.close(() => r()))
  dead = { origin: `http://127.0.0.3:${port}`, port }
  ;[chain, db] = await Promise.all([startTestChain(), createTestDatabase()])
}, 120_000)

afterAll(async () => {
  await indexer?.stop()
  await chain?.stop()
  await db?.drop()
  for (const s of [fast, slow, limited, huge]) await s?.close()
})

let indexer: RunningIndexer | undefined
const config = () =>
  testConfig({
    DATABASE_URL: db.url,
    RPC_URL: chain.anvil.rpcUrl,
    FETCH_ALLOW_HOSTS: [fast, slow, limited, huge, dead].map((s) => `${new URL(s.origin).host}`).join(','),
  })
const start = () => {
  indexer = startIndexer(config(), db.pool, {
    metadata: {
      timeoutMs: FETCH_TIMEOUT_MS,
      maxAttempts: 3,
      retryBaseMs: 500,
      breakerCooldownMs: 5_000,
      reportMs: 500,
    },
  })
}

async function statusCounts(collection: Address) {
  const { rows } = await db.pool.query(
    `SELECT metadata_status AS s, count(*)::int AS n FROM tokens WHERE collection_address = $1 GROUP BY 1`,
    [collection],
  )
  return Object.fromEntries(rows.map((r) => [r.s, r.n])) as Record<string, number>
}

/** Mints `count` tokens of a well-behaved collection and returns how long until all are ok. */
async function timeToOk(count: number, firstId: bigint, nft: Address): Promise<number> {
  const [alice] = chain.accounts
  const minted = Date.now()
  await chain.call(nft, 'TestNFT', 'mintBatch', [alice, firstId, BigInt(count)])
  await waitFor(
    async () => {
      const { rows } = await db.pool.query(
        `SELECT count(*)::int AS n FROM tokens WHERE collection_address = $1 AND token_id >= $2
            AND metadata_status = 'ok'`,
        [nft, firstId.toString()],
      )
      return rows[0].n === count
    },
    30_000,
    'well-behaved tokens to be ok',
  )
  return Date.now() - minted
}

describe('metadata queue: fairness between hosts', () => {
  it('keeps a well-behaved collection on time next to slow, dead, rate-limited and huge hosts', async () => {
    const [alice] = chain.accounts
    const good = (await chain.deploy('TestNFT', ['Good', 'GOOD', `${fast.origin}/meta/`])).address
    start()
    await waitForIndexed(db.pool, chain.clients)
    // The normal time, with no bad host around.
    const normal = await timeToOk(10, 1n, good)

    const range = (await chain.deploy('TestConsecutiveURI', [alice, RANGE, `${slow.origin}/meta/`])).address
    const slowNft = (await chain.deploy('TestNFT', ['Slow', 'SLOW', `${slow.origin}/meta/`])).address
    const deadNft = (await chain.deploy('TestNFT', ['Dead', 'DEAD', `${dead.origin}/meta/`])).address
    const limitedNft = (await chain.deploy('TestNFT', ['Limited', 'LIM', `${limited.origin}/meta/`])).address
    const hugeNft = (await chain.deploy('TestNFT', ['Huge', 'HUGE', `${huge.origin}/meta/`])).address
    await chain.call(slowNft, 'TestNFT', 'mintBatch', [alice, 1n, 40n])
    await chain.call(deadNft, 'TestNFT', 'mintBatch', [alice, 1n, 20n])
    await chain.call(limitedNft, 'TestNFT', 'mintBatch', [alice, 1n, 10n])
    await chain.call(hugeNft, 'TestNFT', 'mintBatch', [alice, 1n, 3n])
    await waitForIndexed(db.pool, chain.clients)

    // While the bad hosts hold their share, and again through their retry waves.
    const during: number[] = []
    for (let round = 0; round < 4; round++) {
      during.push(await timeToOk(10, BigInt(100 + round * 100), good))
      await new Promise((r) => setTimeout(r, 2_000))
    }
    expect(Math.max(...during)).toBeLessThan(NOT_STARVED_MS)

    // What the status endpoint shows (status.test.ts maps it): the backed-off slow host and
    // the backlog by outcome.
    const slowHost = new URL(slow.origin).host
    const report = await waitFor(
      async () => {
        const { rows } = await db.pool.query('SELECT metadata_queue FROM indexer_state')
        const q = rows[0]?.metadata_queue
        return q?.backed_off_hosts?.some((h: { host: string }) => h.host === slowHost) ? q : undefined
      },
      // The slow host's first fetches wait for the tokenURI reads of the 50,000-token range,
      // which take far longer on a loaded machine.
      90_000,
      'the slow host to show as backed off',
    )
    expect(report.backed_off_hosts).toContainEqual({
      host: slowHost,
      state: expect.stringMatching(/^(open|half_open)$/),
      until: expect.any(String),
      outcome: 'timeout',
    })
    expect(report.backlog.timeout).toBeGreaterThan(0)

    // Restart in the middle: nothing is lost, and shutdown is not recorded as a failure.
    await indexer!.stop()
    const snapshot = async () =>
      new Map(
        (
          await db.pool.query(
            'SELECT id::text, metadata_status AS s, metadata_attempts AS a, metadata_next_attempt_at AS at FROM tokens',
          )
        ).rows.map((r) => [r.id, r]),
      )
    const beforeRestart = await snapshot()
    expect(await snapshot()).toEqual(beforeRestart)
    start()
    during.push(await timeToOk(10, 1_000n, good))
    expect(during.at(-1)).toBeLessThan(NOT_STARVED_MS)

    // Every bad token gets its named outcome; the 429 host was waited for, then served.
    await waitFor(
      async () => {
        const [r, s, d, l, h] = await Promise.all(
          [range, slowNft, deadNft, limitedNft, hugeNft].map((c) => statusCounts(c)),
        )
        return (
          r!.timeout === RANGE &&
          s!.timeout === 40 &&
          d!.http_error === 20 &&
          l!.ok === 10 &&
          h!.too_large === 3
        )
      },
      60_000,
      'bad hosts to reach their outcomes',
    )
    // Queue state carried over the restart: no token went back (ok stays ok, attempts never drop).
    const after = await snapshot()
    for (const [id, was] of beforeRestart) {
      const now = after.get(id)!
      if (was.s === 'ok') expect(now.s).toBe('ok')
      expect(now.a).toBeGreaterThanOrEqual(was.a)
    }
    const goodAttempts = await db.pool.query(
      `SELECT max(metadata_attempts)::int AS a, bool_and(metadata_status = 'ok') AS ok FROM tokens
        WHERE collection_address = $1`,
      [good],
    )
    expect(goodAttempts.rows[0]).toEqual({ a: 1, ok: true })
    const slowAttempts = await db.pool.query(
      'SELECT max(metadata_attempts)::int AS a FROM tokens WHERE collection_address = ANY($1)',
      [[range, slowNft]],
    )
    expect(slowAttempts.rows[0].a).toBeLessThanOrEqual(3)
    // 429 + Retry-After: the host is backed off as a whole, not asked once per token.
    const early = limitedHits.filter((t) => t - limitedSince < 3_000).length
    expect(early).toBeLessThanOrEqual(4)
    // The slow host was never asked for more than its share of its 50,040 tokens.
    expect(slow.hits.length).toBeLessThan(100)
    // Visible in the status: the backlog by outcome and the backed-off hosts.
    const { rows } = await db.pool.query('SELECT metadata_queue FROM indexer_state')
    expect(rows[0].metadata_queue).toMatchObject({ backlog: expect.any(Object) })
    console.log(`fairness: normal ${normal} ms, during bad hosts ${during.join(', ')} ms`)
  }, 240_000)
})
