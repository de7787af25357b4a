/**
 * BENCH_STANDARD=erc1155 npm run bench:indexer (npm run bench:indexer:1155): the ERC-1155 mix.
 *
 * Builds an anvil chain of ERC-1155 collections (OpenZeppelin ERC1155, bench/contracts/
 * BenchERC1155.sol, compiled with the repo's solc helper) of about as many id/value records as
 * the ERC-721 run has transfers (BENCH_COLLECTIONS x BENCH_TRANSFERS_PER_COLLECTION, 50 x 4,000):
 * mints, transfers and burns, about half the events TransferBatch of 2–20 ids (OpenZeppelin
 * emits TransferSingle for a one-id batch) and the rest TransferSingle, with amounts from 1 to
 * full balances and now and then 10^18-scale values. Then ours (the real indexer process, timed
 * from process start as in the ERC-721 run), Ponder (bench/ponder/erc1155) and Envio HyperIndex
 * (bench/envio, BENCH_ENVIO=0 skips it) backfill it, and each one's balances per (collection,
 * id, holder), supplies per token and id/value rows are compared with the chain: balanceOfBatch
 * at the backfill head through anvil for every (collection, id, holder) the logs name, and the
 * logs as anvil returns them (not through a proxy). Events/s counts id/value records (rows of
 * transfers), the unit the ERC-721 run counts; logs/s is printed beside it.
 *
 * Provider mode (--provider, BENCH_PROVIDER=1) reads through src/test/provider-proxy/ as the
 * ERC-721 run does. BENCH_REPEAT (2) times as many more backfills of ours and Ponder's on the
 * same chain; the medians make the ratio. No head-follow samples in this mode.
 */
import path from 'node:path'
import type pg from 'pg'
import {
  type Address,
  decodeAbiParameters,
  decodeFunctionResult,
  encodeFunctionData,
  type Hex,
  keccak256,
  toHex,
} from 'viem'
import { compileContracts } from '@/dev/contracts/compile'
import { buildIndexer } from '@/indexer/bundle'
import { startTestChain } from '@/indexer/test/chain'
import { mulberry32 } from '@/lib/random'
import { type ProviderProxy, startProviderProxy } from '@/test/provider-proxy'
import { serverUrl } from './bench-schema'
import { type CpuSeconds, describeCpu } from './cpu-time'
import { runEnvio } from './envio-run'
import {
  anvilBatch,
  columnsOf,
  describeRowDiff,
  describeTraffic,
  diffRows,
  diffTotal,
  inParallel,
  log,
  median,
  medianCpu,
  PROVIDER,
  PROVIDER_ENDPOINTS,
  providerOptions,
  proxyTotals,
  REPEAT,
  type RowDiff,
  s,
  sameTransfer,
  timeBackfill,
  ZERO,
} from './indexer-shared'
import { runPonder } from './ponder-run'

const COLLECTIONS = Number(process.env.BENCH_COLLECTIONS ?? 50)
const RECORDS_PER_COLLECTION = Number(process.env.BENCH_TRANSFERS_PER_COLLECTION ?? 4_000)
const TOKEN_IDS = 120
export const HOLDERS = 300
const OPS_PER_TX = 60
const TRANSFER_SINGLE_TOPIC = '0xc3d58168c5ae7397731d063d5bbf3d657854427343f4c083240f7aacaa2d0f62'
const TRANSFER_BATCH_TOPIC = '0x4a39dc06d4c0dbc64b70af90fd698a233a518aa5d07e595d983b8c0526c8f7fb'
const contractFile = path.resolve(import.meta.dirname, 'contracts', 'BenchERC1155.sol')

const balanceOfBatchAbi = [
  {
    type: 'function',
    name: 'balanceOfBatch',
    stateMutability: 'view',
    inputs: [
      { name: 'accounts', type: 'address[]' },
      { name: 'ids', type: 'uint256[]' },
    ],
    outputs: [{ name: '', type: 'uint256[]' }],
  },
] as const

interface Op {
  from: Address
  to: Address
  ids: bigint[]
  values: bigint[]
}

/**
 * One collection's operations, drawn against its own running balances so that none reverts:
 * half mints, a third transfers and the rest burns; about half single-id, half batches of 2–20.
 */
