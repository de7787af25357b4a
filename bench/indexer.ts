/**
 * npm run bench:indexer — indexer throughput on a local devnet.
 *
 * Builds an anvil chain with >= 200,000 ERC-721 transfers across 50 collections
 * (batch mints and batch moves), backfills it with the real indexer process
 * (bundled and started as `npm start` does it, src/indexer/launch.ts; metadata queue on) into a fresh
 * PostgreSQL schema, then measures head-follow latency: time from a new block
 * being mined to its transfer being in the database.
 *
 * Env: DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres),
 * BENCH_COLLECTIONS (50), BENCH_TRANSFERS_PER_COLLECTION (4,000), BENCH_FOLLOW_SAMPLES (40),
 * BENCH_LOG (a file that receives the indexer's log lines).
 */
import { spawn } from 'node:child_process'
import { appendFileSync } from 'node:fs'
import { mkdtemp } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import pg from 'pg'
import type { Address, Hex } from 'viem'
import { buildIndexer } from '@/indexer/launch'
import { startTestChain } from '@/indexer/test/chain'
import { urlWithSchema } from '@/server/db/connection-url'
import { migrate } from '@/server/db/migrate'
import { trackPeakRss } from './peak-rss'
import { runPonder } from './ponder-run'

const serverUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const COLLECTIONS = Number(process.env.BENCH_COLLECTIONS ?? 50)
const PER_COLLECTION = Number(process.env.BENCH_TRANSFERS_PER_COLLECTION ?? 4_000)
const SAMPLES = Number(process.env.BENCH_FOLLOW_SAMPLES ?? 40)
const MINT_BATCH = 500

const log = (msg: string) => process.stdout.write(`[bench] ${msg}\n`)
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

async function buildChain() {
  const chain = await startTestChain()
  await chain.clients.test.request({ method: 'evm_setBlockGasLimit', params: ['0x3b9aca00'] } as never)
  const [deployer, ...holders] = chain.accounts
  const started = performance.now()
  const collections: Address[] = []
  let firstBlock = 0n
  for (let c = 0; c < COLLECTIONS; c++) {
    const deployed = await chain.deploy('TestNFT', [`Bench ${c}`, `B${c}`, 'data:application/json,{}'])
    if (c === 0) firstBlock = deployed.block
    collections.push(deployed.address)
  }
  let transfers = 0
  let last: Hex = '0x'
  const mints = Math.round(PER_COLLECTION * 0.75)
  for (const [c, address] of collections.entries()) {
    const owner = holders[c % holders.length]!
    for (let first = 0; first < mints; first += MINT_BATCH) {
      const quantity = Math.min(MINT_BATCH, mints - first)
      last = await chain.send(address, 'TestNFT', 'mintBatch', [owner, BigInt(first), BigInt(quantity)])
      transfers += quantity
    }
    const moves = PER_COLLECTION - mints
    for (let first = 0; first < moves; first += MINT_BATCH) {
      const quantity = Math.min(MINT_BATCH, moves - first)
      const to = holders[(c + 1 + first / MINT_BATCH) % holders.length]!
      last = await chain.send(
        address,
        'TestNFT',
        'moveBatch',
        [owner, to, BigInt(first), BigInt(quantity)],
        owner,
      )
      transfers += quantity
    }
  }
  const receipt = await chain.clients.public.waitForTransactionReceipt({ hash: last })
  if (receipt.status !== 'success') throw new Error('chain generation failed')
  const head = await chain.head()
  log(`chain: ${transfers} transfers in ${COLLECTIONS} collections, ${head} blocks, built in ${s(started)}`)
  return { chain, collections, firstBlock, transfers, head, deployer: deployer! }
}

const s = (since: number) => `${((performance.now() - since) / 1000).toFixed(1)}s`

