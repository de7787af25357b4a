import { readFileSync } from 'node:fs'
import pino from 'pino'
import type { Address } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { mediaPath } from '@/db/media-path'
import { MEDIA_JOINS } from '@/db/queries/media'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import { MULTICALL3_ADDRESS } from '../metadata/token-uri'
import { startTestChain, type TestChain } from './chain'
import { json, PNG_1x1, startServer, type TestServer } from './http-server'
import { startIndexer, testConfig } from './indexer'
import { waitFor, waitForIndexed } from './oracle'

let chain: TestChain
let db: TestDatabase
let allowed: TestServer
let privateServer: TestServer
/** The first IPFS gateway: always failing, so the second one serves. */
let brokenGateway: TestServer
let nft: Address
let hostile: Address
let nftDeploy: { block: bigint; txHash: string }
const svg = '<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>'
let flakyHits = 0

/** Token id of HostileURIs -> [tokenURI, expected metadata_status]. */
const cases = (a: string, p: string): Record<number, [string | null, string]> => ({
  1: [null, 'uri_reverted'],
  2: [null, 'invalid_uri'],
  3: [null, 'too_large'],
  4: [`${a}/redirect-private`, 'blocked_address'],
  5: [`${p}/meta/5`, 'blocked_address'],
  6: [`${a}/meta/6`, 'ok'],
  7: [
    `data:application/json;base64,${Buffer.from(JSON.stringify({ name: 'Inline', image: `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}` })).toString('base64')}`,
    'ok',
  ],
  8: ['data:application/json,{"name":"Plain %26 simple"}', 'ok'],
  9: [`${a}/bad-json`, 'invalid_json'],
  10: [`${a}/big`, 'too_large'],
  11: ['ftp://example.com/1.json', 'invalid_uri'],
  12: [`${a}/image-as-metadata`, 'unsupported_type'],
  13: [`${a}/slow`, 'timeout'],
  14: [`${a}/500`, 'http_error'],
  15: ['ipfs://QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG/6', 'ok'],
  16: ['http://169.254.169.254/latest/meta-data/', 'blocked_address'],
  17: [`http://[::1]:${new URL(a).port}/meta/6`, 'blocked_address'],
  18: [`${a}/flaky`, 'ok'],
  19: [`${a}/raw-svg`, 'ok'],
})

beforeAll(async () => {
  privateServer = await startServer({
    '/meta/*': json({ name: 'secret' }),
    '/secret': json({ name: 'secret' }),
  })
  brokenGateway = await startServer({ '/ipfs/*': (_req, res) => res.writeHead(502).end('bad gateway') })
  allowed = await startServer({
    '/meta/*': (req, res) => {
      const id = req.url!.split('/').pop()
      json({ name: `Token ${id}`, image: `${allowed.origin}/img/${id}.png` })(req, res)
    },
    '/ipfs/*': (req, res) => json({ name: 'From IPFS', image: `${allowed.origin}/img/ipfs.png` })(req, res),
    '/img/*': (_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end(PNG_1x1),
    '/contract': json({
      name: 'Contract level',
      description: 'A test collection',
      image: 'ipfs://QmContractImage',
    }),
    '/redirect-private': (_req, res) =>
      res.writeHead(302, { location: `${privateServer.origin}/secret` }).end(),
    '/bad-json': (_req, res) => res.writeHead(200).end('{"name": nope'),
    '/big': (_req, res) => res.writeHead(200).end(`{"pad":"${'x'.repeat(2 * 1024 * 1024)}"}`),
    '/image-as-metadata': (_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(PNG_1x1),
    '/slow': () => undefined,
    '/500': (_req, res) => res.writeHead(500).end('down'),
    '/raw-svg': json({
      name: 'Raw SVG',
      image: `data:image/svg+xml;utf8,${svg.replace('/>', '> <text>"a" é</text></svg>')}`,
    }),
    '/flaky': (req, res) =>
      ++flakyHits < 2 ? res.writeHead(503).end() : json({ name: 'Eventually' })(req, res),
  })
  ;[chain, db] = await Promise.all([startTestChain(), createTestDatabase()])
  const [alice] = chain.accounts
  const deployed = await chain.deploy('TestNFT', ['Metadata Apes', 'MAPE', `${allowed.origin}/meta/`])
  nft = deployed.address
  nftDeploy = deployed
  await chain.call(nft, 'TestNFT', 'setContractURI', [`${allowed.origin}/contract`])
  await chain.call(nft, 'TestNFT', 'mint', [alice, 20n])
  hostile = (await chain.deploy('HostileURIs')).address
  for (const [id, [uri]] of Object.entries(cases(allowed.origin, privateServer.origin))) {
    await chain.call(hostile, 'HostileURIs', 'mint', [alice, BigInt(id)])
    if (uri) await chain.call(hostile, 'HostileURIs', 'setURI', [BigInt(id), uri])
  }
}, 120_000)

afterAll(async () => {
  await chain?.stop()
  await db?.drop()
  await allowed?.close()
  await privateServer?.close()
  await brokenGateway?.close()
})

/** The indexer's info-level log lines, parsed (the level an operator runs at). */
function captureInfoLogs() {
  const lines: Array<Record<string, unknown>> = []
  const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) })
  return { logger, lines }
}