export function collectionOps(seed: number, holders: Address[]): Op[] {
  const rnd = mulberry32(seed)
  const int = (n: number) => Math.floor(rnd() * n)
  const held = new Map<Address, Map<bigint, bigint>>()
  const holding: Address[] = []
  const ops: Op[] = []
  let records = 0
  const change = (owner: Address, id: bigint, delta: bigint) => {
    if (owner === ZERO) return
    let m = held.get(owner)
    if (!m) {
      m = new Map()
      held.set(owner, m)
    }
    if (m.size === 0 && delta > 0n) holding.push(owner)
    const next = (m.get(id) ?? 0n) + delta
    if (next === 0n) m.delete(id)
    else m.set(id, next)
    if (m.size === 0) holding.splice(holding.indexOf(owner), 1)
  }
  while (records < RECORDS_PER_COLLECTION) {
    // A batch drawn from a holder of a single id shrinks to TransferSingle: 60 % batches draw
    // about half the logs as TransferBatch.
    const size = rnd() < 0.4 ? 1 : 2 + int(19)
    const kind = holding.length === 0 ? 0 : rnd()
    let op: Op
    if (kind < 0.5) {
      const ids = new Set<bigint>()
      while (ids.size < size) ids.add(BigInt(int(TOKEN_IDS)))
      const amount = () => (rnd() < 0.02 ? 10n ** 18n * BigInt(1 + int(1000)) : BigInt(1 + int(100)))
      op = { from: ZERO, to: holders[int(holders.length)]!, ids: [...ids], values: [...ids].map(amount) }
    } else {
      const from = holding[int(holding.length)]!
      const owned = [...held.get(from)!.entries()]
      const picked: [bigint, bigint][] = []
      for (let i = 0; i < size && owned.length > 0; i++) picked.push(owned.splice(int(owned.length), 1)[0]!)
      let to: Address = ZERO
      if (kind < 0.85)
        do to = holders[int(holders.length)]!
        while (to === from)
      // A quarter of the time the whole balance moves: the holder's row must go.
      const values = picked.map(([, bal]) =>
        rnd() < 0.25 ? bal : 1n + BigInt(int(Number(bal < 1000n ? bal : 1000n))),
      )
      op = { from, to, ids: picked.map(([id]) => id), values }
    }
    op.ids.forEach((id, i) => {
      change(op.from, id, -op.values[i]!)
      change(op.to, id, op.values[i]!)
    })
    ops.push(op)
    records += op.ids.length
  }
  return ops
}

async function buildChain() {
  const started = performance.now()
  const [chain, artifacts] = await Promise.all([startTestChain(), compileContracts([contractFile])])
  const artifact = artifacts.BenchERC1155!
  await chain.clients.test.request({ method: 'evm_setBlockGasLimit', params: ['0x3b9aca00'] } as never)
  const deployer = chain.accounts[0]!
  // Holders need no keys: the deployer moves their tokens (BenchERC1155.run).
  const holders = Array.from(
    { length: HOLDERS },
    (_, i) => `0x${keccak256(toHex(`bench holder ${i}`)).slice(26)}` as Address,
  )
  const collections: Address[] = []
  let firstBlock = 0n
  for (let c = 0; c < COLLECTIONS; c++) {
    const hash = await chain.clients.wallet.deployContract({
      abi: artifact.abi,
      bytecode: artifact.bytecode,
      args: ['data:application/json,{}'],
      account: deployer,
      chain: null,
    })
    const receipt = await chain.clients.public.waitForTransactionReceipt({ hash })
    if (c === 0) firstBlock = receipt.blockNumber
    collections.push(receipt.contractAddress!.toLowerCase() as Address)
  }
  let last: Hex = '0x'
  let records = 0
  let logs = 0
  let batches = 0
  for (const [c, address] of collections.entries()) {
    const ops = collectionOps(1_155 + c, holders)
    for (let i = 0; i < ops.length; i += OPS_PER_TX) {
      const chunk = ops.slice(i, i + OPS_PER_TX)
      last = await chain.clients.wallet.writeContract({
        address,
        abi: artifact.abi,
        functionName: 'run',
        args: [chunk],
        account: deployer,
        chain: null,
        gas: 400_000_000n,
      })
    }
    for (const op of ops) {
      records += op.ids.length
      logs++
      if (op.ids.length > 1) batches++
    }
  }
  const receipt = await chain.clients.public.waitForTransactionReceipt({ hash: last })
  if (receipt.status !== 'success') throw new Error('chain generation failed')
  const head = await chain.head()
  log(
    `chain: ${records} id/value records in ${logs} logs (${batches} TransferBatch, ${logs - batches} TransferSingle) in ${COLLECTIONS} ERC-1155 collections, ${head} blocks, built in ${s(started)}`,
  )
  return { chain, collections, firstBlock, records, logs, head }
}

