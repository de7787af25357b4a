/**
 * The chain as the source of truth: reads every NFT event with plain
 * eth_getLogs and viem's own ABI decoding (independent of the indexer's
 * decoders), asks ownerOf() for every token, and compares with the database.
 */
import type pg from 'pg'
import { type Address, decodeEventLog, type Hex, parseAbi } from 'viem'
import { expect } from 'vitest'
import type { DevnetClients } from '@/dev/devnet/collections'

const ZERO = '0x0000000000000000000000000000000000000000'
const standardAbi = parseAbi([
  'event Transfer(address indexed from, address indexed to, uint256 indexed tokenId)',
  'event ConsecutiveTransfer(uint256 indexed fromTokenId, uint256 toTokenId, address indexed fromAddress, address indexed toAddress)',
])
const legacyAbi = parseAbi(['event Transfer(address from, address to, uint256 tokenId)'])
const ownerAbi = parseAbi(['function ownerOf(uint256) view returns (address)'])

export interface ChainTransfer {
  id: string
  collection: string
  tokenId: string
  from: string
  to: string
  blockNumber: string
  blockHash: string
}

/** Every transfer of the given NFT contracts from the chain's logs; identity tx:log:batch. */
export async function chainTransfers(
  clients: DevnetClients,
  nfts: { standard: Address[]; legacy: Address[] },
) {
  const logs = await clients.public.request({
    method: 'eth_getLogs',
    params: [{ fromBlock: '0x0', toBlock: 'latest', address: [...nfts.standard, ...nfts.legacy] }],
  })
  const out: ChainTransfer[] = []
  for (const log of logs) {
    const collection = log.address.toLowerCase()
    const base = {
      collection,
      blockNumber: BigInt(log.blockNumber!).toString(),
      blockHash: log.blockHash!.toLowerCase(),
    }
    const position = `${log.transactionHash!.toLowerCase()}:${Number(BigInt(log.logIndex!))}`
    const isLegacy = nfts.legacy.map((a) => a.toLowerCase()).includes(collection)
    let decoded: { eventName: string; args: Record<string, unknown> }
    try {
      decoded = decodeEventLog({
        abi: isLegacy ? legacyAbi : standardAbi,
        data: log.data,
        topics: log.topics as [Hex],
      }) as unknown as typeof decoded
    } catch {
      continue
    }
    const a = decoded.args
    if (decoded.eventName === 'ConsecutiveTransfer') {
      const first = a.fromTokenId as bigint
      for (let id = first; id <= (a.toTokenId as bigint); id++) {
        out.push({
          ...base,
          id: `${position}:${id - first}`,
          tokenId: id.toString(),
          from: (a.fromAddress as string).toLowerCase(),
          to: (a.toAddress as string).toLowerCase(),
        })
      }
    } else {
      out.push({
        ...base,
        id: `${position}:0`,
        tokenId: (a.tokenId as bigint).toString(),
        from: (a.from as string).toLowerCase(),
        to: (a.to as string).toLowerCase(),
      })
    }
  }
  return out
}

/**
 * Asserts the database equals the chain: the same transfer set (identity,
 * content and block hash), every token's owner = ownerOf() (burned: ownerOf reverts, owner
 * is zero), and collection counters equal to counts over that truth.
 */
export async function expectDatabaseMatchesChain(
  pool: pg.Pool,
  clients: DevnetClients,
  nfts: { standard: Address[]; legacy: Address[] },
) {
  const expected = await chainTransfers(clients, nfts)
  const { rows } = await pool.query(
    `SELECT transaction_hash || ':' || log_index || ':' || batch_index AS id, collection_address AS collection,
            token_id::text AS "tokenId", from_address AS "from", to_address AS "to", block_number::text AS "blockNumber",
            lower(block_hash) AS "blockHash"
       FROM transfers WHERE source = 'rpc'`,
  )
  const byId = (list: ChainTransfer[]) => [...list].sort((x, y) => x.id.localeCompare(y.id))
  expect(byId(rows)).toEqual(byId(expected))
  // Within a block, ids follow the chain's order: the API's feeds order a block's events by id.
  const inverted = await pool.query(
    `SELECT count(*)::int AS n FROM (
       SELECT id, lag(id) OVER (PARTITION BY block_hash ORDER BY log_index, batch_index) AS before
         FROM transfers WHERE source = 'rpc') t
      WHERE before > id`,
  )
  expect(inverted.rows[0].n).toBe(0)

  const tokens = await pool.query(
    `SELECT collection_address, token_id::text, current_owner, is_burned, transfer_count FROM tokens`,
  )
  const counts = new Map<string, number>()
  for (const t of expected)
    counts.set(`${t.collection}:${t.tokenId}`, (counts.get(`${t.collection}:${t.tokenId}`) ?? 0) + 1)
  expect(tokens.rows.length).toBe(counts.size)
  const holders = new Map<string, Set<string>>()
  const supply = new Map<string, number>()
  for (const token of tokens.rows) {
    const owner = await clients.public
      .readContract({
        address: token.collection_address,
        abi: ownerAbi,
        functionName: 'ownerOf',
        args: [BigInt(token.token_id)],
      })
      .then((o) => o.toLowerCase())
      .catch(() => ZERO)
    const label = `${token.collection_address}:${token.token_id}`
    expect({
      label,
      owner: token.current_owner,
      burned: token.is_burned,
      count: token.transfer_count,
    }).toEqual({
      label,
      owner,
      burned: owner === ZERO,
      count: counts.get(label),
    })
    if (owner !== ZERO) {
      holders.set(token.collection_address, (holders.get(token.collection_address) ?? new Set()).add(owner))
      supply.set(token.collection_address, (supply.get(token.collection_address) ?? 0) + 1)
    }
  }
  const collections = await pool.query(
    'SELECT address, total_supply::int, unique_holders::int, total_transfers::int FROM collections',
  )
  const perCollection = new Map<string, number>()
  for (const t of expected) perCollection.set(t.collection, (perCollection.get(t.collection) ?? 0) + 1)
  expect(collections.rows.map((c) => c.address).sort()).toEqual([...perCollection.keys()].sort())
  for (const c of collections.rows) {
    expect({
      address: c.address,
      supply: c.total_supply,
      holders: c.unique_holders,
      transfers: c.total_transfers,
    }).toEqual({
      address: c.address,
      supply: supply.get(c.address) ?? 0,
      holders: holders.get(c.address)?.size ?? 0,
      transfers: perCollection.get(c.address),
    })
  }
}

