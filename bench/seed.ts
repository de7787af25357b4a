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
 *
 * ERC-1155 (docs/database.md, "ERC-1155"), on top of that ERC-721 history and
 * leaving it as it was (its rows, tokens and collections are the same; only
 * the transfers' ids interleave, in chain order): at scale 1, 100 ERC-1155
 * collections with 100,000 token ids and 1,000,000 transfer rows, one row per
 * id/value pair (TransferSingle, and TransferBatch whose rows carry their
 * position in the batch as batch_index), logged after each block's ERC-721
 * transfers. EDITION (token EDITION_TOKEN_ID) is an edition minted to 20,000
 * wallets, so its holders list has 1,000 pages of 20; WHALE_1155 holds 10,000
 * ids spread over every ERC-1155 collection. The rest: mints of new ids and
 * more of minted ones, transfers of whole or partial balances, 5 % burns. The
 * derived state is the indexer's (src/indexer/store/multi-token-state.ts):
 * token_balances rows of positive balances, tokens with current_owner the zero
 * address, total_supply (minted minus burned), is_burned = total_supply <= 0
 * and holder_count, collection_holders counting the ids each owner holds, and
 * the collection counters.
 *
 * collection_holders, for both standards as the indexer keeps it: the tokens
 * (ERC-721) or the ids with a positive balance (ERC-1155) each owner holds
 * per collection.
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
  /** ERC-1155 collections, token ids they may mint, and transfer rows (id/value pairs). */
  multiCollections: number
  multiTokens: number
  multiTransfers: number
  /** Wallets EDITION is minted to. */
  editionHolders: number
  /** ERC-1155 ids WHALE_1155 holds. */
  whale1155Tokens: number
}

export const BENCH_NETWORK = 'mainnet'
export const GENESIS = 1_600_000_000
export const EVENTS_PER_BLOCK = 5

export function shapeFor(scale: number): SeedShape {
  const tokens = Math.max(100, Math.round(1_000_000 * scale))
  const multiTokens = Math.max(100, Math.round(100_000 * scale))
  return {
    collections: Math.max(20, Math.round(20_000 * scale)),
    tokens,
    bigTokens: Math.floor(tokens / 2),
    traitTokens: Math.min(10_000, Math.floor(tokens / 5)),
    transfers: Math.max(1000, Math.round(10_000_000 * scale)),
    whaleTokens: Math.floor(tokens / 10),
    multiCollections: Math.max(3, Math.round(100 * scale)),
    multiTokens,
    multiTransfers: Math.max(1000, Math.round(1_000_000 * scale)),
    editionHolders: Math.max(20, Math.round(20_000 * scale)),
    whale1155Tokens: Math.floor(multiTokens / 10),
  }
}

/** Deterministic 20-byte addresses. */
export const collectionAddress = (i: number) => `0xc0${i.toString(16).padStart(38, '0')}`
export const ownerAddress = (i: number) => `0xa0${i.toString(16).padStart(38, '0')}`
const OWNERS = 200_000
export const WHALE = ownerAddress(0)
export const BIG = collectionAddress(0)
/** The collection with 8 trait types (traitAttributes). */
export const TRAITS = collectionAddress(1)
const ZERO = '0x0000000000000000000000000000000000000000'
export const multiCollectionAddress = (i: number) => `0xe1${i.toString(16).padStart(38, '0')}`
/** The popular ERC-1155 edition: token EDITION_TOKEN_ID of EDITION, held by editionHolders wallets. */
export const EDITION = multiCollectionAddress(0)
export const EDITION_TOKEN_ID = '1'
/** The wallet holding SeedShape.whale1155Tokens ERC-1155 ids, across every ERC-1155 collection. */
export const WHALE_1155 = ownerAddress(OWNERS + 2)

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

/** One id/value pair of an ERC-1155 log: holders by number (ownerAddress), -1 for the zero address. */
interface MultiRow {
  token: number
  from: number
  to: number
  amount: number
}

