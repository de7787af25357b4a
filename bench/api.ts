/**
 * `npm run bench:api` (after `npm run bench:seed`): every /v1 read endpoint
 * against the mainnet-scale index in `nft_bench` (BENCH_DATABASE_URL to choose
 * another, as bench:seed).
 *
 *  1. Latency, server side: requests one at a time; each server measures from
 *     the arrival of the request to the end of its response. p50/p95 for the
 *     first page and for a page 1,000 pages deep (limit 20: 19,980 rows in;
 *     the deepest page there is when the list is shorter). Traits, trait
 *     filters and sort=rarity run on the seed's 10,000-token collection with
 *     8 trait types (TRAITS); ERC-1155 on the seed's edition held by 20,000
 *     wallets (EDITION: its holders, 1,000 pages) and the wallet holding
 *     10,000 ERC-1155 ids (WHALE_1155: its holdings with standard=ERC1155).
 *  2. Throughput through the full stack (credential, rate limits, tRPC, zod,
 *     ETag) next to the floor — the same SQL by bare node:http + pg
 *     (bench/floor-server.ts) — with the ratio; and the full stack once more
 *     with Prometheus metrics recorded (as with METRICS_PORT set), with the
 *     metrics-on/off ratio (target: less than 3 % lost). The three take turns
 *     in rounds (BENCH_ROUNDS, 3, of BENCH_SECONDS, 2 s each); each figure is
 *     the median round. Beside the rates, the CPU time per request in those
 *     rounds (user + system): the server's own (from the process itself), the
 *     load generator's (this process), PostgreSQL's (all its processes, from
 *     /proc) and the whole machine's (/proc/stat), so that where a ratio comes
 *     from can be read off: the server, its clients or its database.
 *
 *  3. With BENCH_PUSH_STREAMS=N (e.g. 1000): the server-side latency once
 *     more while N live activity streams are open on the full stack's process
 *     and a new transfer is committed every second (each goes to every
 *     stream), next to the figures without them (docs/push.md).
 *
 * BENCH_ONLY=<text>[,<text>…] runs only the cases whose name contains one of them (e.g. `indexer/status`,
 * or `trait,rarity` for the traits, trait-filter and rarity cases); `paging` in the list keeps the
 * paging measurement (4.), which runs whenever BENCH_ONLY is unset.
 *
 *  4. Ownership views (docs/api.md, "Ownership views"): a collection's holders, a wallet's
 *     holdings with `collection=` (1 and 100 collections), its collections and its transfers,
 *     and the snapshot reads (`at_block`) a day of blocks before the confirmed block, and BIG's
 *     holders at the middle of its history, in 1. and 2. like the others; for each snapshot, its
 *     first request on its own (it computes the snapshot, which the process keeps; the later
 *     pages are what 1. measures). Then paging
 *     through every holder of BIG, limit 100, at the first block at which it has 10,000
 *     holders, one request after the other, client side (target < 2 s in all).
 *
 *  5. With BENCH_INSTRUCTIONS=N (e.g. 3000; valgrind installed): instructions per request of the
 *     full stack and of the floor, each under callgrind on its own, counted over N requests after
 *     N untimed ones (instructionCounts below).
 *
 * Servers run in child processes, so the load generator does not share their
 * event loop. Results: printed, and written to bench/results/api.json.
 */
import { type SpawnOptions, spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { migrate } from '@/db/migrate'
import { countedInstructions, hasValgrind, instrument, underCallgrind } from './callgrind'
import { machineBusySeconds, postgresSecondsBetween, postgresTicks } from './cpu-time'
import {
  BENCH_NETWORK,
  BIG,
  benchDatabaseUrl,
  collectionAddress,
  EDITION,
  EDITION_TOKEN_ID,
  ownerAddress,
  scaleArgument,
  TRAITS,
  WHALE,
  WHALE_1155,
} from './seed'

const HERE = path.dirname(fileURLToPath(import.meta.url))
const LIMIT = 20
const DEPTH = 1000
const LATENCY_SAMPLES = Number(process.env.BENCH_SAMPLES ?? 200)
const THROUGHPUT_SECONDS = Number(process.env.BENCH_SECONDS ?? 2)
/** Full stack and floor take turns, so a slow spell of a shared machine hits both; the median round counts. */
const THROUGHPUT_ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16)
/** API keys the throughput rounds' connections take turns with. */
const THROUGHPUT_KEYS = 4
const HIGH_LIMITS = 'sec=1000000,min=100000000,concurrent=100000'
const PUSH_STREAMS = Number(process.env.BENCH_PUSH_STREAMS ?? 0)
/** BENCH_INSTRUCTIONS=N: count instructions per request over N requests (5.); 0, the default, skips it. */
const INSTRUCTION_REQUESTS = Number(process.env.BENCH_INSTRUCTIONS ?? 0)
/** The collection of the transfers the push load commits (removed again at the end). */
const PUSH_COLLECTION = '0xfeed000000000000000000000000000000000000'

// ───────────────────────────── child: a server ─────────────────────────────

type ServerKind = 'full' | 'full-metrics' | 'floor'

async function serve(kind: ServerKind, url: string) {
  const timings = new Map<string, number[]>()
  const record = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const started = performance.now()
    const label = String(req.headers['x-bench-label'] ?? '')
    if (!label) return
    res.once('finish', () => {
      const list = timings.get(label) ?? []
      list.push(performance.now() - started)
      timings.set(label, list)
    })
  }
  let server: http.Server
  if (kind === 'floor') {
    const { createFloorServer } = await import('./floor-server')
    server = createFloorServer({ url, network: BENCH_NETWORK, publicUrl: 'http://bench.test' }).server
  } else {
    const { parseConfig } = await import('@/config/env')
    const { createLogger } = await import('@/config/logger')
    const { openDatabase } = await import('@/db/database')
    const { createWebServer } = await import('@/server/web-server')
    const { createWebServices } = await import('@/server/services/web-services')
    const config = parseConfig({
      NODE_ENV: 'production',
      NETWORK: BENCH_NETWORK,
      DATABASE_URL: url,
      PUBLIC_URL: 'http://bench.test',
      LOG_LEVEL: 'silent',
      RATE_LIMIT_KEY: HIGH_LIMITS,
      RATE_LIMIT_IP_KEY: HIGH_LIMITS,
      RATE_LIMIT_MEDIA: HIGH_LIMITS,
    } as unknown as NodeJS.ProcessEnv)
    const db = openDatabase(url, {
      statementTimeoutMs: config.DB_STATEMENT_TIMEOUT_MS,
      applicationName: 'bench-web',
    })
    const services = createWebServices(config, {
      db,
      logger: createLogger({ level: 'silent' }),
      metrics: kind === 'full-metrics',
    })
    const web = await createWebServer({ services })
    server = web.server
  }
  server.prependListener('request', record)
  server.listen(0, '127.0.0.1', () => {
    process.send?.({ type: 'ready', port: (server.address() as AddressInfo).port })
  })
  process.on('message', (message: { type: string }) => {
    if (message.type === 'timings') {
      process.send?.({ type: 'timings', data: Object.fromEntries(timings) })
      timings.clear()
    }
    if (message.type === 'cpu') process.send?.({ type: 'cpu', data: process.cpuUsage() })
    if (message.type === 'stop') process.exit(0)
  })
}