export interface Record1155 {
  collection: string
  tokenId: string
  from: string
  to: string
  amount: string
  block: string
}

export interface Truth {
  /** By `${transactionHash}:${logIndex}:${batchIndex}`. */
  records: Map<string, Record1155>
  /** balanceOfBatch at the head, non-zero only, by `${collection}:${tokenId}:${owner}`. */
  balances: Map<string, bigint>
  /** Sum of the holders' balances at the head, by `${collection}:${tokenId}` (every token the logs name). */
  supplies: Map<string, bigint>
}

const address = (topic: Hex) => `0x${topic.slice(26)}`.toLowerCase()

async function readTruth(rpcUrl: string, collections: Address[], firstBlock: bigint, head: bigint) {
  const hex = (n: bigint) => `0x${n.toString(16)}`
  const ranges: [bigint, bigint][] = []
  for (let from = firstBlock; from <= head; from += 50n)
    ranges.push([from, from + 49n < head ? from + 49n : head])
  type Log = { address: Hex; topics: Hex[]; data: Hex; blockNumber: Hex; transactionHash: Hex; logIndex: Hex }
  const chunks = await inParallel(
    ranges.map(([from, to]) => async () => {
      const [answer] = await anvilBatch(rpcUrl, [
        {
          method: 'eth_getLogs',
          params: [
            {
              address: collections,
              topics: [[TRANSFER_SINGLE_TOPIC, TRANSFER_BATCH_TOPIC]],
              fromBlock: hex(from),
              toBlock: hex(to),
            },
          ],
        },
      ])
      if (answer!.error) throw new Error(`eth_getLogs from anvil: ${answer!.error.message}`)
      return answer!.result as Log[]
    }),
    4,
  )
  const records = new Map<string, Record1155>()
  // The chain's balances as its logs tell them, checked against balanceOfBatch below.
  const fromLogs = new Map<string, bigint>()
  for (const l of chunks.flat()) {
    const [ids, values] =
      l.topics[0] === TRANSFER_SINGLE_TOPIC
        ? decodeAbiParameters([{ type: 'uint256' }, { type: 'uint256' }], l.data).map((v) => [v])
        : decodeAbiParameters([{ type: 'uint256[]' }, { type: 'uint256[]' }], l.data)
    const collection = l.address.toLowerCase()
    const [from, to] = [address(l.topics[2]!), address(l.topics[3]!)]
    ;(ids as bigint[]).forEach((id, i) => {
      const amount = (values as bigint[])[i]!
      records.set(`${l.transactionHash.toLowerCase()}:${Number(BigInt(l.logIndex))}:${i}`, {
        collection,
        tokenId: id.toString(),
        from,
        to,
        amount: amount.toString(),
        block: BigInt(l.blockNumber).toString(),
      })
      for (const [owner, delta] of [
        [from, -amount],
        [to, amount],
      ] as const) {
        const key = `${collection}:${id}:${owner}`
        if (owner !== ZERO) fromLogs.set(key, (fromLogs.get(key) ?? 0n) + delta)
      }
    })
  }
  const pairs = [...fromLogs.keys()]
  const batches: string[][] = []
  for (let i = 0; i < pairs.length; i += 400) batches.push(pairs.slice(i, i + 400))
  const balances = new Map<string, bigint>()
  const supplies = new Map<string, bigint>()
  for (const r of records.values()) supplies.set(`${r.collection}:${r.tokenId}`, 0n)
  await inParallel(
    batches.map((batch) => async () => {
      const byCollection = new Map<string, string[]>()
      for (const key of batch) {
        const collection = key.split(':')[0]!
        byCollection.set(collection, [...(byCollection.get(collection) ?? []), key])
      }
      const groups = [...byCollection.entries()]
      const answers = await anvilBatch(
        rpcUrl,
        groups.map(([collection, keys]) => ({
          method: 'eth_call',
          params: [
            {
              to: collection,
              data: encodeFunctionData({
                abi: balanceOfBatchAbi,
                functionName: 'balanceOfBatch',
                args: [
                  keys.map((k) => k.split(':')[2] as Address),
                  keys.map((k) => BigInt(k.split(':')[1]!)),
                ],
              }),
            },
            hex(head),
          ],
        })),
      )
      groups.forEach(([, keys], g) => {
        const answer = answers[g]!
        if (answer.error) throw new Error(`balanceOfBatch from anvil: ${answer.error.message}`)
        const result = decodeFunctionResult({
          abi: balanceOfBatchAbi,
          functionName: 'balanceOfBatch',
          data: answer.result as Hex,
        })
        keys.forEach((key, i) => {
          const balance = result[i]!
          if (balance !== 0n) balances.set(key, balance)
          const token = key.split(':').slice(0, 2).join(':')
          supplies.set(token, supplies.get(token)! + balance)
        })
      })
    }),
    4,
  )
  let disagree = 0
  for (const [key, balance] of fromLogs) if ((balances.get(key) ?? 0n) !== balance) disagree++
  return { truth: { records, balances, supplies } satisfies Truth, disagree, pairs: pairs.length }
}

