/**
 * `npm run bench:seed`: a mainnet-scale index for the API benchmark, built
 * with COPY into a dedicated database (default `nft_bench` on DATABASE_URL's
 * server; BENCH_DATABASE_URL to choose another).
 *
 *   scale 1 (default): 20,000 collections, 1,000,000 tokens (500,000 in one
 *   collection), 10,000,000 transfers, one owner with 100,000 tokens; one
 *   collection of 10,000 tokens with 8 trait types (TRAITS, traitAttributes)
 *   with its stored rarity and trait counts, as the indexer's rarity worker
 *   leaves them.
 *   `--scale 0.001` builds the same shape a thousand times smaller (smoke test).
 *
 * The history is generated in chain order (5 transfers per 12-second block,
 * ids in chain order, a mint every tenth event, transfers of random held
 * tokens, about 0.5 % burns), and tokens and collection counters are derived
 * from it, so the rows look like the indexer's. Indexes are dropped during
 * the load and rebuilt after it, then the tables are vacuumed and analyzed.
 */

import pg from 'pg'
import { migrate } from '@/db/migrate'
import { copyRows, copyText } from '@/indexer/store/pg-copy'
import { recomputeCollectionRarity } from '@/indexer/store/rarity'
import { mulberry32 } from '@/lib/random'

export interface SeedOptions {
  url: string
  scale: number
  network?: string
  log?: (line: string) => void
}

export interface SeedShape {
  collections: number
  tokens: number
  bigTokens: number
  /** Tokens of TRAITS, the collection with traits. */
  traitTokens: number
  transfers: number
  whaleTokens: number
}

export const BENCH_NETWORK = 'mainnet'
export const GENESIS = 1_600_000_000
export const EVENTS_PER_BLOCK = 5

export function shapeFor(scale: number): SeedShape {
  const tokens = Math.max(100, Math.round(1_000_000 * scale))
  return {
    collections: Math.max(20, Math.round(20_000 * scale)),
    tokens,
    bigTokens: Math.floor(tokens / 2),
    traitTokens: Math.min(10_000, Math.floor(tokens / 5)),
    transfers: Math.max(1000, Math.round(10_000_000 * scale)),
    whaleTokens: Math.floor(tokens / 10),
  }
}

/** Deterministic 20-byte addresses. */
export const collectionAddress = (i: number) => `0xc0${i.toString(16).padStart(38, '0')}`
export const ownerAddress = (i: number) => `0xa0${i.toString(16).padStart(38, '0')}`
export const WHALE = ownerAddress(0)
export const BIG = collectionAddress(0)
/** The collection with 8 trait types (traitAttributes). */
export const TRAITS = collectionAddress(1)
const ZERO = '0x0000000000000000000000000000000000000000'
const OWNERS = 200_000

/**
 * The 8 trait types of TRAITS, drawn per token (deterministic in its number):
 * each type's values by a Zipf-like law (value k about 1/(k+1) as frequent as
 * the first), so a few values are common and the last ones rare (well under
 * 1 %); Hat, Accessory and Special are missing from some tokens.
 */
export const TRAIT_TYPES: ReadonlyArray<{
  type: string
  values: ReadonlyArray<string | number>
  present: number
}> = [
  {
    type: 'Background',
    values: ['Blue', 'Red', 'Green', 'Yellow', 'Purple', 'Orange', 'Black', 'Gold'],
    present: 1,
  },
  {
    type: 'Body',
    values: ['Plain', 'Striped', 'Spotted', 'Robot', 'Zombie', 'Alien', 'Crystal', 'Ghost', 'Lava', 'Ice'],
    present: 1,
  },
  { type: 'Eyes', values: Array.from({ length: 20 }, (_, i) => `Eyes ${i + 1}`), present: 1 },
  { type: 'Mouth', values: Array.from({ length: 15 }, (_, i) => `Mouth ${i + 1}`), present: 1 },
  { type: 'Hat', values: Array.from({ length: 30 }, (_, i) => `Hat ${i + 1}`), present: 0.8 },
  { type: 'Clothes', values: Array.from({ length: 25 }, (_, i) => `Clothes ${i + 1}`), present: 0.97 },
  { type: 'Accessory', values: Array.from({ length: 12 }, (_, i) => `Accessory ${i + 1}`), present: 0.4 },
  { type: 'Level', values: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], present: 0.99 },
]