// ───────────────────────────── parent: the benchmark ─────────────────────────────

interface Child {
  port: number
  timings(): Promise<Record<string, number[]>>
  /** The server process's CPU time so far (µs, user + system). */
  cpu(): Promise<number>
  pid: number
  stop(): void
  /** Asks the server to exit, and waits until it has (callgrind writes its counts then). */
  exit(): Promise<void>
}

/** A server in a child process; under callgrind (instructions counted only while switched on) when `callgrindOut` is given. */
async function startChild(kind: ServerKind, url: string, callgrindOut?: string): Promise<Child> {
  const args = ['--import', 'tsx', fileURLToPath(import.meta.url), '--serve', kind, url]
  const options: SpawnOptions = {
    // Servers run as `npm start` runs them (e.g. responses are not parsed again, src/server/api/internals/response-schema.ts).
    env: { ...process.env, NODE_ENV: 'production' },
    stdio: ['ignore', 'inherit', callgrindOut ? 'ignore' : 'inherit', 'ipc'],
  }
  const [command, commandArgs] = callgrindOut ? underCallgrind(callgrindOut, args) : [process.execPath, args]
  const child = spawn(command, commandArgs, options)
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (m: { type: string; port: number }) =>
      m.type === 'ready' ? resolve(m.port) : reject(),
    )
    child.once('exit', (code) => reject(new Error(`${kind} server exited (${code})`)))
  })
  return {
    port,
    timings: () =>
      new Promise((resolve) => {
        child.once('message', (m: { data: Record<string, number[]> }) => resolve(m.data))
        child.send({ type: 'timings' })
      }),
    cpu: () =>
      new Promise((resolve) => {
        child.once('message', (m: { data: NodeJS.CpuUsage }) => resolve(m.data.user + m.data.system))
        child.send({ type: 'cpu' })
      }),
    pid: child.pid!,
    stop: () => child.kill(),
    exit: () =>
      new Promise((resolve) => {
        child.once('exit', () => resolve())
        child.send({ type: 'stop' })
      }),
  }
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 256 })

function get(port: number, pathname: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: pathname, agent, headers }, (res) => {
      res.resume()
      res.on('end', () => resolve(res.statusCode ?? 0))
    })
    req.on('error', reject)
  })
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN
}

interface Case {
  name: string
  first: string
  deep?: string
  deepPage?: number
  /** A snapshot (`at_block`): its first request computes it, timed on its own ("cold"). */
  snapshot?: boolean
}

/** How far back the snapshot cases read: a day of 12-second blocks before the confirmed block. */
const SNAPSHOT_AGE = 7_200
/** Holders the paging measurement walks: the first block at which BIG has at least this many. */
const PAGED_HOLDERS = 10_000
const PAGED_LIMIT = 100
const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000'

/** A collection's holders at block $2, as GET /v1/collections/{address}/owners?at_block orders them (ERC-721). */
const HOLDERS_AT_SQL = `
  SELECT owner, count(*)::int AS token_count
    FROM (SELECT DISTINCT ON (token_id) to_address AS owner FROM transfers
           WHERE collection_address = $1 AND block_number <= $2
           ORDER BY token_id, block_timestamp DESC, block_number DESC, log_index DESC, batch_index DESC, id DESC) last
   WHERE owner <> '${ZERO_ADDRESS}'
   GROUP BY owner ORDER BY token_count DESC, owner`