/**
 * The ERC-1155 history, in chain order, and the state it leaves as the
 * indexer folds it (src/indexer/store/multi-token-state.ts). Its own random
 * sequence, so the ERC-721 history is the same with or without it. The logs
 * are spread over blocks 1..`blocks` by their first row; `logs()` applies
 * each one to the state before it yields it.
 */
function multiTokenHistory(shape: SeedShape, blocks: number) {
  const random = mulberry32(1155)
  const T = shape.multiTokens
  const rowsWanted = shape.multiTransfers
  const whaleIds = shape.whale1155Tokens
  // Token t: collection floor(t * C / T), ids 1, 2, … within it; t = 0 is EDITION's EDITION_TOKEN_ID.
  const collection = new Int32Array(T)
  const number = new Int32Array(T)
  const perCollection = new Int32Array(shape.multiCollections)
  for (let t = 0; t < T; t++) {
    const c = Math.floor((t * shape.multiCollections) / T)
    collection[t] = c
    number[t] = ++perCollection[c]!
  }
  const supply = new Float64Array(T)
  const holders = new Int32Array(T)
  const transferCount = new Int32Array(T)
  const mintedBlock = new Int32Array(T)
  const lastBlock = new Int32Array(T)
  const firstBlock = new Int32Array(shape.multiCollections).fill(-1)
  // Holders 1..OWNERS, the whale OWNERS + 2: a (token, holder) pair is t * KEYS + holder.
  const KEYS = OWNERS + 3
  const whale = OWNERS + 2
  const balance = new Map<number, number>()
  // The pairs that can move (neither the edition nor the whale's), and each holder's tokens among them.
  const held: number[] = []
  const heldAt = new Map<number, number>()
  const tokensOf: Array<number[] | undefined> = []
  const minted: number[] = []
  const stride = 7919
  let nextNew = 0
  // Whale ids: t = 3, 13, 23, … (in every collection), first minted to the whale, which never moves them.
  const isWhaleId = (t: number) => t % 10 === 3 && t < 10 * whaleIds
  const newId = (): number | undefined => {
    while (nextNew < T) {
      const t = (nextNew++ * stride) % T
      if (t !== 0 && !isWhaleId(t)) return t
    }
    return undefined
  }

  const credit = (t: number, h: number, amount: number) => {
    const key = t * KEYS + h
    const before = balance.get(key) ?? 0
    balance.set(key, before + amount)
    if (before !== 0) return
    holders[t]!++
    if (t === 0 || h === whale) return
    heldAt.set(key, held.length)
    held.push(key)
    const list = tokensOf[h]
    if (list) list.push(t)
    else tokensOf[h] = [t]
  }
  const debit = (t: number, h: number, amount: number) => {
    const key = t * KEYS + h
    const after = balance.get(key)! - amount
    if (after > 0) {
      balance.set(key, after)
      return
    }
    balance.delete(key)
    holders[t]!--
    const at = heldAt.get(key)!
    const last = held.pop()!
    if (last !== key) {
      held[at] = last
      heldAt.set(last, at)
    }
    heldAt.delete(key)
    const list = tokensOf[h]!
    list[list.indexOf(t)] = list[list.length - 1]!
    list.pop()
  }
  const apply = (block: number, rows: MultiRow[]) => {
    for (const { token: t, from, to, amount } of rows) {
      transferCount[t]!++
      lastBlock[t] = block
      if (from === -1) {
        supply[t]! += amount
        if (mintedBlock[t] === 0) {
          mintedBlock[t] = block
          if (t !== 0) minted.push(t)
        }
        const c = collection[t]!
        if (firstBlock[c] === -1) firstBlock[c] = block
      } else debit(t, from, amount)
      if (to === -1) supply[t]! -= amount
      else credit(t, to, amount)
    }
  }

  function* logs(): Generator<{ block: number; rows: MultiRow[] }> {
    const holder = () => 1 + Math.floor(random() * OWNERS)
    let rows = 0
    let edition = 0
    let whaleMinted = 0
    while (rows < rowsWanted) {
      const block = 1 + Math.floor((rows * blocks) / rowsWanted)
      const room = rowsWanted - rows
      // The edition's and the whale's mints keep pace with the history, done by 90 % of it.
      const pace = rows / (0.9 * rowsWanted)
      const log: MultiRow[] = []
      if (edition < shape.editionHolders && edition <= pace * shape.editionHolders) {
        // An airdrop, one TransferSingle per wallet (distinct: stride is prime to OWNERS); equal balances.
        const to = 1 + ((edition++ * stride) % OWNERS)
        log.push({ token: 0, from: -1, to, amount: random() < 0.6 ? 1 : 2 + Math.floor(random() * 9) })
      } else if (whaleMinted < whaleIds && whaleMinted <= pace * whaleIds) {
        const n = Math.min(10, whaleIds - whaleMinted, room)
        for (let i = 0; i < n; i++)
          log.push({
            token: 10 * whaleMinted++ + 3,
            from: -1,
            to: whale,
            amount: 1 + Math.floor(random() * 5),
          })
      } else {
        const kind = random()
        // TransferSingle, or a TransferBatch of 2 to 6 ids.
        const size = Math.min(room, random() < 0.7 ? 1 : 2 + Math.floor(random() * 5))
        if (held.length === 0 || kind < 0.12) {
          // A mint of new ids, or more of minted ones.
          const to = holder()
          const ids = new Set<number>()
          for (let i = 0; i < size; i++) {
            // New ids while there are any (7 in 10 mints), else more of a minted one.
            const fresh = minted.length > 0 && random() < 0.3 ? undefined : newId()
            const t = fresh ?? minted[Math.floor(random() * minted.length)]
            if (t !== undefined) ids.add(t)
          }
          for (const t of ids)
            log.push({ token: t, from: -1, to, amount: random() < 0.5 ? 1 : 1 + Math.floor(random() * 100) })
        } else {
          // A holder moves (or, 5 %, burns) some of its balances: whole or part.
          const pair = held[Math.floor(random() * held.length)]!
          const from = pair % KEYS
          let to = kind < 0.95 ? holder() : -1
          if (to === from) to = (to % OWNERS) + 1
          const list = tokensOf[from]!
          const ids = [(pair - from) / KEYS]
          for (let i = 1; i < size && ids.length < list.length; i++) {
            const t = list[Math.floor(random() * list.length)]!
            if (!ids.includes(t)) ids.push(t)
          }
          for (const t of ids) {
            const has = balance.get(t * KEYS + from)!
            log.push({ token: t, from, to, amount: random() < 0.5 ? has : 1 + Math.floor(random() * has) })
          }
        }
      }
      apply(block, log)
      rows += log.length
      yield { block, rows: log }
    }
    if (edition < shape.editionHolders || whaleMinted < whaleIds)
      throw new Error('bench:seed: the ERC-1155 history ended before the edition and the whale were minted')
  }

  return {
    logs,
    collection,
    number,
    supply,
    holders,
    transferCount,
    mintedBlock,
    lastBlock,
    firstBlock,
    balance,
    KEYS,
  }
}

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
      'TRUNCATE transfers, tokens, token_documents, token_balances, collection_holders, erc1155_uris, collections, media_sources, media_objects, indexer_state, indexed_ranges, token_rarity, collection_rarity, rarity_dirty RESTART IDENTITY CASCADE',
    )
    // Secondary indexes go during the load and come back after it.
    const { rows: indexes } = await client.query<{ indexname: string; indexdef: string }>(
      `SELECT i.indexname, i.indexdef FROM pg_indexes i
        WHERE i.schemaname = current_schema() AND i.tablename IN ('transfers', 'tokens', 'collections', 'token_balances')
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
    const lastBlockNumber = 1 + Math.floor((shape.transfers - 1) / EVENTS_PER_BLOCK)
    const multi = multiTokenHistory(shape, lastBlockNumber)
    const holderAddress = (h: number) => (h === -1 ? ZERO : ownerAddress(h))

    function* transfers(): Generator<string> {
      const multiLogs = multi.logs()
      let next = multiLogs.next()
      let multiTx = 0
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
        yield `${collectionAddress(tokenCollection[token]!)}\t${tokenNumber[token]}\t${from}\t${to}\t${type}\t${block}\t${blockHash}\t${iso(GENESIS + block * 12)}\t${tx}\t${logIndex}\t0\trpc\t\\N\n`
        if (logIndex < EVENTS_PER_BLOCK - 1 && e < shape.transfers - 1) continue
        // The block's ERC-1155 logs, after its ERC-721 ones; a TransferBatch's rows numbered by batch_index.
        let multiLogIndex = EVENTS_PER_BLOCK
        while (!next.done && next.value.block === block) {
          const multiHash = `0xe1${(multiTx++).toString(16).padStart(62, '0')}`
          for (const [batchIndex, { token: t, from: f, to: h, amount }] of next.value.rows.entries()) {
            const kind = f === -1 ? 'mint' : h === -1 ? 'burn' : 'transfer'
            yield `${multiCollectionAddress(multi.collection[t]!)}\t${multi.number[t]}\t${holderAddress(f)}\t${holderAddress(h)}\t${kind}\t${block}\t${blockHash}\t${iso(GENESIS + block * 12)}\t${multiHash}\t${multiLogIndex}\t${batchIndex}\trpc\t${amount}\n`
          }
          multiLogIndex++
          next = multiLogs.next()
        }
      }
      if (!next.done) throw new Error('bench:seed: ERC-1155 logs past the last block')
    }
    await copyRows(
      client,
      `COPY transfers (collection_address, token_id, from_address, to_address, event_type, block_number, block_hash,
                       block_timestamp, transaction_hash, log_index, batch_index, source, amount) FROM STDIN`,
      transfers(),
    )
    step(
      `${shape.transfers.toLocaleString()} ERC-721 and ${shape.multiTransfers.toLocaleString()} ERC-1155 transfers`,
    )

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
        yield `${collectionAddress(c)}\t${n}\t${holder}\t${burned[t] ? 't' : 'f'}\t${transferCount[t]}\t${mintedBlock[t]}\t${lastBlock[t]}\t${uri}\t${withMeta ? 'ok' : 'pending'}\t${name}\t${image}\t${attributes}\t\\N\t\\N\n`
      }
      // ERC-1155: the zero address as current_owner, burned while the supply is not positive.
      for (let t = 0; t < shape.multiTokens; t++) {
        if (multi.transferCount[t] === 0) continue
        const c = multi.collection[t]!
        const n = multi.number[t]!
        const supply = multi.supply[t]!
        const withMeta = n % 3 !== 0
        const hexId = n.toString(16).padStart(64, '0')
        const uri = withMeta ? `ipfs://bafyedition${c}/${hexId}.json` : '\\N'
        const name = withMeta ? `Edition ${n}` : '\\N'
        const image = withMeta ? `ipfs://bafyedition${c}/${hexId}.png` : '\\N'
        yield `${multiCollectionAddress(c)}\t${n}\t${ZERO}\t${supply <= 0 ? 't' : 'f'}\t${multi.transferCount[t]}\t${multi.mintedBlock[t]}\t${multi.lastBlock[t]}\t${uri}\t${withMeta ? 'ok' : 'pending'}\t${name}\t${image}\t\\N\t${supply}\t${multi.holders[t]}\n`
      }
    }
    await copyRows(
      client,
      `COPY tokens (collection_address, token_id, current_owner, is_burned, transfer_count, minted_block,
                    last_transfer_block, metadata_uri, metadata_status, name, image_url, attributes, total_supply,
                    holder_count) FROM STDIN`,
      tokens(),
    )
    step(`${minted.toLocaleString()} ERC-721 tokens and the ERC-1155 ones`)

    // Positive balances only, in primary-key order (token t, then holder: both sort as their addresses do).
    function* balances(): Generator<string> {
      const keys = Float64Array.from(multi.balance.keys()).sort()
      for (const key of keys) {
        const holder = key % multi.KEYS
        const t = (key - holder) / multi.KEYS
        yield `${multiCollectionAddress(multi.collection[t]!)}\t${multi.number[t]}\t${ownerAddress(holder)}\t${multi.balance.get(key)}\n`
      }
    }
    await copyRows(
      client,
      'COPY token_balances (collection_address, token_id, owner, balance) FROM STDIN',
      balances(),
    )
    step(`${multi.balance.size.toLocaleString()} ERC-1155 balances`)

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
        yield `${collectionAddress(c)}\t${name}\t${symbol}\t${listed ? 't' : 'f'}\tok\t${first}\t${first}\t${created}\t${ownerAddress(OWNERS + 1)}\tERC721\n`
      }
      for (let c = 0; c < shape.multiCollections; c++) {
        const listed = c % 20 !== 7
        const name = listed ? `Edition ${words[c % words.length]} ${c}` : ''
        const symbol = listed ? `E${c}` : '\\N'
        const firstSeen = multi.firstBlock[c]!
        const created = iso(GENESIS + (firstSeen === -1 ? lastBlockNumber : firstSeen) * 12 + (c % 12))
        const first = firstSeen === -1 ? '\\N' : String(firstSeen)
        yield `${multiCollectionAddress(c)}\t${name}\t${symbol}\t${listed ? 't' : 'f'}\tok\t${first}\t${first}\t${created}\t${ownerAddress(OWNERS + 1)}\tERC1155\n`
      }
    }
    await copyRows(
      client,
      `COPY collections (address, name, symbol, listed, metadata_status, deploy_block, first_seen_block, created_at,
                         creator_address, standard) FROM STDIN`,
      collections(),
    )
    step(`${shape.collections.toLocaleString()} ERC-721 and ${shape.multiCollections} ERC-1155 collections`)

    for (const index of indexes) {
      await client.query(index.indexdef)
      step(`index ${index.indexname}`)
    }
    await client.query(`
      UPDATE collections c SET total_supply = s.supply, unique_holders = s.holders, total_transfers = s.transfers
        FROM (SELECT t.collection_address, count(*) FILTER (WHERE NOT t.is_burned) AS supply,
                     count(DISTINCT t.current_owner) FILTER (WHERE NOT t.is_burned) AS holders,
                     sum(t.transfer_count) AS transfers
                FROM tokens t WHERE t.total_supply IS NULL GROUP BY t.collection_address) s
       WHERE c.address = s.collection_address`)
    // ERC-721: an owner's count is the tokens it holds (not burned), as the indexer keeps it
    // (src/indexer/store/collection-counters.ts): the collection owners list reads it.
    await client.query(`
      INSERT INTO collection_holders (collection_address, owner, token_count)
      SELECT collection_address, current_owner, count(*) FROM tokens WHERE total_supply IS NULL AND NOT is_burned
       GROUP BY collection_address, current_owner`)
    // ERC-1155: an owner's count is the ids it holds; supply the ids with a positive supply.
    await client.query(`
      INSERT INTO collection_holders (collection_address, owner, token_count)
      SELECT collection_address, owner, count(*) FROM token_balances WHERE balance > 0
       GROUP BY collection_address, owner`)
    await client.query(`
      UPDATE collections c SET total_supply = s.supply, unique_holders = coalesce(h.holders, 0),
                               total_transfers = s.transfers
        FROM (SELECT t.collection_address, count(*) FILTER (WHERE t.total_supply > 0) AS supply,
                     sum(t.transfer_count) AS transfers
                FROM tokens t WHERE t.total_supply IS NOT NULL GROUP BY t.collection_address) s
        LEFT JOIN (SELECT collection_address, count(*) AS holders FROM collection_holders
                    GROUP BY collection_address) h ON h.collection_address = s.collection_address
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
      'VACUUM (ANALYZE) collections, tokens, transfers, token_balances, collection_holders, token_rarity, collection_rarity, rarity_dirty',
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
    `bench:seed → ${url.replace(/\/\/[^@]*@/, '//')} : ${shape.collections} collections, ${shape.tokens} tokens (${shape.bigTokens} in ${BIG}), ${shape.transfers} transfers, ${shape.whaleTokens} held by ${WHALE}; ERC-1155: ${shape.multiCollections} collections, ${shape.multiTransfers} transfers, ${EDITION} #${EDITION_TOKEN_ID} held by ${shape.editionHolders}, ${shape.whale1155Tokens} ids held by ${WHALE_1155}`,
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