/** Rows with a non-zero value against the chain's non-zero values (zero rows are "no row"). */
function diffValues(truth: Map<string, bigint>, rows: { key: string; value: string }[]): RowDiff {
  return diffRows(
    new Map([...truth].filter(([, value]) => value !== 0n)),
    rows.filter((row) => BigInt(row.value) !== 0n),
    (expected, row) => expected === BigInt(row.value),
  )
}

function diffRecords(truth: Truth, rows: (Record1155 & { key: string })[]): RowDiff {
  return diffRows(truth.records, rows, sameTransfer)
}

/** 'wrong balances: N' (every (collection, id, holder) with a non-zero balance), then supplies and rows. */
export function describeAgainst(
  truth: Truth,
  balances: { key: string; value: string }[],
  supplies: { key: string; value: string }[],
  records: (Record1155 & { key: string })[],
): string {
  const b = diffValues(truth.balances, balances)
  const t = diffValues(truth.supplies, supplies)
  const r = diffRecords(truth, records)
  return `wrong balances: ${diffTotal(b)} (${describeRowDiff(b)}); wrong supplies: ${diffTotal(t)} (${describeRowDiff(t)}); id/value rows differing: ${diffTotal(r)} (${describeRowDiff(r)})`
}

/** Ours: token_balances, tokens.total_supply and the ERC-1155 transfer rows (docs/database.md). */
async function inspectOurs(pool: pg.Pool, truth: Truth): Promise<string> {
  try {
    const balances = await pool.query(
      `SELECT lower(collection_address) || ':' || token_id::text || ':' || lower(owner) AS key, balance::text AS value
         FROM token_balances`,
    )
    const supplies = await pool.query(
      `SELECT lower(collection_address) || ':' || token_id::text AS key, total_supply::text AS value
         FROM tokens WHERE total_supply IS NOT NULL`,
    )
    const records = await pool.query(
      `SELECT transaction_hash || ':' || log_index || ':' || batch_index AS key, collection_address AS collection,
              token_id::text AS "tokenId", from_address AS "from", to_address AS "to", amount::text AS amount,
              block_number::text AS block
         FROM transfers WHERE source = 'rpc'`,
    )
    return describeAgainst(truth, balances.rows, supplies.rows, records.rows)
  } catch (err) {
    return `could not read our ERC-1155 tables: ${err instanceof Error ? err.message : err}`
  }
}

/** Ponder's or Envio's tables (named by `tables`), column names looked up whatever their casing. */
async function inspectPeer(
  db: pg.Pool,
  schema: string,
  truth: Truth,
  tables: { transfers: string; balances: string; tokens: string },
): Promise<string> {
  const b = await columnsOf(db, schema, tables.balances)
  const balances = await db.query(
    `SELECT lower(${b('collection')}) || ':' || ${b('tokenId')}::text || ':' || lower(${b('owner')}) AS key,
            ${b('balance')}::text AS value FROM "${schema}"."${tables.balances}"`,
  )
  const o = await columnsOf(db, schema, tables.tokens)
  const supplies = await db.query(
    `SELECT lower(${o('collection')}) || ':' || ${o('tokenId')}::text AS key, ${o('supply')}::text AS value
       FROM "${schema}"."${tables.tokens}"`,
  )
  const t = await columnsOf(db, schema, tables.transfers)
  const records = await db.query(
    `SELECT lower(${t('transactionHash')}) || ':' || ${t('logIndex')} || ':' || ${t('batchIndex')} AS key,
            ${t('collection')} AS collection, ${t('tokenId')}::text AS "tokenId", ${t('from')} AS "from",
            ${t('to')} AS "to", ${t('amount')}::text AS amount, ${t('blockNumber')}::text AS block
       FROM "${schema}"."${tables.transfers}"`,
  )
  return describeAgainst(truth, balances.rows, supplies.rows, records.rows)
}