/** The endpoint cases, with cursors of the page DEPTH pages deep (from SQL in each endpoint's order). */
async function buildCases(pool: pg.Pool): Promise<Case[]> {
  const at = async (sql: string, params: unknown[] = [], depth = DEPTH) => {
    const offsetRows = await pool.query(`SELECT count(*)::int AS n FROM (${sql}) s`, params)
    const total = offsetRows.rows[0].n as number
    // The cursor of page N + 1 is the last row of page N.
    const page = Math.min(depth, Math.floor((total - 1) / LIMIT))
    if (page < 1) return { row: undefined as unknown as Record<string, string>, page: 1 }
    const { rows } = await pool.query(`${sql} OFFSET ${page * LIMIT - 1} LIMIT 1`, params)
    return { row: rows[0] as Record<string, string>, page: page + 1 }
  }
  const us = `(extract(epoch FROM block_timestamp) * 1000000)::int8::text AS us`
  const timeCursor = (r: Record<string, string>) => `before_timestamp=${r.us}&before_id=${r.id}`
  /** A case with its deep page, when the list has one. */
  const withDeep = (c: Case, found: { row: unknown; page: number }, deep: () => string): Case =>
    found.row === undefined ? c : { ...c, deep: deep(), deepPage: found.page }
  const cases: Case[] = []

  const collections = await at(
    `SELECT (extract(epoch FROM created_at) * 1000000)::int8::text AS us, id::text FROM collections WHERE listed ORDER BY created_at DESC, id DESC`,
  )
  cases.push(
    withDeep(
      { name: 'GET /v1/collections', first: '/v1/collections' },
      collections,
      () => `/v1/collections?${timeCursor(collections.row)}`,
    ),
  )
  cases.push({ name: 'GET /v1/collections?search= (trigram)', first: '/v1/collections?search=apes%201234' })
  // Eleven matches of 20,000 that the planner guesses are 185: a walk of the whole list if left to it.
  cases.push({
    name: 'GET /v1/collections?search= (trigram, rare)',
    first: '/v1/collections?search=s%201493',
  })
  cases.push({ name: 'GET /v1/collections?search= (short)', first: '/v1/collections?search=q' })
  cases.push({ name: 'GET /v1/collections/{address}', first: `/v1/collections/${BIG}` })

  const nfts = await at(
    'SELECT token_id::text, id::text FROM tokens WHERE collection_address = $1 AND NOT is_burned ORDER BY token_id, id',
    [BIG],
  )
  cases.push(
    withDeep(
      { name: 'GET /v1/collections/{address}/nfts', first: `/v1/collections/${BIG}/nfts` },
      nfts,
      () => `/v1/collections/${BIG}/nfts?after_token_id=${nfts.row.token_id}&after_id=${nfts.row.id}`,
    ),
  )
  const nftsBurned = await at(
    'SELECT token_id::text, id::text FROM tokens WHERE collection_address = $1 ORDER BY token_id',
    [BIG],
  )
  cases.push(
    withDeep(
      {
        name: 'GET /v1/collections/{address}/nfts?include_burned=true',
        first: `/v1/collections/${BIG}/nfts?include_burned=true`,
      },
      nftsBurned,
      () =>
        `/v1/collections/${BIG}/nfts?include_burned=true&after_token_id=${nftsBurned.row.token_id}&after_id=${nftsBurned.row.id}`,
    ),
  )
  // Traits, trait filters and rarity on TRAITS (10,000 tokens, 8 trait types: bench/seed.ts).
  cases.push({ name: 'GET /v1/collections/{address}/traits', first: `/v1/collections/${TRAITS}/traits` })
  const traitCase = async (name: string, params: Array<[string, string]>) => {
    const query = params.map(([t, v]) => `trait=${encodeURIComponent(`${t}:${v}`)}`).join('&')
    const documents = params.map(([t, v]) => JSON.stringify([{ trait_type: t, value: v }]))
    const found = await at(
      `SELECT token_id::text, id::text FROM tokens
        WHERE collection_address = $1 AND NOT is_burned AND metadata_status = 'ok' AND attributes @> ALL($2::jsonb[])
        ORDER BY token_id, id`,
      [TRAITS, documents],
    )
    cases.push(
      withDeep(
        { name, first: `/v1/collections/${TRAITS}/nfts?${query}` },
        found,
        () =>
          `/v1/collections/${TRAITS}/nfts?${query}&after_token_id=${found.row.token_id}&after_id=${found.row.id}`,
      ),
    )
  }
  await traitCase('GET /v1/collections/{address}/nfts?trait= (one trait)', [['Background', 'Red']])
  await traitCase('GET /v1/collections/{address}/nfts?trait= (three traits)', [
    ['Background', 'Blue'],
    ['Body', 'Plain'],
    ['Eyes', 'Eyes 1'],
  ])
  const ranked = await at(
    `SELECT t.token_id::text, t.id::text FROM token_rarity r JOIN tokens t ON t.id = r.token_id
      WHERE r.collection_address = $1 AND NOT t.is_burned AND t.metadata_status = 'ok' ORDER BY r.position`,
    [TRAITS],
  )
  cases.push(
    withDeep(
      {
        name: 'GET /v1/collections/{address}/nfts?sort=rarity',
        first: `/v1/collections/${TRAITS}/nfts?sort=rarity`,
      },
      ranked,
      () =>
        `/v1/collections/${TRAITS}/nfts?sort=rarity&after_token_id=${ranked.row.token_id}&after_id=${ranked.row.id}`,
    ),
  )
  const { rows: some } = await pool.query(
    'SELECT token_id::text FROM tokens WHERE collection_address = $1 ORDER BY transfer_count DESC LIMIT 1',
    [BIG],
  )
  cases.push({ name: 'GET /v1/nfts/{address}/{tokenId}', first: `/v1/nfts/${BIG}/${some[0].token_id}` })
  cases.push({
    name: 'GET /v1/nfts/{address}/{tokenId}/transfers',
    first: `/v1/nfts/${BIG}/${some[0].token_id}/transfers`,
  })

  const owner = await at(
    'SELECT collection_address, token_id::text, id::text FROM tokens WHERE current_owner = $1 ORDER BY collection_address, token_id, id',
    [WHALE],
  )
  cases.push(
    withDeep(
      { name: 'GET /v1/owners/{address}/nfts', first: `/v1/owners/${WHALE}/nfts` },
      owner,
      () =>
        `/v1/owners/${WHALE}/nfts?after_collection=${owner.row.collection_address}&after_token_id=${owner.row.token_id}&after_id=${owner.row.id}`,
    ),
  )

  const collectionTransfers = await at(
    `SELECT ${us}, id::text FROM transfers WHERE collection_address = $1 ORDER BY block_timestamp DESC, id DESC`,
    [BIG],
  )
  cases.push(
    withDeep(
      { name: 'GET /v1/collections/{address}/transfers', first: `/v1/collections/${BIG}/transfers` },
      collectionTransfers,
      () => `/v1/collections/${BIG}/transfers?${timeCursor(collectionTransfers.row)}`,
    ),
  )

  const activity = await at(`SELECT ${us}, id::text FROM transfers ORDER BY block_timestamp DESC, id DESC`)
  cases.push(
    withDeep(
      { name: 'GET /v1/activity', first: '/v1/activity' },
      activity,
      () => `/v1/activity?${timeCursor(activity.row)}`,
    ),
  )
  const burns = await at(
    `SELECT ${us}, id::text FROM transfers WHERE event_type = 'burn' ORDER BY block_timestamp DESC, id DESC`,
  )
  cases.push(
    withDeep(
      { name: 'GET /v1/activity?event_type=burn', first: '/v1/activity?event_type=burn' },
      burns,
      () => `/v1/activity?event_type=burn&${timeCursor(burns.row)}`,
    ),
  )
  const small = `0xc0${(777).toString(16).padStart(38, '0')}`
  const scoped = await at(
    `SELECT ${us}, id::text FROM transfers WHERE collection_address = $1 AND event_type = 'transfer' ORDER BY block_timestamp DESC, id DESC`,
    [BIG],
  )
  cases.push(
    withDeep(
      {
        name: 'GET /v1/activity?collection=&event_type=transfer',
        first: `/v1/activity?collection=${BIG}&event_type=transfer`,
      },
      scoped,
      () => `/v1/activity?collection=${BIG}&event_type=transfer&${timeCursor(scoped.row)}`,
    ),
  )
  cases.push({
    name: 'GET /v1/activity?collection= (small collection)',
    first: `/v1/activity?collection=${small}`,
  })
  cases.push({ name: 'GET /v1/indexer/status', first: '/v1/indexer/status' })

  cases.push(...(await ownershipCases(pool, at, timeCursor, withDeep, us, some[0].token_id)))

  // ERC-1155 (docs/api.md, "ERC-1155"): a token's holders (balance desc, then owner) and a wallet's
  // ERC-1155 holdings, ordered as the ERC-721 ones, from token_balances; not in a database seeded
  // before bench:seed had its ERC-1155 part.
  const { rowCount: multi } = await pool.query('SELECT 1 FROM token_balances LIMIT 1')
  if (!multi) {
    console.log('no ERC-1155 rows (seeded before bench:seed had them): the ERC-1155 cases are left out')
    return cases
  }
  const holdersPath = `/v1/nfts/${EDITION}/${EDITION_TOKEN_ID}/owners`
  const holdersSql = `SELECT balance::text, owner FROM token_balances
    WHERE collection_address = $1 AND token_id = $2 AND balance > 0 ORDER BY balance DESC, owner`
  const holders = await at(holdersSql, [EDITION, EDITION_TOKEN_ID])
  const holdersCursor = (r: Record<string, string>) => `after_balance=${r.balance}&after_owner=${r.owner}`
  cases.push(
    withDeep(
      { name: 'GET /v1/nfts/{address}/{tokenId}/owners (ERC-1155 edition)', first: holdersPath },
      holders,
      () => `${holdersPath}?${holdersCursor(holders.row)}`,
    ),
  )
  // Page 1,000 of the edition is its last page: a page in the middle as well, inside a run of equal balances.
  const middle = await at(holdersSql, [EDITION, EDITION_TOKEN_ID], DEPTH / 2 - 1)
  if (middle.row)
    cases.push({
      name: `GET /v1/nfts/{address}/{tokenId}/owners (ERC-1155 edition, page ${middle.page})`,
      first: `${holdersPath}?${holdersCursor(middle.row)}`,
    })
  const holdingsPath = `/v1/owners/${WHALE_1155}/nfts?standard=ERC1155`
  const holdings = await at(
    `SELECT b.collection_address, b.token_id::text, t.id::text FROM token_balances b
       JOIN tokens t ON t.collection_address = b.collection_address AND t.token_id = b.token_id
      WHERE b.owner = $1 AND b.balance > 0 ORDER BY b.collection_address, b.token_id`,
    [WHALE_1155],
  )
  cases.push(
    withDeep(
      { name: 'GET /v1/owners/{address}/nfts?standard=ERC1155', first: holdingsPath },
      holdings,
      () =>
        `${holdingsPath}&after_collection=${holdings.row.collection_address}&after_token_id=${holdings.row.token_id}&after_id=${holdings.row.id}`,
    ),
  )
  return cases
}