export function traitAttributes(n: number): Array<{ trait_type: string; value: string | number }> {
  const random = mulberry32(n * 7919 + 17)
  const out: Array<{ trait_type: string; value: string | number }> = []
  for (const { type, values, present } of TRAIT_TYPES) {
    if (random() >= present) {
      random()
      continue
    }
    const weights = values.map((_, k) => 1 / (k + 1))
    let r = random() * weights.reduce((a, b) => a + b, 0)
    let k = 0
    while (k < values.length - 1 && r >= weights[k]!) r -= weights[k++]!
    out.push({ trait_type: type, value: values[k]! })
  }
  return out
}

const iso = (unixSeconds: number) => new Date(unixSeconds * 1000).toISOString()

export async function seed(options: SeedOptions): Promise<SeedShape> {
  const log = options.log ?? ((line: string) => console.log(line))
  const network = options.network ?? BENCH_NETWORK
  const shape = shapeFor(options.scale)
  const started = performance.now()
  const step = (what: string) => log(`  ${((performance.now() - started) / 1000).toFixed(1)} s  ${what}`)

  await migrate(options.url)
  const pool = new pg.Pool({ connectionString: options.url, max: 3 })
  const client = await pool.connect()
  try {
    await client.query("SET maintenance_work_mem = '512MB'")
    await client.query('SET synchronous_commit = off')
    // No triggers during the load (the rarity marks): every collection is computed after it.
    await client.query('SET session_replication_role = replica')
    await client.query(
      'TRUNCATE transfers, tokens, token_documents, collections, media_sources, media_objects, indexer_state, indexed_ranges, token_rarity, collection_rarity, rarity_dirty RESTART IDENTITY CASCADE',
    )
    // Secondary indexes go during the load and come back after it.
    const { rows: indexes } = await client.query<{ indexname: string; indexdef: string }>(
      `SELECT i.indexname, i.indexdef FROM pg_indexes i
        WHERE i.schemaname = current_schema() AND i.tablename IN ('transfers', 'tokens', 'collections')
          AND i.indexname NOT LIKE '%_pkey'`,
    )
    for (const index of indexes) await client.query(`DROP INDEX ${index.indexname}`)
    step(`dropped ${indexes.length} indexes`)

    // ── the history, in chain order ──
    const random = mulberry32(42)
    const tokenCollection = new Int32Array(shape.tokens)
    const tokenNumber = new Int32Array(shape.tokens)
    const perCollection = new Int32Array(shape.collections)
    for (let t = 0; t < shape.tokens; t++) {
      const rest = t - shape.bigTokens - shape.traitTokens
      const c = t < shape.bigTokens ? 0 : rest < 0 ? 1 : 2 + (rest % (shape.collections - 2))
      tokenCollection[t] = c
      tokenNumber[t] = ++perCollection[c]!
    }
    const owner = new Int32Array(shape.tokens).fill(-1)
    const transferCount = new Int32Array(shape.tokens)
    const mintedBlock = new Int32Array(shape.tokens)
    const lastBlock = new Int32Array(shape.tokens)
    const burned = new Uint8Array(shape.tokens)
    const firstBlock = new Int32Array(shape.collections).fill(-1)
    const movable = new Int32Array(shape.tokens)
    let movableCount = 0
    let minted = 0
    // A permutation of token indexes: mints interleave collections.
    const stride = 7919
    const mintOrder = (i: number) => (i * stride) % shape.tokens

    function* transfers(): Generator<string> {
      for (let e = 0; e < shape.transfers; e++) {
        const block = 1 + Math.floor(e / EVENTS_PER_BLOCK)
        const logIndex = e % EVENTS_PER_BLOCK
        let token: number
        let from: string
        let to: string
        if ((e % 10 === 0 || movableCount === 0) && minted < shape.tokens) {
          token = mintOrder(minted++)
          const whale = token % 10 === 3 && minted <= shape.tokens
          const holder = whale ? 0 : 1 + Math.floor(random() * OWNERS)
          owner[token] = holder
          mintedBlock[token] = block
          from = ZERO
          to = ownerAddress(holder)
          // The whale keeps what it gets: its holdings never move.
          if (!whale) movable[movableCount++] = token
          const c = tokenCollection[token]!
          if (firstBlock[c] === -1) firstBlock[c] = block
        } else {
          const at = Math.floor(random() * movableCount)
          token = movable[at]!
          from = ownerAddress(owner[token]!)
          if (random() < 0.005) {
            to = ZERO
            burned[token] = 1
            owner[token] = -1
            movable[at] = movable[--movableCount]!
          } else {
            const holder = 1 + Math.floor(random() * OWNERS)
            owner[token] = holder
            to = ownerAddress(holder)
          }
        }
        transferCount[token]!++
        lastBlock[token] = block
        const type = from === ZERO ? 'mint' : to === ZERO ? 'burn' : 'transfer'
        const tx = `0x${e.toString(16).padStart(64, '0')}`
        const blockHash = `0x${block.toString(16).padStart(64, 'b')}`
        yield `${collectionAddress(tokenCollection[token]!)}\t${tokenNumber[token]}\t${from}\t${to}\t${type}\t${block}\t${blockHash}\t${iso(GENESIS + block * 12)}\t${tx}\t${logIndex}\t0\trpc\n`
      }
    }
    await copyRows(
      client,
      `COPY transfers (collection_address, token_id, from_address, to_address, event_type, block_number, block_hash,
                       block_timestamp, transaction_hash, log_index, batch_index, source) FROM STDIN`,
      transfers(),
    )
    const lastBlockNumber = 1 + Math.floor((shape.transfers - 1) / EVENTS_PER_BLOCK)
    step(`${shape.transfers.toLocaleString()} transfers`)

    function* tokens(): Generator<string> {
      for (let t = 0; t < shape.tokens; t++) {
        if (transferCount[t] === 0) continue
        const c = tokenCollection[t]!
        const n = tokenNumber[t]!
        const holder = burned[t] ? ZERO : ownerAddress(owner[t]!)
        // The collection with traits: nearly every token's metadata fetched (1 in 50 still pending).
        const withMeta = c === 1 ? n % 50 !== 0 : n % 3 !== 0
        const uri = withMeta ? `ipfs://bafybench${c}/${n}` : '\\N'
        const name = withMeta ? `Token ${n}` : '\\N'
        const image = withMeta ? `ipfs://bafybench${c}/${n}.png` : '\\N'
        const attributes = c === 1 && withMeta ? copyText(JSON.stringify(traitAttributes(n))) : '\\N'
        yield `${collectionAddress(c)}\t${n}\t${holder}\t${burned[t] ? 't' : 'f'}\t${transferCount[t]}\t${mintedBlock[t]}\t${lastBlock[t]}\t${uri}\t${withMeta ? 'ok' : 'pending'}\t${name}\t${image}\t${attributes}\n`
      }
    }
    await copyRows(
      client,
      `COPY tokens (collection_address, token_id, current_owner, is_burned, transfer_count, minted_block,
                    last_transfer_block, metadata_uri, metadata_status, name, image_url, attributes) FROM STDIN`,
      tokens(),
    )
    step(`${minted.toLocaleString()} tokens`)

    const words = ['Apes', 'Punks', 'Birds', 'Glyphs', 'Cats', 'Worlds', 'Robots', 'Pioneers']
    function* collections(): Generator<string> {
      for (let c = 0; c < shape.collections; c++) {
        const listed = c % 20 !== 7
        const name = listed ? `${c === 0 ? 'Big' : 'Bench'} ${words[c % words.length]} ${c}` : ''
        const symbol = listed ? `B${c}` : '\\N'
        const created = iso(
          GENESIS + (firstBlock[c] === -1 ? lastBlockNumber : firstBlock[c]!) * 12 + (c % 12),
        )
        const first = firstBlock[c] === -1 ? '\\N' : String(firstBlock[c])
        yield `${collectionAddress(c)}\t${name}\t${symbol}\t${listed ? 't' : 'f'}\tok\t${first}\t${first}\t${created}\t${ownerAddress(OWNERS + 1)}\n`
      }
    }
    await copyRows(
      client,
      `COPY collections (address, name, symbol, listed, metadata_status, deploy_block, first_seen_block, created_at,
                         creator_address) FROM STDIN`,
      collections(),
    )
    step(`${shape.collections.toLocaleString()} collections`)

    for (const index of indexes) {
      await client.query(index.indexdef)
      step(`index ${index.indexname}`)
    }
    await client.query(`
      UPDATE collections c SET total_supply = s.supply, unique_holders = s.holders, total_transfers = s.transfers
        FROM (SELECT t.collection_address, count(*) FILTER (WHERE NOT t.is_burned) AS supply,
                     count(DISTINCT t.current_owner) FILTER (WHERE NOT t.is_burned) AS holders,
                     sum(t.transfer_count) AS transfers
                FROM tokens t GROUP BY t.collection_address) s
       WHERE c.address = s.collection_address`)
    step('collection counters')
    await client.query(
      `INSERT INTO indexer_state (network, chain_id, start_block, last_seen_block, last_indexed_block,
                                  last_confirmed_block, coverage_status, coverage_start_block, coverage_verified_at)
       VALUES ($1, 1, 0, $2, $2, $3, 'complete', 0, now())`,
      [network, lastBlockNumber, lastBlockNumber - 12],
    )
    await client.query('INSERT INTO indexed_ranges (from_block, to_block) VALUES (0, $1)', [lastBlockNumber])
    await client.query('SET session_replication_role = origin')
    // The stored rarity and trait counts of TRAITS, as the rarity worker computes them. The other
    // collections read as not computed yet (their ranks are not benchmarked).
    const rankedAt = performance.now()
    const { tokens: ranked } = await recomputeCollectionRarity(pool, TRAITS)
    step(
      `rarity of ${TRAITS}: ${ranked.toLocaleString()} tokens in ${Math.round(performance.now() - rankedAt)} ms`,
    )
    await client.query(
      'VACUUM (ANALYZE) collections, tokens, transfers, token_rarity, collection_rarity, rarity_dirty',
    )
    step('vacuum analyze')
  } finally {
    client.release()
    await pool.end()
  }
  return shape
}

