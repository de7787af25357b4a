/**
 * The chain as the source of truth: reads every NFT event with plain
 * eth_getLogs and viem's own ABI decoding (independent of the indexer's
 * decoders), asks ownerOf() for every ERC-721 token and balanceOf() (in
 * balanceOfBatch calls) for every ERC-1155 id and address involved, and
 * compares with the database.
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
const multiAbi = parseAbi([
  'event TransferSingle(address indexed operator, address indexed from, address indexed to, uint256 id, uint256 value)',
  'event TransferBatch(address indexed operator, address indexed from, address indexed to, uint256[] ids, uint256[] values)',
  'event URI(string value, uint256 indexed id)',
])
const ownerAbi = parseAbi(['function ownerOf(uint256) view returns (address)'])
const balanceAbi = parseAbi(['function balanceOfBatch(address[], uint256[]) view returns (uint256[])'])

/** The NFT contracts a test chain has, by standard (`multi`: ERC-1155). */
export interface NftContracts {
  standard: Address[]
  legacy: Address[]
  multi?: Address[]
}

/** Reads at a block (the confirmed one) instead of the head. */
export interface AtBlock {
  blockNumber?: bigint
}

export interface ChainTransfer {
  id: string
  collection: string
  tokenId: string
  from: string
  to: string
  blockNumber: string
  blockHash: string
  /** The value of an ERC-1155 id/value pair; null for ERC-721 rows. */
  amount: string | null
}

/** An ERC-1155 URI event from the chain's logs. */
export interface ChainUri {
  collection: string
  tokenId: string
  uri: string
  blockNumber: string
  logIndex: number
  transactionHash: string
}

const lower = (a: Address[] = []) => a.map((x) => x.toLowerCase())

/** The logs of `addresses` up to `at` (default the head), read directly from the node. */
async function chainLogs(clients: DevnetClients, addresses: Address[], at: AtBlock) {
  return clients.public.request({
    method: 'eth_getLogs',
    params: [
      {
        fromBlock: '0x0',
        toBlock: at.blockNumber === undefined ? 'latest' : `0x${at.blockNumber.toString(16)}`,
        address: addresses,
      },
    ],
  })
}

/** Every transfer of the given NFT contracts from the chain's logs; identity tx:log:batch. */
export async function chainTransfers(clients: DevnetClients, nfts: NftContracts, at: AtBlock = {}) {
  const multi = lower(nfts.multi)
  const logs = await chainLogs(clients, [...nfts.standard, ...nfts.legacy, ...(nfts.multi ?? [])], at)
  const out: ChainTransfer[] = []
  for (const log of logs) {
    const collection = log.address.toLowerCase()
    const base = {
      collection,
      blockNumber: BigInt(log.blockNumber!).toString(),
      blockHash: log.blockHash!.toLowerCase(),
    }
    const position = `${log.transactionHash!.toLowerCase()}:${Number(BigInt(log.logIndex!))}`
    if (multi.includes(collection)) {
      out.push(...multiTransfers(log, base, position))
      continue
    }
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
          amount: null,
        })
      }
    } else {
      out.push({
        ...base,
        id: `${position}:0`,
        tokenId: (a.tokenId as bigint).toString(),
        from: (a.from as string).toLowerCase(),
        to: (a.to as string).toLowerCase(),
        amount: null,
      })
    }
  }
  return out
}

type RpcLog = Awaited<ReturnType<typeof chainLogs>>[number]

/** The id/value pairs of an ERC-1155 TransferSingle/TransferBatch log, batch index = position. */
function multiTransfers(
  log: RpcLog,
  base: Pick<ChainTransfer, 'collection' | 'blockNumber' | 'blockHash'>,
  position: string,
): ChainTransfer[] {
  let decoded: { eventName: string; args: Record<string, unknown> }
  try {
    decoded = decodeEventLog({ abi: multiAbi, data: log.data, topics: log.topics as [Hex] }) as never
  } catch {
    return []
  }
  const a = decoded.args
  if (decoded.eventName === 'URI') return []
  const ids = decoded.eventName === 'TransferSingle' ? [a.id as bigint] : (a.ids as bigint[])
  const values = decoded.eventName === 'TransferSingle' ? [a.value as bigint] : (a.values as bigint[])
  return ids.map((id, i) => ({
    ...base,
    id: `${position}:${i}`,
    tokenId: id.toString(),
    from: (a.from as string).toLowerCase(),
    to: (a.to as string).toLowerCase(),
    amount: values[i]!.toString(),
  }))
}

