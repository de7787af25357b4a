/**
 * The indexer read through hosted-provider faults (src/test/provider-proxy/)
 * and checked against the chain itself: a history of mints, moves, burns,
 * ERC-2309 ranges and ERC-1155 batches, an indexer run that waits until everything up to the
 * confirmed block is verified, and a watcher that fails the test if the head
 * or the confirmed block ever ran backwards.
 */
import type pg from 'pg'
import pino from 'pino'
import type { Address } from 'viem'
import { expect, onTestFailed } from 'vitest'
import type { Config } from '@/config/env'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import { NO_FAULTS, type ProviderFaults, type ProviderProxy, startProviderProxy } from '@/test/provider-proxy'
import type { SyncOptions } from '../sync/syncer'
import type { TestChain } from './chain'
import { type RunningIndexer, startIndexer, testConfig } from './indexer'
import { expectDatabaseMatchesChain, type NftContracts, waitFor } from './oracle'

export interface History {
  nft: Address
  consecutive: Address
  /** An ERC-1155 (TestEditions). */
  editions: Address
  nfts: NftContracts
  nextId: bigint
}

/**
 * About 80 blocks and 600 transfers of every kind, spread so that ranges and batches split them;
 * ERC-1155 batch mints, batch transfers and batch burns among them (ids 1 to 5 held by alice).
 */
export async function buildHistory(chain: TestChain): Promise<History> {
  const [alice, bob, carol] = chain.accounts
  const nft = (await chain.deploy('TestNFT', ['Provider Apes', 'PAPE', ''])).address
  const consecutive = (
    await chain.deploy('TestConsecutive', [
      [alice, bob],
      [40n, 25n],
    ])
  ).address
  const editions = (await chain.deploy('TestEditions', [''])).address
  await chain.call(editions, 'TestEditions', 'mintBatch', [
    alice,
    [1n, 2n, 3n, 4n, 5n],
    [1000n, 1000n, 1000n, 1000n, 1000n],
  ])
  for (let i = 0; i < 40; i++) {
    await chain.call(nft, 'TestNFT', 'mintBatch', [i % 2 ? alice : bob, BigInt(i * 100), 12n])
    if (i % 4 === 1)
      await chain.call(nft, 'TestNFT', 'move', [alice, carol, BigInt((i - 1) * 100 + 100)], alice)
    if (i % 5 === 2) await chain.call(nft, 'TestNFT', 'burn', [BigInt(i * 100 + 3)], alice)
    if (i % 10 === 3)
      await chain.call(consecutive, 'TestConsecutive', 'move', [alice, carol, BigInt(i)], alice)
    const id = BigInt(100 + i)
    if (i % 4 === 0)
      await chain.call(editions, 'TestEditions', 'mintBatch', [bob, [id, 1n, id], [4n, 1n, 2n]])
    if (i % 4 === 1)
      await chain.call(
        editions,
        'TestEditions',
        'safeBatchTransferFrom',
        [alice, carol, [2n, 3n], [5n, 1n], '0x'],
        alice,
      )
    if (i % 8 === 2) await chain.call(editions, 'TestEditions', 'burnBatch', [bob, [id - 2n, 1n], [6n, 1n]])
  }
  return {
    nft,
    consecutive,
    editions,
    nfts: { standard: [nft, consecutive], legacy: [], multi: [editions] },
    nextId: 1_000_000n,
  }
}

/**
 * A mint, a move and a burn of fresh tokens (three logs, a block each), then an ERC-1155
 * batch: a mint, a transfer or a burn, in turn (a fourth block).
 */
export async function liveBlock(chain: TestChain, history: History): Promise<void> {
  const [alice, , carol] = chain.accounts
  const id = history.nextId
  history.nextId += 3n
  await chain.call(history.nft, 'TestNFT', 'mintBatch', [alice, id, 3n])
  await chain.call(history.nft, 'TestNFT', 'move', [alice, carol, id], alice)
  await chain.call(history.nft, 'TestNFT', 'burn', [id + 1n], alice)
  await multiBatch(chain, history, id)
}