async function runUntilSettled(logger?: pino.Logger) {
  const config = testConfig({
    DATABASE_URL: db.url,
    RPC_URL: chain.anvil.rpcUrl,
    FETCH_ALLOW_HOSTS: `127.0.0.1:${allowed.port}`,
    IPFS_GATEWAY: `${brokenGateway.origin}/ipfs/,${allowed.origin}/ipfs/`,
  })
  const indexer = startIndexer(config, db.pool, {
    metadata: { timeoutMs: 1_000, maxAttempts: 3, retryBaseMs: 50 },
    ...(logger ? { logger } : {}),
  })
  try {
    await waitForIndexed(db.pool, chain.clients)
    await waitFor(
      async () => {
        const { rows } = await db.pool.query(
          `SELECT (SELECT count(*) FROM tokens WHERE metadata_next_attempt_at IS NOT NULL)::int
                + (SELECT count(*) FROM collections WHERE metadata_status = 'pending')::int AS open`,
        )
        return rows[0].open === 0
      },
      45_000,
      'metadata queue to settle',
    )
  } finally {
    await indexer.stop()
  }
  return config
}

const statuses = async () => {
  const { rows } = await db.pool.query(
    'SELECT token_id::int AS id, metadata_status FROM tokens WHERE collection_address = $1 ORDER BY token_id',
    [hostile],
  )
  return Object.fromEntries(rows.map((r) => [r.id, r.metadata_status]))
}