type Found = { row: Record<string, string>; page: number }
type At = (sql: string, params?: unknown[], depth?: number) => Promise<Found>

/**
 * The ownership views (docs/api.md, "Ownership views"): a big collection's holders (BIG), the
 * whale's holdings filtered to 1 and to 100 collections, its collections and its transfers, and
 * the three snapshot reads at a past confirmed block (SNAPSHOT_AGE before the confirmed block),
 * and BIG's holders at the middle of its history.
 */
async function ownershipCases(
  pool: pg.Pool,
  at: At,
  timeCursor: (r: Record<string, string>) => string,
  withDeep: (c: Case, found: { row: unknown; page: number }, deep: () => string) => Case,
  us: string,
  busyToken: string,
): Promise<Case[]> {
  const cases: Case[] = []
  const owners = await at(
    `SELECT token_count::text, owner FROM collection_holders
      WHERE collection_address = $1 AND token_count > 0 ORDER BY token_count DESC, owner`,
    [BIG],
  )
  const ownersCursor = (r: Record<string, string>) =>
    `after_token_count=${r.token_count}&after_owner=${r.owner}`
  cases.push(
    withDeep(
      { name: 'GET /v1/collections/{address}/owners', first: `/v1/collections/${BIG}/owners` },
      owners,
      () => `/v1/collections/${BIG}/owners?${ownersCursor(owners.row)}`,
    ),
  )

  const holdingsCursor = (r: Record<string, string>) =>
    `after_collection=${r.collection_address}&after_token_id=${r.token_id}&after_id=${r.id}`
  const holdingsSql = `SELECT collection_address, token_id::text, id::text FROM tokens
    WHERE current_owner = $1 AND collection_address = ANY($2) ORDER BY collection_address, token_id, id`
  // 1 collection (BIG), and 100: BIG and the next 99 collections by address, the cursor deep in BIG.
  for (const collections of [
    [BIG],
    [BIG, ...Array.from({ length: 99 }, (_, i) => collectionAddress(i + 1))],
  ]) {
    const filter = collections.map((c) => `collection=${c}`).join('&')
    const found = await at(holdingsSql, [WHALE, collections])
    const path = `/v1/owners/${WHALE}/nfts?${filter}`
    cases.push(
      withDeep(
        {
          name: `GET /v1/owners/{address}/nfts?collection= (${collections.length} collection${collections.length > 1 ? 's' : ''})`,
          first: path,
        },
        found,
        () => `${path}&${holdingsCursor(found.row)}`,
      ),
    )
  }

  const collections = await at(
    'SELECT collection_address FROM collection_holders WHERE owner = $1 AND token_count > 0 ORDER BY collection_address',
    [WHALE],
  )
  cases.push(
    withDeep(
      { name: 'GET /v1/owners/{address}/collections', first: `/v1/owners/${WHALE}/collections` },
      collections,
      () => `/v1/owners/${WHALE}/collections?after_collection=${collections.row.collection_address}`,
    ),
  )

  const transfers = await at(
    `SELECT ${us}, id::text FROM transfers WHERE from_address = $1 OR to_address = $1
      ORDER BY block_timestamp DESC, id DESC`,
    [WHALE],
  )
  cases.push(
    withDeep(
      { name: 'GET /v1/owners/{address}/transfers', first: `/v1/owners/${WHALE}/transfers` },
      transfers,
      () => `/v1/owners/${WHALE}/transfers?${timeCursor(transfers.row)}`,
    ),
  )
  // An ordinary wallet (about 50 transfers, in and out): the merge of both ranges.
  cases.push({
    name: 'GET /v1/owners/{address}/transfers (ordinary wallet)',
    first: `/v1/owners/${ownerAddress(4242)}/transfers`,
  })

  // Snapshots at a past confirmed block.
  const { rows: state } = await pool.query('SELECT last_confirmed_block::text AS b FROM indexer_state')
  const block = BigInt(state[0].b) - BigInt(SNAPSHOT_AGE)
  /** BIG's holders at `at`, first page and page 1,000 by its cursor. */
  const holdersAt = async (name: string, atBlock: bigint) => {
    const deep = await at(HOLDERS_AT_SQL, [BIG, atBlock.toString()])
    cases.push(
      withDeep(
        { name, first: `/v1/collections/${BIG}/owners?at_block=${atBlock}`, snapshot: true },
        deep,
        () => `/v1/collections/${BIG}/owners?at_block=${atBlock}&${ownersCursor(deep.row)}`,
      ),
    )
  }
  await holdersAt('GET /v1/collections/{address}/owners?at_block=', block)
  // BIG's holders at the middle of its history (half of its transfers on either side, half of its
  // tokens minted): computed token by token (docs/database.md, "Snapshots").
  const { rows: span } = await pool.query(
    'SELECT coalesce(first_seen_block, deploy_block, 0)::text AS since FROM collections WHERE address = $1',
    [BIG],
  )
  await holdersAt(
    'GET /v1/collections/{address}/owners?at_block= (middle of history)',
    (BigInt(span[0].since) + BigInt(state[0].b)) / 2n,
  )
  // An ERC-1155 collection's holders at the block: EDITION (its edition held by 20,000 wallets).
  const editionAt = await at(
    `SELECT owner, count(*)::int AS token_count FROM (
       SELECT owner, token_id FROM (
         SELECT token_id, to_address AS owner, amount AS v FROM transfers
          WHERE collection_address = $1 AND block_number <= $2 AND to_address <> '${ZERO_ADDRESS}'
         UNION ALL
         SELECT token_id, from_address, -amount FROM transfers
          WHERE collection_address = $1 AND block_number <= $2 AND from_address <> '${ZERO_ADDRESS}') m
        GROUP BY owner, token_id HAVING sum(v) > 0) h
      GROUP BY owner ORDER BY token_count DESC, owner`,
    [EDITION, block.toString()],
  )
  cases.push(
    withDeep(
      {
        name: 'GET /v1/collections/{address}/owners?at_block= (ERC-1155)',
        first: `/v1/collections/${EDITION}/owners?at_block=${block}`,
        snapshot: true,
      },
      editionAt,
      () => `/v1/collections/${EDITION}/owners?at_block=${block}&${ownersCursor(editionAt.row)}`,
    ),
  )
  // The whale never moves a token (bench/seed.ts): its holdings at the block are its tokens minted by then.
  const holdingsAt = await at(
    `SELECT collection_address, token_id::text, id::text FROM tokens
      WHERE current_owner = $1 AND minted_block <= $2 ORDER BY collection_address, token_id, id`,
    [WHALE, block.toString()],
  )
  cases.push(
    withDeep(
      {
        name: 'GET /v1/owners/{address}/nfts?at_block=',
        first: `/v1/owners/${WHALE}/nfts?at_block=${block}`,
        snapshot: true,
      },
      holdingsAt,
      () => `/v1/owners/${WHALE}/nfts?at_block=${block}&${holdingsCursor(holdingsAt.row)}`,
    ),
  )
  // The zero address's holdings: the tokens burned by the block (back from its burned tokens now).
  cases.push({
    name: 'GET /v1/owners/{address}/nfts?at_block= (zero address: burned tokens)',
    first: `/v1/owners/${ZERO_ADDRESS}/nfts?at_block=${block}`,
    snapshot: true,
  })
  cases.push({
    name: 'GET /v1/nfts/{address}/{tokenId}?at_block=',
    first: `/v1/nfts/${BIG}/${busyToken}?at_block=${block}`,
  })
  // An edition of 20,000 holders: back from its stored state and the day's transfers.
  cases.push({
    name: 'GET /v1/nfts/{address}/{tokenId}?at_block= (ERC-1155 edition)',
    first: `/v1/nfts/${EDITION}/${EDITION_TOKEN_ID}?at_block=${block}&standard=all`,
  })
  return cases
}