/** Polls until `check` returns a truthy value. */
export async function waitFor<T>(
  check: () => Promise<T | undefined | null | false>,
  timeoutMs = 30_000,
  label = 'condition',
) {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await check()
    if (value) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${label}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

/** Waits until the indexer has ingested the chain's head block. */
export async function waitForIndexed(pool: pg.Pool, clients: DevnetClients, timeoutMs = 60_000) {
  const head = await clients.public.getBlockNumber({ cacheTime: 0 })
  const hash = (await clients.public.getBlock({ blockNumber: head })).hash
  await waitFor(
    async () => {
      const { rows } = await pool.query(
        'SELECT 1 FROM indexer_state s JOIN blocks b ON b.number = s.last_indexed_block WHERE b.number = $1 AND b.hash = $2',
        [head.toString(), hash],
      )
      return rows.length > 0
    },
    timeoutMs,
    `block ${head} indexed`,
  )
}

/**
 * After a crash, before any restart: the database holds exactly the chain's
 * transfers up to last_indexed_block (nothing half-applied), and derived
 * state agrees with the stored history.
 */
export async function expectConsistentPrefix(
  pool: pg.Pool,
  clients: DevnetClients,
  nfts: { standard: Address[]; legacy: Address[] },
) {
  const state = await pool.query('SELECT last_indexed_block::text AS last FROM indexer_state')
  const last = BigInt(state.rows[0]?.last ?? -1)
  const expected = (await chainTransfers(clients, nfts)).filter((t) => BigInt(t.blockNumber) <= last)
  const { rows } = await pool.query(
    `SELECT transaction_hash || ':' || log_index || ':' || batch_index AS id FROM transfers WHERE source = 'rpc'`,
  )
  expect(rows.map((r) => r.id).sort()).toEqual(expected.map((t) => t.id).sort())
  const drift = await pool.query(`
    WITH last AS (
      SELECT DISTINCT ON (collection_address, token_id) collection_address, token_id, to_address
        FROM transfers ORDER BY collection_address, token_id, block_timestamp DESC, block_number DESC, log_index DESC,
                                batch_index DESC, id DESC),
    counts AS (SELECT collection_address, token_id, count(*)::int AS n FROM transfers GROUP BY 1, 2)
    SELECT t.collection_address, t.token_id FROM tokens t
      LEFT JOIN last l USING (collection_address, token_id) LEFT JOIN counts c USING (collection_address, token_id)
     WHERE t.current_owner IS DISTINCT FROM l.to_address OR t.transfer_count IS DISTINCT FROM c.n
  UNION ALL
    SELECT l.collection_address, l.token_id FROM last l LEFT JOIN tokens t USING (collection_address, token_id)
     WHERE t.id IS NULL
  UNION ALL
    SELECT c.address, NULL FROM collections c
     WHERE c.total_transfers <> (SELECT count(*) FROM transfers t WHERE t.collection_address = c.address)
        OR c.total_supply <> (SELECT count(*) FROM tokens t WHERE t.collection_address = c.address AND NOT t.is_burned)
        OR c.unique_holders <> (SELECT count(DISTINCT current_owner) FROM tokens t
                                 WHERE t.collection_address = c.address AND NOT t.is_burned)`)
  expect(drift.rows).toEqual([])
  return last
}