describe('metadata queue', () => {
  it('records a named outcome per token and stores media content-addressed', async () => {
    const logs = captureInfoLogs()
    const config = await runUntilSettled(logs.logger)
    const expected = Object.fromEntries(
      Object.entries(cases(allowed.origin, privateServer.origin)).map(([id, [, status]]) => [
        Number(id),
        status,
      ]),
    )
    expect(await statuses()).toEqual(expected)
    expect(privateServer.hits).toEqual([])
    // IPFS through the second gateway after the first failed.
    expect(brokenGateway.hits.length).toBeGreaterThan(0)
    // IPFS paths and CIDs are kept as written, never as a gateway URL.
    const ipfs = await db.pool.query(
      'SELECT metadata_uri FROM tokens WHERE collection_address = $1 AND token_id = 15',
      [hostile],
    )
    expect(ipfs.rows[0].metadata_uri).toBe(cases(allowed.origin, privateServer.origin)[15]![0])

    // A data: image with raw spaces, quotes and '<' is stored as a valid URI for the same bytes.
    const raw = await db.pool.query(
      `SELECT t.image_url, m.media_type FROM tokens t LEFT JOIN media_objects m ON m.sha256 = t.media_sha256
        WHERE collection_address = $1 AND token_id = 19`,
      [hostile],
    )
    expect(raw.rows[0].media_type).toBe('image/svg+xml')
    expect(raw.rows[0].image_url).toMatch(/^data:image\/svg\+xml;utf8,%3Csvg%20/)
    expect(raw.rows[0].image_url).not.toMatch(/[\s"<>]/)
    expect(decodeURIComponent(raw.rows[0].image_url.slice(raw.rows[0].image_url.indexOf(',') + 1))).toContain(
      '<text>"a" é</text>',
    )
    // The API finds those bytes by the location it serves (its media_url): the valid URI.
    const served = await db.pool.query(
      `SELECT mo.media_type FROM tokens t ${MEDIA_JOINS} WHERE t.collection_address = $1 AND t.token_id = 19`,
      [hostile],
    )
    expect(served.rows).toEqual([{ media_type: 'image/svg+xml' }])

    // At info level: one summary line per batch with failures, counting outcomes; never a line per token.
    const summaries = logs.lines.filter((l) => String(l.msg).startsWith('token metadata:'))
    expect(summaries.length).toBeGreaterThan(0)
    expect(logs.lines.filter((l) => l.tokenId !== undefined)).toEqual([])
    // An outcome that reads as a fault but is expected says what it is.
    expect(summaries.map((l) => String(l.msg))).toContainEqual(
      expect.stringMatching(/uri_reverted \d+: tokenURI reverted, as it does for burned tokens/),
    )
    const reported = new Set(summaries.flatMap((l) => Object.keys(l.outcomes as object)))
    for (const status of Object.values(expected)) expect(reported).toContain(status)
    for (const l of summaries) {
      const counts = Object.values(l.outcomes as Record<string, number>)
      expect(counts.reduce((a, b) => a + b, 0)).toBe(l.tokens)
    }

    const { rows } = await db.pool.query(
      `SELECT t.token_id::int AS id, t.name, t.image_url, m.media_type, m.sha256 FROM tokens t
         LEFT JOIN media_objects m ON m.sha256 = t.media_sha256 WHERE collection_address = $1 AND token_id IN (6, 7, 8)
        ORDER BY token_id`,
      [hostile],
    )
    expect(rows.map(({ sha256: _, ...r }) => r)).toEqual([
      { id: 6, name: 'Token 6', image_url: `${allowed.origin}/img/6.png`, media_type: 'image/png' },
      {
        id: 7,
        name: 'Inline',
        image_url: expect.stringMatching(/^data:image\/svg\+xml;base64,/),
        media_type: 'image/svg+xml',
      },
      { id: 8, name: 'Plain & simple', image_url: null, media_type: null },
    ])
    expect(readFileSync(mediaPath(config.MEDIA_DIR, rows[0].sha256))).toEqual(PNG_1x1)
    const sources = await db.pool.query('SELECT url, media_sha256 FROM media_sources WHERE url = $1', [
      `${allowed.origin}/img/6.png`,
    ])
    expect(sources.rows).toEqual([{ url: `${allowed.origin}/img/6.png`, media_sha256: rows[0].sha256 }])

    const collections = await db.pool.query(
      `SELECT address, name, symbol, listed, image_url, description, deploy_block::int, creator_address, deploy_tx_hash
         FROM collections ORDER BY id`,
    )
    expect(collections.rows).toEqual([
      {
        address: nft,
        name: 'Metadata Apes',
        symbol: 'MAPE',
        listed: true,
        image_url: 'ipfs://QmContractImage',
        description: 'A test collection',
        deploy_block: Number(nftDeploy.block),
        creator_address: chain.accounts[0]!.toLowerCase(),
        deploy_tx_hash: nftDeploy.txHash,
      },
      expect.objectContaining({
        address: hostile,
        name: 'Hostile',
        symbol: 'HST',
        image_url: `${allowed.origin}/img/6.png`,
      }),
    ])
  })

  it('refetches on ERC-4906 MetadataUpdate', async () => {
    await chain.call(nft, 'TestNFT', 'setTokenURI', [20n, `${allowed.origin}/meta/21`])
    await runUntilSettled()
    const { rows } = await db.pool.query(
      'SELECT name, metadata_uri FROM tokens WHERE collection_address = $1',
      [nft],
    )
    expect(rows).toEqual([{ name: 'Token 21', metadata_uri: `${allowed.origin}/meta/21` }])
  })

  it('reads tokenURI through Multicall3 when it is deployed, with the same outcomes', async () => {
    const multicall = await chain.deploy('Multicall3')
    const code = await chain.clients.public.getCode({ address: multicall.address })
    await chain.clients.test.setCode({ address: MULTICALL3_ADDRESS, bytecode: code! })
    await db.pool.query(
      "UPDATE tokens SET metadata_status = 'pending', metadata_attempts = 0, metadata_next_attempt_at = now()",
    )
    flakyHits = 0
    await runUntilSettled()
    expect(await statuses()).toEqual(
      Object.fromEntries(
        Object.entries(cases(allowed.origin, privateServer.origin)).map(([id, [, status]]) => [
          Number(id),
          status,
        ]),
      ),
    )
  })
})