/**
 * Paging through every holder of a collection at a past block, limit 100, one request after
 * the other as a client does (its first request computes the snapshot): the first block at
 * which BIG has PAGED_HOLDERS holders (found by bisection over its history). Client-side time.
 */
async function pageAllHolders(pool: pg.Pool, port: number, headers: Record<string, string>) {
  const holdersAt = async (block: number) =>
    (await pool.query(`SELECT count(*)::int AS n FROM (${HOLDERS_AT_SQL}) s`, [BIG, block])).rows[0]
      .n as number
  const { rows } = await pool.query('SELECT last_confirmed_block::int AS b FROM indexer_state')
  let lo = 1
  let hi = rows[0].b as number
  if ((await holdersAt(hi)) < PAGED_HOLDERS) return undefined
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2)
    if ((await holdersAt(mid)) >= PAGED_HOLDERS) hi = mid
    else lo = mid + 1
  }
  const block = lo
  const expected = await holdersAt(block)
  let query = `/v1/collections/${BIG}/owners?at_block=${block}&limit=${PAGED_LIMIT}`
  let holders = 0
  let pages = 0
  let firstPage = 0
  const started = performance.now()
  for (;;) {
    const body = await getJson(port, query, headers)
    pages++
    if (pages === 1) firstPage = performance.now() - started
    holders += body.data.length
    if (!body.pagination.has_more) break
    const next = new URLSearchParams(
      Object.entries(body.pagination.next_page_params as Record<string, unknown>).map(([k, v]) => [
        k,
        String(v),
      ]),
    )
    query = `/v1/collections/${BIG}/owners?limit=${PAGED_LIMIT}&${next}`
  }
  const total = performance.now() - started
  if (holders !== expected)
    throw new Error(`paging at block ${block}: ${holders} holders, SQL says ${expected}`)
  return { block, holders, pages, totalMs: total, firstPageMs: firstPage }
}

interface PageBody {
  data: unknown[]
  pagination: { has_more: boolean; next_page_params?: Record<string, unknown> }
}

function getJson(port: number, pathname: string, headers: Record<string, string>): Promise<PageBody> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: pathname, agent, headers }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8')
        if (res.statusCode !== 200) reject(new Error(`${pathname}: HTTP ${res.statusCode} ${text}`))
        else resolve(JSON.parse(text))
      })
    })
    req.on('error', reject)
  })
}

async function latency(child: Child, cases: Case[], headers: Record<string, string>) {
  const results: Record<
    string,
    { first: [number, number]; deep?: [number, number]; cold?: number; failed?: string }
  > = {}
  for (const c of cases) {
    if (c.snapshot) {
      // The snapshot's first request: computed, then kept in the process (server-side time).
      await child.timings()
      const status = await get(child.port, c.first, { ...headers, 'X-Bench-Label': 'cold' })
      const cold = (await child.timings()).cold?.[0]
      results[c.name] = { first: [Number.NaN, Number.NaN], cold }
      if (status !== 200) {
        // Reported, not thrown: e.g. a snapshot whose computation outlasts the statement timeout.
        results[c.name]!.failed = `HTTP ${status} after ${cold?.toFixed(0)} ms`
        console.log(`${c.first}: HTTP ${status} after ${cold?.toFixed(0)} ms (left out of the figures)`)
        continue
      }
    }
    for (const [kind, pathname] of [
      ['first', c.first],
      ['deep', c.deep],
    ] as const) {
      if (!pathname) continue
      for (let i = 0; i < 20; i++) await get(child.port, pathname, headers) // warm-up
      await child.timings()
      for (let i = 0; i < LATENCY_SAMPLES; i++) {
        const status = await get(child.port, pathname, { ...headers, 'X-Bench-Label': 'x' })
        if (status !== 200) throw new Error(`${pathname}: HTTP ${status}`)
      }
      const samples = (await child.timings()).x ?? []
      results[c.name] ??= { first: [0, 0] }
      results[c.name]![kind] = [percentile(samples, 50), percentile(samples, 95)]
    }
  }
  return results
}