/** One ERC-1155 batch, in turn by `id`: a mint of `id` and id 1, a batch transfer or a batch burn. */
export async function multiBatch(chain: TestChain, history: History, id: bigint): Promise<void> {
  const [alice, bob, carol] = chain.accounts
  const turn = (id / 3n) % 3n
  if (turn === 0n)
    await chain.call(history.editions, 'TestEditions', 'mintBatch', [carol, [id, 1n], [2n, 1n]])
  if (turn === 1n)
    await chain.call(
      history.editions,
      'TestEditions',
      'safeBatchTransferFrom',
      [alice, bob, [4n, 2n], [1n, 1n], '0x'],
      alice,
    )
  if (turn === 2n)
    await chain.call(history.editions, 'TestEditions', 'burnBatch', [alice, [3n, 5n], [1n, 1n]])
}

/** Samples indexer_state and records every step backwards of the head or the confirmed block. */
export function watchMonotonic(pool: pg.Pool, options: { confirmed?: boolean } = {}) {
  const backwards: string[] = []
  let last = { seen: -1n, confirmed: -1n }
  let stopped = false
  const loop = (async () => {
    while (!stopped) {
      const { rows } = await pool
        .query(
          'SELECT last_seen_block::text AS seen, last_confirmed_block::text AS confirmed FROM indexer_state',
        )
        .catch(() => ({ rows: [] as Array<{ seen: string; confirmed: string }> }))
      const row = rows[0]
      if (row) {
        const now = { seen: BigInt(row.seen), confirmed: BigInt(row.confirmed) }
        if (now.seen < last.seen) backwards.push(`last_seen_block ${last.seen} -> ${now.seen}`)
        if (options.confirmed !== false && now.confirmed < last.confirmed)
          backwards.push(`last_confirmed_block ${last.confirmed} -> ${now.confirmed}`)
        last = now
      }
      await new Promise((r) => setTimeout(r, 20))
    }
  })()
  return {
    backwards,
    async stop() {
      stopped = true
      await loop
    },
  }
}

/** Waits until every block up to the chain's confirmed block is indexed, verified and the coverage complete. */
export async function waitForVerified(
  pool: pg.Pool,
  chain: TestChain,
  confirmations = 2n,
  timeoutMs = 90_000,
) {
  const head = await chain.head()
  const hash = (await chain.clients.public.getBlock({ blockNumber: head })).hash
  await waitFor(
    async () => {
      const { rows } = await pool.query(
        `SELECT 1 FROM indexer_state s JOIN blocks b ON b.number = s.last_indexed_block
          WHERE b.number = $1 AND b.hash = $2 AND s.coverage_status = 'complete'
            AND s.last_verified_block >= $3 AND s.last_confirmed_block = $3`,
        [head.toString(), hash, (head - confirmations).toString()],
      )
      return rows.length > 0
    },
    timeoutMs,
    `block ${head} indexed and ${head - confirmations} verified`,
  )
}

const INFO = 30

/**
 * Counts the warn/info lines the indexer writes, by what they say. Debug lines
 * are kept too, not counted: a failing test prints the last lines (dumpOnFailure).
 */
export function lineRecorder() {
  const lines: Array<{ level: number; msg: string; [k: string]: unknown }> = []
  const logger = pino(
    { level: 'debug' },
    {
      write(line: string) {
        lines.push(JSON.parse(line))
      },
    },
  )
  const count = (pattern: RegExp) => lines.filter((l) => l.level >= INFO && pattern.test(l.msg)).length
  /** When the running test fails, its output ends with the indexer's last log lines. */
  const dumpOnFailure = (last = 80) =>
    onTestFailed(() => {
      const tail = lines.slice(-last).map((l) => JSON.stringify(l))
      process.stderr.write(`the indexer's last ${tail.length} log lines:\n${tail.join('\n')}\n`)
    })
  return { logger, lines, count, dumpOnFailure }
}