async function main() {
  const { chain, collections, firstBlock, transfers, head, deployer } = await buildChain()
  const schema = `bench_indexer_${Date.now()}`
  const url = urlWithSchema(serverUrl, schema)
  await migrate(url)
  const pool = new pg.Pool({
    connectionString: serverUrl,
    options: `-c search_path=${schema},public`,
    max: 4,
  })
  const mediaDir = await mkdtemp(path.join(os.tmpdir(), 'bench-media-'))
  const root = path.resolve(import.meta.dirname, '..')
  // Bundled as `npm start` bundles it; the clock starts at the process start, as for Ponder.
  const indexer = await buildIndexer(root)
  const child = spawn(process.execPath, indexer, {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: url,
      RPC_URL: chain.anvil.rpcUrl,
      CONFIRMATIONS: '2',
      MEDIA_DIR: mediaDir,
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const progress: string[] = []
  child.stdout.on('data', (chunk: Buffer) => {
    if (process.env.BENCH_LOG) appendFileSync(process.env.BENCH_LOG, chunk)
    for (const line of chunk.toString().split('\n'))
      if (line.includes('backfill at block')) progress.push(line)
  })
  const rss = trackPeakRss(child.pid!)

  try {
    const started = performance.now()
    const count = async () =>
      (await pool.query('SELECT count(*)::int AS n FROM transfers')).rows[0].n as number
    for (;;) {
      const { rows } = await pool.query('SELECT last_indexed_block::text AS b FROM indexer_state')
      if (rows[0]?.b && BigInt(rows[0].b) >= head) break
      if (child.exitCode !== null) throw new Error(`indexer exited with ${child.exitCode}`)
      await sleep(100)
    }
    const seconds = (performance.now() - started) / 1000
    const indexed = await count()
    if (indexed !== transfers) throw new Error(`indexed ${indexed} transfers, the chain has ${transfers}`)
    log(`backfill: ${indexed} transfers, ${head} blocks in ${seconds.toFixed(1)}s (process start included)`)
    const ourRate = indexed / seconds
    log(`backfill: ${Math.round(ourRate)} events/s, ${Math.round(Number(head) / seconds)} blocks/s`)
    for (const line of progress.slice(-2)) log(`indexer said: ${JSON.parse(line).msg}`)

    // Head-follow latency: block mined -> its transfer committed. "Mined" is when the node
    // first reports the block (eth_blockNumber, polled every 2 ms): anvil answers
    // eth_sendTransaction before its miner has made the block visible, which took 150-400 ms
    // with the metadata queue's eth_calls in flight. From the submission is printed too.
    const fromMined: number[] = []
    const fromSubmitted: number[] = []
    for (let i = 0; i < SAMPLES; i++) {
      const before = await chain.head()
      const hash = await chain.send(collections[i % collections.length]!, 'TestNFT', 'mint', [
        deployer,
        BigInt(1_000_000 + i),
      ])
      const submittedAt = performance.now()
      while ((await chain.head()) === before) await sleep(2)
      const minedAt = performance.now()
      for (;;) {
        const { rows } = await pool.query('SELECT 1 FROM transfers WHERE transaction_hash = $1', [hash])
        if (rows.length > 0) break
        await sleep(5)
      }
      fromMined.push(performance.now() - minedAt)
      fromSubmitted.push(performance.now() - submittedAt)
      await sleep(150 + Math.random() * 300)
    }
    const percentiles = (samples: number[]) => {
      const sorted = [...samples].sort((a, b) => a - b)
      const pct = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
      return `p50 ${pct(50).toFixed(0)} ms, p95 ${pct(95).toFixed(0)} ms`
    }
    log(
      `head-follow latency over ${SAMPLES} blocks (poll interval 0.5 s), block mined -> row visible: ${percentiles(fromMined)}`,
    )
    log(`  from the transaction's submission: ${percentiles(fromSubmitted)}`)
    log(`peak RSS of the indexer process: ${(rss.peakKb() / 1024).toFixed(0)} MiB`)

    // The same backfill with Ponder: same chain (up to the backfill head), same PostgreSQL server.
    rss.stop()
    child.kill('SIGTERM')
    await new Promise((r) => child.once('exit', r))
    if (process.env.BENCH_PONDER === '0') {
      log('ponder: skipped (BENCH_PONDER=0)')
      return
    }
    // Ponder treats the last 30 blocks of chain 31337 as unfinalized and follows them live; mine empty
    // blocks past the backfill head so that all of Ponder's run is a historical backfill like ours.
    // One block per request: on the 200,000-token state a single 64-block anvil_mine outlasts viem's timeout.
    for (let b = await chain.head(); b <= head + 31n; b++) await chain.clients.test.mine({ blocks: 1 })
    log('ponder: backfilling the same chain with bench/ponder')
    const ponder = await runPonder(
      {
        serverUrl,
        rpcUrl: chain.anvil.rpcUrl,
        chainId: 31337,
        addresses: collections,
        startBlock: firstBlock,
        endBlock: head,
        expectedTransfers: transfers,
      },
      log,
    )
    if (!ponder.ok) {
      log(`ponder: no figure, ${ponder.reason}`)
      log('ours / ponder: not measured')
    } else {
      const ponderRate = ponder.events / ponder.seconds
      log(
        `ponder ${ponder.version}: ${ponder.events} transfers in ${ponder.seconds.toFixed(1)}s (process start included), ${Math.round(ponderRate)} events/s, peak RSS ${(ponder.peakRssKb / 1024).toFixed(0)} MiB`,
      )
      log(`ours / ponder: ${(ourRate / ponderRate).toFixed(2)}x (target >= 2x)`)
    }
  } finally {
    rss.stop()
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM')
      await new Promise((r) => child.once('exit', r))
    }
    await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
    await pool.end()
    await chain.stop()
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`bench failed: ${err instanceof Error ? err.stack : err}\n`)
    process.exit(1)
  },
)