/**
 * Push delivery on the server under test: `count` live streams (5 per key, 25 keys per
 * account) and a transfer committed every second, which the journal's triggers record
 * and every stream receives.
 */
async function startPushLoad(url: string, port: number, count: number) {
  const { openDatabase } = await import('@/db/database')
  const { createApiKey, ensureUser, revokeApiKey } = await import('@/server/api/portal/keys/api-keys')
  const { STREAMS_PER_KEY } = await import('@/server/ratelimit/policy')
  const db = openDatabase(url)
  const keys: Array<{ actor: { userId: bigint; address: string }; id: bigint; secret: string }> = []
  for (let k = 0; k < Math.ceil(count / STREAMS_PER_KEY); k++) {
    const user = await ensureUser(db, `0x${(0xbe5000 + Math.floor(k / 25)).toString(16).padStart(40, '0')}`)
    const actor = { userId: user.id, address: user.address }
    const { key, secret } = await createApiKey(db, actor, { name: `bench push ${Date.now()} ${k}` })
    keys.push({ actor, id: BigInt(key.id), secret })
  }
  let received = 0
  const streams: http.ClientRequest[] = []
  for (let i = 0; i < count; i++) {
    const { secret } = keys[Math.floor(i / STREAMS_PER_KEY)]!
    streams.push(
      await new Promise<http.ClientRequest>((resolve, reject) => {
        const req = http.get(
          {
            host: '127.0.0.1',
            port,
            path: '/v1/activity/stream',
            agent: false,
            headers: { Authorization: `Bearer ${secret}`, Accept: 'text/event-stream' },
          },
          (res) => {
            if (res.statusCode !== 200) return reject(new Error(`stream refused: HTTP ${res.statusCode}`))
            res.setEncoding('utf8')
            res.on('data', (chunk: string) => {
              received += chunk.split('\nevent: activity.added\n').length - 1
            })
            resolve(req)
          },
        )
        req.on('error', reject)
      }),
    )
  }
  let n = 0
  const writer = setInterval(() => {
    n++
    db.pool
      .query(
        `INSERT INTO transfers (collection_address, token_id, from_address, to_address, event_type, block_number,
                                block_hash, block_timestamp, transaction_hash, log_index, batch_index, source)
         VALUES ($1, $2, '0x0000000000000000000000000000000000000000', '0x00000000000000000000000000000000000be5c4',
                 'mint', 0, NULL, now(), $3, 0, 0, 'rpc')`,
        [PUSH_COLLECTION, n, `0x${'fe'.repeat(24)}${Date.now().toString(16).padStart(16, '0')}`],
      )
      .catch((err) => console.error('push load: insert failed', err))
  }, 1_000)
  return {
    streams: count,
    received: () => received,
    async stop() {
      clearInterval(writer)
      for (const s of streams) s.destroy()
      await db.pool.query('DELETE FROM transfers WHERE collection_address = $1', [PUSH_COLLECTION])
      await db.pool.query('DELETE FROM activity_journal WHERE collection_address = $1', [PUSH_COLLECTION])
      for (const { actor, id } of keys) await revokeApiKey(db, actor, { keyId: id })
      await db.close()
    },
  }
}

/** One round's rate, and the CPU time per request (µs) of the server, the load generator, PostgreSQL and the whole machine. */
interface ThroughputRound {
  rate: number
  cpuPerRequest: number
  loadGeneratorPerRequest: number
  postgresPerRequest: number
  machinePerRequest: number
}

/**
 * Requests per second, and CPU per request (µs): on a shared 2-core machine the rate moves with
 * whatever else runs; the server's own CPU per request moves less, though it too grows when the
 * cores are contended (caches, scheduling). The load generator's, PostgreSQL's and the machine's
 * say where the rest of a request's cost falls.
 * Connection i sends clients[i % clients.length]'s headers: several API clients, as in production.
 */
async function throughput(
  server: Child,
  pathname: string,
  clients: Record<string, string>[],
): Promise<ThroughputRound> {
  let done = 0
  let failed = 0
  const cpuBefore = await server.cpu()
  const loadBefore = process.cpuUsage()
  const postgresBefore = postgresTicks()
  const machineBefore = machineBusySeconds()
  const until = performance.now() + THROUGHPUT_SECONDS * 1000
  const started = performance.now()
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, i) => {
      const headers = clients[i % clients.length]!
      while (performance.now() < until) {
        const status = await get(server.port, pathname, headers)
        if (status === 200) done++
        else failed++
      }
    }),
  )
  const seconds = (performance.now() - started) / 1000
  const machine = machineBusySeconds() - machineBefore
  const postgres = postgresSecondsBetween(postgresBefore, postgresTicks())
  const load = process.cpuUsage(loadBefore)
  const cpu = (await server.cpu()) - cpuBefore
  if (failed > 0) throw new Error(`${pathname}: ${failed} failed requests`)
  return {
    rate: done / seconds,
    cpuPerRequest: cpu / done,
    loadGeneratorPerRequest: (load.user + load.system) / done,
    postgresPerRequest: (postgres * 1e6) / done,
    machinePerRequest: (machine * 1e6) / done,
  }
}