/** Every ERC-1155 URI event of `multi` from the chain's logs. */
export async function chainUris(clients: DevnetClients, multi: Address[], at: AtBlock = {}) {
  if (multi.length === 0) return []
  const out: ChainUri[] = []
  for (const log of await chainLogs(clients, multi, at)) {
    let decoded: { eventName: string; args: Record<string, unknown> }
    try {
      decoded = decodeEventLog({ abi: multiAbi, data: log.data, topics: log.topics as [Hex] }) as never
    } catch {
      continue
    }
    if (decoded.eventName !== 'URI') continue
    out.push({
      collection: log.address.toLowerCase(),
      tokenId: (decoded.args.id as bigint).toString(),
      uri: decoded.args.value as string,
      blockNumber: BigInt(log.blockNumber!).toString(),
      logIndex: Number(BigInt(log.logIndex!)),
      transactionHash: log.transactionHash!.toLowerCase(),
    })
  }
  return out
}

/**
 * balanceOf(address, id) for every pair of `owners` x `ids` of `collection`,
 * through balanceOfBatch (the contract's own answer), keyed `id|owner`.
 */
export async function chainBalances(
  clients: DevnetClients,
  collection: Address,
  ids: bigint[],
  owners: string[],
  at: AtBlock = {},
) {
  const pairs = ids.flatMap((id) => owners.map((owner) => [id, owner as Address] as const))
  const out = new Map<string, bigint>()
  for (let i = 0; i < pairs.length; i += 500) {
    const chunk = pairs.slice(i, i + 500)
    const balances = await clients.public.readContract({
      address: collection,
      abi: balanceAbi,
      functionName: 'balanceOfBatch',
      args: [chunk.map(([, owner]) => owner), chunk.map(([id]) => id)],
      blockNumber: at.blockNumber,
    })
    for (const [j, [id, owner]] of chunk.entries()) out.set(`${id}|${owner}`, balances[j]!)
  }
  return out
}

/**
 * Asserts the database equals the chain: the same transfer set (identity,
 * content, amount and block hash), every ERC-721 token's owner = ownerOf() (burned: ownerOf
 * reverts, owner is zero), every ERC-1155 balance = balanceOfBatch() (expectMultiTokensMatchChain),
 * and collection counters equal to counts over that truth. `at`: read the chain at that block
 * (everything the database holds must be at or below it).
 */
