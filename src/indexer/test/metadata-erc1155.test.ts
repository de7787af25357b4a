/**
 * Metadata of ERC-1155 tokens (docs/metadata.md, "ERC-1155"): the URI is the
 * token's newest URI event (erc1155_uris), else the contract's uri(id), with
 * every {id} expanded to 64 lowercase hex digits; then the same fetcher as for
 * ERC-721. A real anvil contract answers uri(id); the tokens and URI events are
 * rows written here, as the indexer's ERC-1155 ingestion stores them.
 */
import type { Address } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import { withTransaction } from '../store/db'
import { markMetadataStale } from '../store/transfers'
import { startTestChain, type TestChain } from './chain'
import { json, PNG_1x1, startServer, type TestServer } from './http-server'
import { startIndexer, testConfig } from './indexer'
import { waitFor, waitForIndexed } from './oracle'

let chain: TestChain
let db: TestDatabase
let server: TestServer
let editions: Address

const ZERO = '0x0000000000000000000000000000000000000000'
const BIG_ID = 2n ** 160n + 3n
const hex64 = (id: bigint) => id.toString(16).padStart(64, '0')

beforeAll(async () => {
  const named =
    (prefix: string): Parameters<typeof startServer>[0][string] =>
    (req, res) => {
      const id = req
        .url!.split('?')[0]!
        .split('/')
        .pop()!
        .replace(/\.json$/, '')
      json({ name: `${prefix} ${id}`, image: `${server.origin}/img/${id}.png` })(req, res)
    }
  server = await startServer({
    '/editions/*': named('Edition'),
    '/override/*': named('Override'),
    '/stale/*': named('Stale'),
    '/img/*': (_req, res) => res.writeHead(200, { 'content-type': 'image/png' }).end(PNG_1x1),
  })
  ;[chain, db] = await Promise.all([startTestChain(), createTestDatabase()])
  editions = (await chain.deploy('TestEditions', [`${server.origin}/editions/{id}.json`])).address

  await db.pool.query(`INSERT INTO collections (address, standard, listed) VALUES ($1, 'ERC1155', true)`, [
    editions,
  ])
  // ERC-1155 tokens as the contract describes them (docs/database.md): owner the zero address.
  await db.pool.query(
    `INSERT INTO tokens (collection_address, token_id, current_owner, total_supply, holder_count)
     SELECT $1, id, $2, 5, 2 FROM unnest($3::numeric[]) AS id`,
    [editions, ZERO, ['1', '7', BIG_ID.toString()]],
  )
  // Token 7 has URI events; the newest (block 10, log 2) wins, whatever the insertion order.
  await db.pool.query(
    `INSERT INTO erc1155_uris (collection_address, token_id, block_number, log_index, transaction_hash, uri)
     VALUES ($1, 7, 10, 1, $2, $3), ($1, 7, 10, 2, $2, $4), ($1, 7, 9, 5, $2, $3)`,
    [
      editions,
      `0x${'ab'.repeat(32)}`,
      `${server.origin}/stale/{id}.json`,
      `${server.origin}/override/{id}.json`,
    ],
  )
}, 120_000)

afterAll(async () => {
  await chain?.stop()
  await db?.drop()
  await server?.close()
})

async function runUntilSettled() {
  const config = testConfig({
    DATABASE_URL: db.url,
    RPC_URL: chain.anvil.rpcUrl,
    FETCH_ALLOW_HOSTS: `127.0.0.1:${server.port}`,
  })
  const indexer = startIndexer(config, db.pool, {
    metadata: { timeoutMs: 2_000, maxAttempts: 3, retryBaseMs: 50 },
  })
  try {
    await waitForIndexed(db.pool, chain.clients)
    await waitFor(
      async () => {
        const { rows } = await db.pool.query(
          'SELECT count(*)::int AS open FROM tokens WHERE metadata_next_attempt_at IS NOT NULL',
        )
        return rows[0].open === 0
      },
      45_000,
      'metadata queue to settle',
    )
  } finally {
    await indexer.stop()
  }
}

const tokens = async () => {
  const { rows } = await db.pool.query(
    `SELECT token_id::text AS id, metadata_status, metadata_uri, name, image_url, media_sha256 IS NOT NULL AS media
       FROM tokens WHERE collection_address = $1 ORDER BY token_id`,
    [editions],
  )
  return rows
}

describe('ERC-1155 token metadata', () => {
  it("reads uri(id), or the newest URI event, with {id} expanded, and stores the documents' names", async () => {
    await runUntilSettled()
    const row = (id: bigint, path: string, prefix: string) => ({
      id: id.toString(),
      metadata_status: 'ok',
      metadata_uri: `${server.origin}/${path}/${hex64(id)}.json`,
      name: `${prefix} ${hex64(id)}`,
      image_url: `${server.origin}/img/${hex64(id)}.png`,
      media: true,
    })
    expect(await tokens()).toEqual([
      row(1n, 'editions', 'Edition'),
      row(7n, 'override', 'Override'),
      row(BIG_ID, 'editions', 'Edition'),
    ])
    // The older URI events of token 7 were never fetched, nor was uri(7).
    expect(server.hits.filter((h) => h.startsWith('/stale/') || h === `/editions/${hex64(7n)}.json`)).toEqual(
      [],
    )
  }, 90_000)

  it('fetches again when a URI event arrives (stored and queued by markMetadataStale, as ERC-4906 is)', async () => {
    // Settled tokens are not read again until marked.
    expect((await tokens())[0]).toMatchObject({ name: `Edition ${hex64(1n)}` })
    await withTransaction(db.pool, (client) =>
      markMetadataStale(client, [
        {
          collection: editions,
          fromTokenId: 1n,
          toTokenId: 1n,
          blockNumber: 20n,
          uri: {
            value: `${server.origin}/override/{id}.json?v=2`,
            logIndex: 0,
            transactionHash: `0x${'cd'.repeat(32)}`,
          },
        },
      ]),
    )
    const due = await db.pool.query(
      `SELECT token_id::text AS id FROM tokens WHERE collection_address = $1 AND metadata_next_attempt_at IS NOT NULL`,
      [editions],
    )
    expect(due.rows).toEqual([{ id: '1' }])
    await runUntilSettled()
    expect((await tokens())[0]).toMatchObject({
      metadata_status: 'ok',
      metadata_uri: `${server.origin}/override/${hex64(1n)}.json?v=2`,
      name: `Override ${hex64(1n)}`,
    })
  }, 90_000)
})