/** The fault rates hosted providers were measured with (one eth_getLogs answer in twenty leaves out a log). */
export const ALL_FAULTS: Partial<ProviderFaults> = {
  rateLimited: 0.02,
  badGateway: 0.01,
  dropConnection: 0.01,
  hang: 0.005,
  nonJson: 0.005,
  itemError: 0.02,
  lagging: 0.1,
  lagBlocks: 3,
  // Three blocks behind, past CONFIRMATIONS (2): a short answer reaches the ranges read.
  shortLogs: 0.1,
  duplicateAndReorder: 0.05,
  omitLog: 0.05,
}

export interface ProviderRun {
  db: TestDatabase
  proxies: ProviderProxy[]
  indexer: RunningIndexer
  log: ReturnType<typeof lineRecorder>
  watcher: ReturnType<typeof watchMonotonic>
  /** The indexer's configuration (what the web side reads status with). */
  config: Config
  /** Stops everything and asserts the database equals the chain and nothing ran backwards. */
  finish(): Promise<void>
}

/** Starts proxies in front of the chain, a fresh database and the indexer reading through the proxies. */
export async function runThroughProviders(
  chain: TestChain,
  history: History,
  proxies: Array<
    { faults?: Partial<ProviderFaults> } & Omit<Parameters<typeof startProviderProxy>[0], 'upstream'>
  >,
  options: {
    timeoutMs?: number
    sync?: Partial<SyncOptions>
    /** A repair below the confirmed block (stored rows a lying log index got wrong) withdraws confirmations. */
    confirmedMayDrop?: boolean
  } = {},
): Promise<ProviderRun> {
  const [db, ...started] = await Promise.all([
    createTestDatabase(),
    ...proxies.map((p, i) => startProviderProxy({ seed: 1000 + i, ...p, upstream: chain.anvil.rpcUrl })),
  ])
  const proxyList = started as ProviderProxy[]
  const log = lineRecorder()
  log.dumpOnFailure()
  const config = testConfig({
    DATABASE_URL: (db as TestDatabase).url,
    RPC_URL: proxyList.map((p) => p.url).join(','),
  })
  const watcher = watchMonotonic((db as TestDatabase).pool, { confirmed: !options.confirmedMayDrop })
  const indexer = startIndexer(config, (db as TestDatabase).pool, {
    metadata: { enabled: false },
    logger: log.logger,
    rpc: { timeoutMs: options.timeoutMs ?? 2_000 },
    sync: { initialRange: 8n, ...options.sync },
  })
  const run: ProviderRun = {
    db: db as TestDatabase,
    proxies: proxyList,
    indexer,
    log,
    watcher,
    config,
    async finish() {
      await indexer.stop()
      await watcher.stop()
      await Promise.all(proxyList.map((p) => p.stop()))
      try {
        await expectDatabaseMatchesChain(run.db.pool, chain.clients, history.nfts)
        expect(watcher.backwards).toEqual([])
      } finally {
        await run.db.drop()
      }
    },
  }
  return run
}

/** The indexer_state counters of a run. */
export async function verificationCounts(pool: pg.Pool) {
  const { rows } = await pool.query(
    'SELECT verification_mismatches::int AS mismatches, verification_repairs::int AS repairs FROM indexer_state',
  )
  return rows[0] as { mismatches: number; repairs: number }
}

/**
 * Backfill through the faults, then follow a few live blocks through them
 * too. Blocks above the confirmed block come from one read and may be wrong
 * while a fault lasts; so the faults then clear and the chain moves on until
 * every faulty read is confirmed, and thus verified.
 */
export async function indexThrough(run: ProviderRun, chain: TestChain, history: History, liveBlocks = 3) {
  await waitForVerified(run.db.pool, chain)
  for (let i = 0; i < liveBlocks; i++) await liveBlock(chain, history)
  await waitForVerified(run.db.pool, chain)
  for (const proxy of run.proxies) proxy.setFaults(NO_FAULTS)
  await liveBlock(chain, history)
  await waitForVerified(run.db.pool, chain)
}