/** DATABASE_URL's server, database nft_bench (or BENCH_DATABASE_URL). */
/**
 * The database of one scale: `nft_bench` for scale 1, `nft_bench_s3` for
 * scale 3 and so on, so that several scales can be compared side by side
 * (bench/cost.ts). BENCH_DATABASE_URL names the scale-1 database instead.
 */
export function benchDatabaseUrl(scale = 1): string {
  if (process.env.BENCH_DATABASE_URL && scale === 1) return process.env.BENCH_DATABASE_URL
  const base = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
  const url = new URL(base)
  url.pathname = scale === 1 ? '/nft_bench' : `/nft_bench_s${String(scale).replace('.', '_')}`
  url.searchParams.delete('options')
  url.searchParams.delete('schema')
  return url.toString()
}

export async function ensureDatabase(url: string): Promise<void> {
  const target = new URL(url)
  const name = decodeURIComponent(target.pathname.slice(1))
  const admin = new URL(url)
  admin.pathname = '/postgres'
  const client = new pg.Client({ connectionString: admin.toString() })
  await client.connect()
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])
    if (!rowCount) await client.query(`CREATE DATABASE "${name.replaceAll('"', '""')}"`)
  } finally {
    await client.end()
  }
}

/** `--scale N` of a bench command line; 1 without it. */
export function scaleArgument(args: string[]): number {
  const at = args.indexOf('--scale')
  const scale = at === -1 ? 1 : Number(args[at + 1])
  if (!(scale > 0)) throw new Error('--scale must be a positive number')
  return scale
}

async function main() {
  const scale = scaleArgument(process.argv.slice(2))
  const url = benchDatabaseUrl(scale)
  await ensureDatabase(url)
  const shape = shapeFor(scale)
  console.log(
    `bench:seed → ${url.replace(/\/\/[^@]*@/, '//')} : ${shape.collections} collections, ${shape.tokens} tokens (${shape.bigTokens} in ${BIG}), ${shape.transfers} transfers, ${shape.whaleTokens} held by ${WHALE}`,
  )
  const started = performance.now()
  await seed({ url, scale })
  console.log(`done in ${((performance.now() - started) / 1000).toFixed(0)} s`)
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((err) => {
    console.error(err)
    process.exit(1)
  })
}