export async function expectDatabaseMatchesChain(
  pool: pg.Pool,
  clients: DevnetClients,
  nfts: NftContracts,
  at: AtBlock = {},
) {
  const expected = await chainTransfers(clients, nfts, at)
  const { rows } = await pool.query(
    `SELECT transaction_hash || ':' || log_index || ':' || batch_index AS id, collection_address AS collection,
            token_id::text AS "tokenId", from_address AS "from", to_address AS "to", block_number::text AS "blockNumber",
            lower(block_hash) AS "blockHash", amount::text AS amount
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
  // So do blocks of one timestamp: (block_timestamp, id) is a total order that follows the chain
  // (docs/database.md, "Indexes"), what every feed's cursor relies on.
  const acrossBlocks = await pool.query(
    `SELECT count(*)::int AS n FROM (
       SELECT id, block_timestamp,
              lag(id) OVER chain AS before, lag(block_timestamp) OVER chain AS before_timestamp
         FROM transfers WHERE source = 'rpc'
       WINDOW chain AS (ORDER BY block_timestamp, block_number, log_index, batch_index)) t
      WHERE before_timestamp = block_timestamp AND before > id`,
  )
  expect(acrossBlocks.rows[0].n).toBe(0)

  const tokens = await pool.query(
    `SELECT collection_address, token_id::text, current_owner, is_burned, transfer_count FROM tokens`,
  )
  const counts = new Map<string, number>()
  for (const t of expected)
    counts.set(`${t.collection}:${t.tokenId}`, (counts.get(`${t.collection}:${t.tokenId}`) ?? 0) + 1)
  expect(tokens.rows.length).toBe(counts.size)
  const multi = lower(nfts.multi)
  const holders = new Map<string, Set<string>>()
  const supply = new Map<string, number>()
  for (const token of tokens.rows) {
    if (multi.includes(token.collection_address)) continue
    const owner = await clients.public
      .readContract({
        address: token.collection_address,
        abi: ownerAbi,
        functionName: 'ownerOf',
        args: [BigInt(token.token_id)],
        blockNumber: at.blockNumber,
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
  if (multi.length > 0) {
    const truth = await expectMultiTokensMatchChain(pool, clients, nfts.multi!, expected, at)
    for (const [address, c] of truth) {
      supply.set(address, c.supply)
      holders.set(address, c.holders)
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

/**
 * The ERC-1155 half of expectDatabaseMatchesChain. A model folded from the
 * chain's transfers (balances, supply, transfers per id) must equal both
 * balanceOfBatch() over every id and every address involved (the contract's
 * own answer) and the stored token_balances, tokens (total_supply,
 * holder_count, is_burned, current_owner zero), collection_holders and the URI
 * events in erc1155_uris. Returns each collection's supply (ids with supply > 0)
 * and holders for the counter check.
 */
export async function expectMultiTokensMatchChain(
  pool: pg.Pool,
  clients: DevnetClients,
  multi: Address[],
  expected: ChainTransfer[],
  at: AtBlock = {},
) {
  const contracts = lower(multi)
  const model = new Map<string, { supply: bigint; transfers: number; minted: string | null; last: string }>()
  const balances = new Map<string, bigint>()
  const addresses = new Set<string>()
  const move = (key: string, owner: string, by: bigint) => {
    if (owner === ZERO) return
    addresses.add(owner)
    balances.set(`${key}|${owner}`, (balances.get(`${key}|${owner}`) ?? 0n) + by)
  }
  const chainOrder = (t: ChainTransfer) => {
    const [, log, batch] = t.id.split(':')
    return [BigInt(t.blockNumber), Number(log), Number(batch)] as const
  }
  const ordered = expected
    .filter((t) => contracts.includes(t.collection))
    .sort((x, y) => {
      const [a, b] = [chainOrder(x), chainOrder(y)]
      return a[0] === b[0] ? a[1] - b[1] || a[2] - b[2] : a[0] < b[0] ? -1 : 1
    })
  for (const t of ordered) {
    const key = `${t.collection}:${t.tokenId}`
    const amount = BigInt(t.amount!)
    const m = model.get(key) ?? { supply: 0n, transfers: 0, minted: null, last: t.blockNumber }
    m.transfers++
    m.last = t.blockNumber
    if (t.from === ZERO) {
      m.supply += amount
      m.minted ??= t.blockNumber
    }
    if (t.to === ZERO) m.supply -= amount
    model.set(key, m)
    move(key, t.from, -amount)
    move(key, t.to, amount)
  }
  // Every address the database names too: a stray balance of anyone else shows.
  const stored = await pool.query(
    `SELECT collection_address || ':' || token_id::text || '|' || owner AS key, balance::text AS balance, owner
       FROM token_balances`,
  )
  for (const row of stored.rows) addresses.add(row.owner)
  const owners = [...addresses].sort()

  // The model against the contract: balanceOf of every id x every address involved.
  const held = new Map<string, bigint>()
  for (const collection of contracts) {
    const ids = [...model.keys()].filter((k) => k.startsWith(`${collection}:`)).map((k) => k.split(':')[1]!)
    if (ids.length === 0) continue
    const onChain = await chainBalances(clients, collection as Address, ids.map(BigInt), owners, at)
    for (const id of ids)
      for (const owner of owners) {
        const key = `${collection}:${id}|${owner}`
        const balance = onChain.get(`${id}|${owner}`)!
        expect({ key, balance }).toEqual({ key, balance: balances.get(key) ?? 0n })
        if (balance !== 0n) held.set(key, balance)
      }
  }
  // token_balances: exactly the non-zero balances, nothing else (no row of balance 0, none of a reorged id).
  expect(
    Object.fromEntries(
      stored.rows.filter((r) => contracts.includes(r.key.split(':')[0])).map((r) => [r.key, r.balance]),
    ),
  ).toEqual(Object.fromEntries([...held].map(([k, v]) => [k, v.toString()])))

  const tokens = await pool.query(
    `SELECT collection_address || ':' || token_id::text AS key, current_owner, is_burned, transfer_count,
            total_supply::text AS total_supply, holder_count, minted_block::text AS minted,
            last_transfer_block::text AS last
       FROM tokens WHERE collection_address = ANY($1)`,
    [contracts],
  )
  const holderCount = (key: string) => [...held.keys()].filter((k) => k.startsWith(`${key}|`)).length
  expect(Object.fromEntries(tokens.rows.map((t) => [t.key, { ...t, key: undefined }]))).toEqual(
    Object.fromEntries(
      [...model].map(([key, m]) => [
        key,
        {
          key: undefined,
          current_owner: ZERO,
          is_burned: m.supply === 0n,
          transfer_count: m.transfers,
          total_supply: m.supply.toString(),
          holder_count: holderCount(key),
          minted: m.minted,
          last: m.last,
        },
      ]),
    ),
  )

  // collection_holders: ids each owner holds a positive balance of; the collections' counters.
  const perOwner = new Map<string, number>()
  const out = new Map<string, { supply: number; holders: Set<string> }>()
  for (const collection of contracts) out.set(collection, { supply: 0, holders: new Set() })
  for (const key of held.keys()) {
    const [token, owner] = key.split('|') as [string, string]
    const collection = token.split(':')[0]!
    perOwner.set(`${collection}|${owner}`, (perOwner.get(`${collection}|${owner}`) ?? 0) + 1)
    out.get(collection)!.holders.add(owner)
  }
  for (const [key, m] of model) if (m.supply > 0n) out.get(key.split(':')[0]!)!.supply++
  const holderRows = await pool.query(
    `SELECT collection_address || '|' || owner AS key, token_count FROM collection_holders
      WHERE collection_address = ANY($1) AND token_count <> 0`,
    [contracts],
  )
  expect(Object.fromEntries(holderRows.rows.map((r) => [r.key, r.token_count]))).toEqual(
    Object.fromEntries(perOwner),
  )
  const standards = await pool.query('SELECT address, standard FROM collections WHERE address = ANY($1)', [
    contracts,
  ])
  for (const row of standards.rows) expect(row).toEqual({ address: row.address, standard: 'ERC1155' })

  // URI events: exactly the chain's (none of an orphaned block).
  const uris = await pool.query(
    `SELECT collection_address AS collection, token_id::text AS "tokenId", uri, block_number::text AS "blockNumber",
            log_index AS "logIndex", lower(transaction_hash) AS "transactionHash"
       FROM erc1155_uris WHERE collection_address = ANY($1)`,
    [contracts],
  )
  const byPosition = (list: ChainUri[]) =>
    [...list].sort((x, y) =>
      `${x.transactionHash}:${x.logIndex}`.localeCompare(`${y.transactionHash}:${y.logIndex}`),
    )
  expect(byPosition(uris.rows)).toEqual(byPosition(await chainUris(clients, multi, at)))
  return out
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
export async function expectConsistentPrefix(pool: pg.Pool, clients: DevnetClients, nfts: NftContracts) {
  const state = await pool.query('SELECT last_indexed_block::text AS last FROM indexer_state')
  const last = BigInt(state.rows[0]?.last ?? -1)
  const expected = (await chainTransfers(clients, nfts)).filter((t) => BigInt(t.blockNumber) <= last)
  const { rows } = await pool.query(
    `SELECT transaction_hash || ':' || log_index || ':' || batch_index AS id FROM transfers WHERE source = 'rpc'`,
  )
  expect(rows.map((r) => r.id).sort()).toEqual(expected.map((t) => t.id).sort())
  // ERC-721 tokens (total_supply NULL) own what their last transfer says; ERC-1155 ones (rows with
  // an amount) hold the sums of their stored moves (docs/database.md, "ERC-1155").
  const drift = await pool.query(`
    WITH last AS (
      SELECT DISTINCT ON (collection_address, token_id) collection_address, token_id, to_address
        FROM transfers ORDER BY collection_address, token_id, block_timestamp DESC, block_number DESC, log_index DESC,
                                batch_index DESC, id DESC),
    counts AS (SELECT collection_address, token_id, count(*)::int AS n FROM transfers GROUP BY 1, 2),
    multi AS (
      SELECT collection_address, token_id,
             sum(CASE WHEN from_address = '${ZERO}' THEN amount ELSE 0 END)
               - sum(CASE WHEN to_address = '${ZERO}' THEN amount ELSE 0 END) AS supply
        FROM transfers WHERE amount IS NOT NULL GROUP BY 1, 2),
    moves AS (
      SELECT collection_address, token_id, owner, sum(v) AS balance FROM (
        SELECT collection_address, token_id, to_address AS owner, amount AS v FROM transfers
         WHERE amount IS NOT NULL AND to_address <> '${ZERO}'
        UNION ALL
        SELECT collection_address, token_id, from_address, -amount FROM transfers
         WHERE amount IS NOT NULL AND from_address <> '${ZERO}') m
       GROUP BY 1, 2, 3 HAVING sum(v) <> 0)
    SELECT t.collection_address, t.token_id FROM tokens t
      LEFT JOIN last l USING (collection_address, token_id) LEFT JOIN counts c USING (collection_address, token_id)
      LEFT JOIN multi m USING (collection_address, token_id)
     WHERE t.transfer_count IS DISTINCT FROM c.n
        OR (t.total_supply IS NULL) <> (m.supply IS NULL)
        OR (t.total_supply IS NULL AND t.current_owner IS DISTINCT FROM l.to_address)
        OR (t.total_supply IS NOT NULL AND (
              t.total_supply <> m.supply OR t.current_owner <> '${ZERO}' OR t.is_burned <> (m.supply <= 0)
              OR t.holder_count <> (SELECT count(*) FROM moves b WHERE b.collection_address = t.collection_address
                                       AND b.token_id = t.token_id AND b.balance > 0)))
  UNION ALL
    SELECT l.collection_address, l.token_id FROM last l LEFT JOIN tokens t USING (collection_address, token_id)
     WHERE t.id IS NULL
  UNION ALL
    SELECT collection_address, token_id FROM token_balances b FULL JOIN moves m USING (collection_address, token_id, owner)
     WHERE b.balance IS DISTINCT FROM m.balance
  UNION ALL
    SELECT c.address, NULL FROM collections c
     WHERE c.total_transfers <> (SELECT count(*) FROM transfers t WHERE t.collection_address = c.address)
        OR c.total_supply <> (SELECT count(*) FROM tokens t WHERE t.collection_address = c.address AND NOT t.is_burned)
        OR c.unique_holders <> CASE WHEN c.standard = 'ERC1155'
             THEN (SELECT count(DISTINCT owner) FROM moves m WHERE m.collection_address = c.address AND m.balance > 0)
             ELSE (SELECT count(DISTINCT current_owner) FROM tokens t
                    WHERE t.collection_address = c.address AND NOT t.is_burned) END`)
  expect(drift.rows).toEqual([])
  return last
}