export async function runErc1155() {
  const { chain, collections, firstBlock, records, logs, head } = await buildChain()
  const t0 = performance.now()
  const { truth, disagree, pairs } = await readTruth(chain.anvil.rpcUrl, collections, firstBlock, head)
  log(
    `chain truth read from anvil in ${s(t0)}: ${truth.records.size} id/value records, balanceOfBatch of ${pairs} (collection, id, holder) pairs at block ${head}: ${truth.balances.size} non-zero; ${disagree} differ from the balances the logs add up to`,
  )
  if (truth.records.size !== records)
    throw new Error(`anvil returned ${truth.records.size} records, sent ${records}`)
  // Ponder treats the last 30 blocks of chain 31337 as unfinalized (see bench/indexer.ts): mine past them now.
  const model = providerOptions('', 0)
  const margin = 31n + (PROVIDER ? BigInt(model.faults!.lagBlocks ?? 0) : 0n)
  for (let b = await chain.head(); b <= head + margin; b++) await chain.clients.test.mine({ blocks: 1 })
  const perLog = (rate: number) =>
    `${Math.round(rate)} events/s (${Math.round((rate * logs) / records)} logs/s)`

  const ourProxies: ProviderProxy[] = PROVIDER
    ? await Promise.all(
        Array.from({ length: PROVIDER_ENDPOINTS }, (_, i) =>
          startProviderProxy(providerOptions(chain.anvil.rpcUrl, i + 1)),
        ),
      )
    : []
  let ponderProxy: ProviderProxy | undefined
  try {
    const root = path.resolve(import.meta.dirname, '..')
    const indexer = await buildIndexer(root)
    type Run = { rate: number; cpu: CpuSeconds; peakRssKb: number }
    const ours: Run[] = []
    for (let run = 0; run <= REPEAT; run++) {
      const result = await timeBackfill(
        indexer,
        root,
        ourProxies,
        chain.anvil,
        head,
        true,
        true,
        run === 0 ? (pool) => inspectOurs(pool, truth) : undefined,
      )
      if (!result) {
        log(`ours${run ? ` run ${run + 1}` : ''}: did not reach block ${head} (exited or timed out)`)
        continue
      }
      if (!PROVIDER && result.events !== records) {
        log(
          `ours${run ? ` run ${run + 1}` : ''}: no figure, reached block ${head} with ${result.events} of ${records} id/value records${run === 0 ? `; vs the chain: ${result.inspected}` : ''}`,
        )
        continue
      }
      ours.push(result)
      log(
        `ours${run ? ` run ${run + 1}` : ''}: ${result.events} id/value records in ${result.seconds.toFixed(1)}s (process start included), ${perLog(result.rate)}, peak RSS ${(result.peakRssKb / 1024).toFixed(0)} MiB (target < 400)`,
      )
      if (run === 0) {
        log(`ours CPU: ${describeCpu(result.cpu, result.seconds)}`)
        if (PROVIDER) log(`ours through the provider: ${describeTraffic(proxyTotals(ourProxies), records)}`)
        log(`ours vs the chain: ${result.inspected}`)
      }
    }

    const ponder: Run[] = []
    if (process.env.BENCH_PONDER === '0') log('ponder: skipped (BENCH_PONDER=0)')
    else
      for (let run = 0; run <= REPEAT; run++) {
        await ponderProxy?.stop()
        if (PROVIDER) ponderProxy = await startProviderProxy(providerOptions(chain.anvil.rpcUrl, 101 + run))
        const result = await runPonder(
          {
            serverUrl,
            rpcUrl: ponderProxy?.url ?? chain.anvil.rpcUrl,
            nodePid: chain.anvil.pid,
            chainId: 31337,
            app: 'erc1155',
            addresses: collections,
            startBlock: firstBlock,
            endBlock: head,
            expectedTransfers: records,
            allowShort: PROVIDER,
            inspect: (db, schema) =>
              inspectPeer(db, schema, truth, {
                transfers: 'transfers',
                balances: 'balances',
                tokens: 'tokens',
              }),
          },
          log,
        )
        const name = `ponder${REPEAT > 0 ? ` run ${run + 1}` : ''}`
        if (!result.ok) {
          log(`${name}: no figure, ${result.reason}`)
          continue
        }
        const rate = result.events / result.seconds
        ponder.push({ rate, cpu: result.cpu, peakRssKb: result.peakRssKb })
        log(
          `${name} ${result.version}: ${result.events} id/value records in ${result.seconds.toFixed(1)}s (process start included), ${perLog(rate)}, peak RSS ${(result.peakRssKb / 1024).toFixed(0)} MiB`,
        )
        if (run === 0) log(`ponder CPU: ${describeCpu(result.cpu, result.seconds, 'ponder')}`)
        if (ponderProxy)
          log(`ponder through the provider: ${describeTraffic(proxyTotals([ponderProxy]), records)}`)
        log(`ponder vs the chain: ${result.inspected}`)
      }

    let envioRate: number | undefined
    if (process.env.BENCH_ENVIO === '0') log('envio: skipped (BENCH_ENVIO=0)')
    else {
      const envioProxy = PROVIDER
        ? await startProviderProxy(providerOptions(chain.anvil.rpcUrl, 201))
        : undefined
      const result = await runEnvio(
        {
          serverUrl,
          rpcUrl: envioProxy?.url ?? chain.anvil.rpcUrl,
          nodePid: chain.anvil.pid,
          chainId: 31337,
          standard: 'erc1155',
          addresses: collections,
          startBlock: firstBlock,
          endBlock: head,
          expectedTransfers: records,
          inspect: (db, schema) =>
            inspectPeer(db, schema, truth, { transfers: 'Transfer', balances: 'Balance', tokens: 'Token' }),
        },
        log,
      )
      await envioProxy?.stop()
      if (!result.ok) log(`envio: no figure, ${result.reason}`)
      else {
        envioRate = result.events / result.seconds
        log(
          `envio ${result.version}: ${result.events} id/value records in ${result.seconds.toFixed(1)}s (envio start included, codegen before), ${perLog(envioRate)}`,
        )
        log(`envio CPU: ${describeCpu(result.cpu, result.seconds, 'envio')}`)
        log(`envio vs the chain: ${result.inspected}`)
      }
    }

    const runs = (n: number) => (n > 1 ? ` (median of ${n})` : '')
    const ourMedian = ours.length > 0 ? median(ours.map((r) => r.rate)) : undefined
    log(
      ourMedian === undefined || ponder.length === 0
        ? 'ours / ponder: not measured'
        : `ours${runs(ours.length)} / ponder${runs(ponder.length)}: ${(ourMedian / median(ponder.map((r) => r.rate))).toFixed(2)}x (target >= ${PROVIDER ? 2 : 3}x)`,
    )
    if (ourMedian !== undefined && envioRate !== undefined)
      log(`ours${runs(ours.length)} / envio: ${(ourMedian / envioRate).toFixed(2)}x`)
    if (ours.length > 0 && ponder.length > 0) {
      const [o, p] = [medianCpu(ours), medianCpu(ponder)]
      const all = (c: CpuSeconds) => c.indexer + c.postgres + c.node
      log(
        `CPU-s per backfill, ours vs ponder: indexer process ${o.indexer.toFixed(1)} vs ${p.indexer.toFixed(1)}, PostgreSQL ${o.postgres.toFixed(1)} vs ${p.postgres.toFixed(1)}, anvil ${o.node.toFixed(1)} vs ${p.node.toFixed(1)}: ponder / ours ${(all(p) / all(o)).toFixed(2)}x`,
      )
    }
    if (ours.length > 0)
      log(
        `peak RSS of ours: highest ${(Math.max(...ours.map((r) => r.peakRssKb)) / 1024).toFixed(0)} MiB (target < 400)`,
      )
  } finally {
    await Promise.all([...ourProxies, ...(ponderProxy ? [ponderProxy] : [])].map((p) => p.stop()))
    await chain.stop()
  }
}