async function main() {
  // --scale N: the database bench:seed --scale N built (results in api.json, or api-s<N>.json).
  const scale = scaleArgument(process.argv.slice(2))
  const url = benchDatabaseUrl(scale)
  // A dataset seeded before a schema change gets the migrations it lacks, as `npm start` applies
  // them (the seeded rows stay; the servers read the schema the code expects).
  await migrate(url)
  const pool = new pg.Pool({ connectionString: url, max: 2 })
  const counts = await pool.query(
    'SELECT (SELECT count(*) FROM transfers)::int AS t, (SELECT count(*) FROM tokens)::int AS k, (SELECT count(*) FROM collections)::int AS c',
  )
  console.log(
    `bench:api on ${url.replace(/\/\/[^@]*@/, '//')}: ${counts.rows[0].t.toLocaleString()} transfers, ${counts.rows[0].k.toLocaleString()} tokens, ${counts.rows[0].c.toLocaleString()} collections`,
  )
  if (counts.rows[0].t === 0) throw new Error('empty: run `npm run bench:seed` first')
  const only = process.env.BENCH_ONLY
  const cases = (await buildCases(pool)).filter(
    (c) => !only || only.split(',').some((part) => c.name.includes(part)),
  )
  await pool.end()

  // A real portal key: the full stack runs its whole credential path.
  const { openDatabase } = await import('@/db/database')
  const { createApiKey, ensureUser, revokeApiKey } = await import('@/server/api/portal/keys/api-keys')
  const db = openDatabase(url)
  const user = await ensureUser(db, '0x00000000000000000000000000000000000be9c4')
  const actor = { userId: user.id, address: user.address }
  // A web process lets one key use half its pool at once (docs/auth.md, "Admission before
  // waiting"): the throughput rounds spread their connections over several keys.
  const keys = await Promise.all(
    Array.from({ length: THROUGHPUT_KEYS }, (_, i) =>
      createApiKey(db, actor, { name: `bench ${Date.now()} ${i}` }),
    ),
  )
  const clients = keys.map(({ secret }) => ({ Authorization: `Bearer ${secret}` }))
  const auth = clients[0]!

  const full = await startChild('full', url)
  const withMetrics = await startChild('full-metrics', url)
  const floor = await startChild('floor', url)
  try {
    console.log(`\nserver-side latency, ${LATENCY_SAMPLES} sequential requests each (ms)`)
    const fullLatency = await latency(full, cases, auth)
    const floorLatency = await latency(floor, cases, {})
    const failed = cases.filter((c) => fullLatency[c.name]?.failed || floorLatency[c.name]?.failed)
    const served = cases.filter((c) => !failed.includes(c))
    const rows: Array<Record<string, string>> = []
    for (const c of served) {
      const f = fullLatency[c.name]!
      rows.push({
        endpoint: c.name,
        'first p50': f.first[0].toFixed(2),
        'first p95': f.first[1].toFixed(2),
        'deep page': c.deep ? String(c.deepPage) : '',
        'deep p50': f.deep ? f.deep[0].toFixed(2) : '',
        'deep p95': f.deep ? f.deep[1].toFixed(2) : '',
        'floor first p95': floorLatency[c.name]!.first[1].toFixed(2),
        'floor deep p95': floorLatency[c.name]!.deep ? floorLatency[c.name]!.deep![1].toFixed(2) : '',
      })
    }
    console.table(rows)
    const coldRows = cases
      .filter((c) => c.snapshot)
      .map((c) => ({
        endpoint: c.name,
        'full stack, first request (ms)':
          fullLatency[c.name]!.failed ?? fullLatency[c.name]!.cold?.toFixed(0) ?? '',
        'floor, first request (ms)':
          floorLatency[c.name]!.failed ?? floorLatency[c.name]!.cold?.toFixed(0) ?? '',
      }))
    if (coldRows.length > 0) {
      console.log(
        '\nsnapshots: the first request of each (computes the snapshot; the figures above are its later pages)',
      )
      console.table(coldRows)
    }
    let paged: Awaited<ReturnType<typeof pageAllHolders>> | { failed: string }
    if (!only || only.split(',').includes('paging')) {
      const bisect = new pg.Pool({ connectionString: url, max: 1 })
      try {
        paged = await pageAllHolders(bisect, full.port, auth)
      } catch (err) {
        // Reported, not thrown (e.g. the snapshot's computation outlasts the statement timeout).
        paged = { failed: String((err as Error).message ?? err) }
        console.log(`\npaging through every holder of ${BIG} at a past block failed: ${paged.failed}`)
      } finally {
        await bisect.end()
      }
      if (paged && !('failed' in paged))
        console.log(
          `\nevery holder of ${BIG} at block ${paged.block} (${paged.holders.toLocaleString()} holders, ${paged.pages} pages of ${PAGED_LIMIT}), full stack, one request after the other: ${paged.totalMs.toFixed(0)} ms in all (target < 2,000 ms), first page ${paged.firstPageMs.toFixed(0)} ms`,
        )
    }

    if (PUSH_STREAMS > 0) {
      const push = await startPushLoad(url, full.port, PUSH_STREAMS)
      try {
        await new Promise((r) => setTimeout(r, 2_000))
        const pushed = await latency(full, served, auth)
        console.log(
          `\nserver-side latency with ${push.streams} live streams open on the same process and a transfer committed every second (ms)`,
        )
        console.table(
          served.map((c) => {
            const quiet = fullLatency[c.name]!
            const loaded = pushed[c.name]!
            return {
              endpoint: c.name,
              'first p95': quiet.first[1].toFixed(2),
              'first p95, streams': loaded.first[1].toFixed(2),
              'deep p95': quiet.deep ? quiet.deep[1].toFixed(2) : '',
              'deep p95, streams': loaded.deep ? loaded.deep[1].toFixed(2) : '',
            }
          }),
        )
        const worst = (r: typeof fullLatency) =>
          Math.max(...Object.values(r).flatMap((x) => [x.first[1], ...(x.deep ? [x.deep[1]] : [])]))
        console.log(
          `worst p95 ${worst(fullLatency).toFixed(2)} ms without streams, ${worst(pushed).toFixed(2)} ms with ${push.streams} streams; ${push.received().toLocaleString()} events delivered to the streams meanwhile`,
        )
      } finally {
        await push.stop()
      }
    }

    console.log(
      `\nthroughput, first pages, ${CONCURRENCY} keep-alive connections over ${THROUGHPUT_KEYS} keys, median of ${THROUGHPUT_ROUNDS} alternating rounds of ${THROUGHPUT_SECONDS} s (req/s)`,
    )
    const throughputRows: Array<Record<string, string>> = []
    const metricsRatios: number[] = []
    for (const c of served) {
      // A snapshot is computed once per server before its rounds: the metrics-on server has not
      // computed it yet, and the others' caches (SNAPSHOT_CACHE_BYTES in all) may have let it go
      // for the later snapshots.
      if (c.snapshot)
        for (const server of [full, withMetrics, floor])
          await get(server.port, c.first, server === floor ? {} : auth)
      // One untimed round of each server before the first case: the latency rounds ran one
      // request at a time, and the code that serves sixteen connections over four keys is warmed
      // here, not in the first case's measured rounds (which the order of the cases would decide).
      if (c === served[0])
        for (const server of [full, withMetrics, floor])
          await throughput(server, c.first, server === floor ? [{}] : clients)
      const fullRounds: ThroughputRound[] = []
      const metricsRates: number[] = []
      const floorRounds: ThroughputRound[] = []
      for (let round = 0; round < THROUGHPUT_ROUNDS; round++) {
        fullRounds.push(await throughput(full, c.first, clients))
        metricsRates.push((await throughput(withMetrics, c.first, clients)).rate)
        floorRounds.push(await throughput(floor, c.first, [{}]))
      }
      const median = (values: number[]) => percentile(values, 50)
      const fullRate = median(fullRounds.map((r) => r.rate))
      const metricsRate = median(metricsRates)
      const floorRate = median(floorRounds.map((r) => r.rate))
      /** A CPU figure's median round, full stack · floor. */
      const cpu = (of: (r: ThroughputRound) => number) =>
        `${median(fullRounds.map(of)).toFixed(0)} · ${median(floorRounds.map(of)).toFixed(0)}`
      metricsRatios.push(metricsRate / fullRate)
      throughputRows.push({
        endpoint: c.name,
        'full stack': fullRate.toFixed(0),
        floor: floorRate.toFixed(0),
        ratio: `${((fullRate / floorRate) * 100).toFixed(0)} %`,
        'server CPU µs/req, full · floor': cpu((r) => r.cpuPerRequest),
        'load generator': cpu((r) => r.loadGeneratorPerRequest),
        PostgreSQL: cpu((r) => r.postgresPerRequest),
        machine: cpu((r) => r.machinePerRequest),
        'metrics on': metricsRate.toFixed(0),
        'on/off': `${((metricsRate / fullRate) * 100).toFixed(1)} %`,
      })
    }
    console.table(throughputRows)
    // Over all endpoints (geometric mean): one endpoint's round is noisy on a shared machine, the set much less.
    const metricsRatio = Math.exp(
      metricsRatios.reduce((sum, r) => sum + Math.log(r), 0) / metricsRatios.length,
    )

    const instructionRows = INSTRUCTION_REQUESTS > 0 ? await instructionCounts(url, served, clients) : []
    if (instructionRows.length > 0) {
      console.log(
        `\ninstructions per request (callgrind), first pages, ${INSTRUCTION_REQUESTS} requests over 4 connections after ${INSTRUCTION_REQUESTS} untimed ones, each server on its own`,
      )
      console.table(instructionRows)
    }

    const worstP95 = Math.max(
      ...Object.values(fullLatency)
        .filter((r) => !r.failed)
        .flatMap((r) => [r.first[1], ...(r.deep ? [r.deep[1]] : [])]),
    )
    const worstRatio = Math.min(...throughputRows.map((r) => Number.parseFloat(r.ratio!)))
    console.log(
      `\nworst p95 ${worstP95.toFixed(2)} ms (target < 10 ms); lowest full-stack/floor ratio ${worstRatio} % (target ≥ 80 % on the database endpoints)`,
    )
    console.log(
      `metrics on/off throughput ${(metricsRatio * 100).toFixed(1)} % over all endpoints (geometric mean; target ≥ 97 %, i.e. < 3 % lost)`,
    )
    const out = path.join(HERE, 'results')
    mkdirSync(out, { recursive: true })
    writeFileSync(
      path.join(out, apiResultsFile(scale)),
      JSON.stringify(
        {
          at: new Date().toISOString(),
          samples: LATENCY_SAMPLES,
          concurrency: CONCURRENCY,
          latency: rows,
          snapshotsFirstRequest: coldRows,
          pagedHolders: paged,
          throughput: throughputRows,
          instructions: instructionRows,
          metricsOnOffRatio: metricsRatio,
        },
        null,
        2,
      ),
    )
  } finally {
    full.stop()
    withMetrics.stop()
    floor.stop()
    agent.destroy()
    // An account holds at most 25 active keys: each run gives its key back.
    for (const { key } of keys) await revokeApiKey(db, actor, { keyId: BigInt(key.id) })
    await db.close()
  }
}

/**
 * 5. Instructions per request (BENCH_INSTRUCTIONS=N): each server in turn under callgrind, which
 * counts the instructions it runs (its JIT-compiled code, the garbage collector and Node.js
 * included; the kernel and the database not), switched on only after N untimed requests have
 * warmed the code. Throughput on a shared 2-core virtual machine moves with the neighbours' load
 * and with cache and scheduling effects; the count of the same work moves less, though still by
 * up to a quarter between runs, as JIT tiering and collections fall differently (bench/RESULTS.md).
 */
async function instructionCounts(
  url: string,
  cases: Case[],
  clients: Record<string, string>[],
): Promise<Array<Record<string, string>>> {
  if (!hasValgrind()) throw new Error('BENCH_INSTRUCTIONS needs valgrind (apt-get install -y valgrind)')
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-api-callgrind-'))
  const rows: Array<Record<string, string>> = []
  try {
    for (const c of cases) {
      const count = async (kind: ServerKind, headers: Record<string, string>[]) => {
        const out = path.join(dir, `${kind}.out`)
        const server = await startChild(kind, url, out)
        const load = async (n: number) => {
          let left = n
          await Promise.all(
            [0, 1, 2, 3].map(async (i) => {
              while (left-- > 0) {
                const status = await get(server.port, c.first, headers[i % headers.length]!)
                if (status !== 200) throw new Error(`${c.first}: HTTP ${status}`)
              }
            }),
          )
        }
        try {
          await load(INSTRUCTION_REQUESTS)
          instrument(server.pid, true)
          await load(INSTRUCTION_REQUESTS)
          instrument(server.pid, false)
        } finally {
          await server.exit()
        }
        return countedInstructions(out) / INSTRUCTION_REQUESTS
      }
      const full = await count('full', clients)
      const floor = await count('floor', [{}])
      rows.push({
        endpoint: c.name,
        'full stack': Math.round(full).toLocaleString('en'),
        floor: Math.round(floor).toLocaleString('en'),
        'floor / full': `${((floor / full) * 100).toFixed(0)} %`,
      })
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  return rows
}

/** Where a run at one scale writes its figures (bench/cost.ts reads them). */
export const apiResultsFile = (scale: number) => (scale === 1 ? 'api.json' : `api-s${scale}.json`)

const serveAt = process.argv.indexOf('--serve')
if (serveAt !== -1) {
  void serve(process.argv[serveAt + 1] as ServerKind, process.argv[serveAt + 2]!)
} else if (import.meta.url === `file://${process.argv[1]}`) {
  main().then(
    () => process.exit(0),
    (err) => {
      console.error(err)
      process.exit(1)
    },
  )
}
