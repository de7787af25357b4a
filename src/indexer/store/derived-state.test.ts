import fc from 'fast-check'
import type { Hex } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import { verifiedBatch } from '@/test/ingest-batch'
import type { TransferEvent } from '../events/types'
import { type IngestBatch, startCommit } from './commit'
import { rollbackAfter } from './rollback'
import { ensureIndexerState } from './state'

let db: TestDatabase
const ZERO = '0x0000000000000000000000000000000000000000' as Hex
const OWNERS = [
  ZERO,
  '0x00000000000000000000000000000000000000a1',
  '0x00000000000000000000000000000000000000b2',
  '0x00000000000000000000000000000000000000c3',
] as Hex[]
const COLLECTIONS = [
  '0x00000000000000000000000000000000000000f1',
  '0x00000000000000000000000000000000000000f2',
] as Hex[]
/** An ERC-1155 collection beside them. */
const MULTI = '0x00000000000000000000000000000000000000f3' as Hex

beforeAll(async () => {
  db = await createTestDatabase()
}, 60_000)
afterAll(async () => {
  await db?.drop()
})

/**
 * One block's worth of random logs (any owner to any owner: the store trusts the chain):
 * ERC-721 transfers, and ERC-1155 TransferSingle/TransferBatch logs of 1–3 id/value pairs.
 */
const blockEvents = fc.array(
  fc.oneof(
    fc.record({
      collection: fc.integer({ min: 0, max: 1 }),
      token: fc.integer({ min: 0, max: 3 }),
      from: fc.integer({ min: 0, max: 3 }),
      to: fc.integer({ min: 0, max: 3 }),
    }),
    fc.record({
      pairs: fc.array(
        fc.record({ token: fc.integer({ min: 0, max: 3 }), amount: fc.integer({ min: 0, max: 5 }) }),
        {
          minLength: 1,
          maxLength: 3,
        },
      ),
      from: fc.integer({ min: 0, max: 3 }),
      to: fc.integer({ min: 0, max: 3 }),
    }),
  ),
  { maxLength: 4 },
)
type LogSpec =
  | { collection: number; token: number; from: number; to: number }
  | { pairs: Array<{ token: number; amount: number }>; from: number; to: number }

/** A scenario: blocks committed in batches, with rollbacks that replace the chain's tail by another fork. */
const scenario = fc.array(
  fc.oneof(
    fc.record({
      kind: fc.constant('commit' as const),
      blocks: fc.array(blockEvents, { minLength: 1, maxLength: 4 }),
    }),
    // Two batches whose commits overlap, as a backfill runs them (sync/historical.ts).
    fc.record({
      kind: fc.constant('overlapping' as const),
      first: fc.array(blockEvents, { minLength: 1, maxLength: 3 }),
      second: fc.array(blockEvents, { minLength: 1, maxLength: 3 }),
    }),
    fc.record({ kind: fc.constant('rollback' as const), depth: fc.integer({ min: 1, max: 6 }) }),
  ),
  { minLength: 1, maxLength: 12 },
)

let fork = 0
function toEvents(block: number, specs: LogSpec[]): TransferEvent[] {
  fork++
  const hash = `0x${block.toString(16).padStart(32, '0')}${fork.toString(16).padStart(32, '0')}` as Hex
  const event = (s: LogSpec, logIndex: number, batchIndex: number, token: number, amount: bigint | null) => ({
    collection: 'pairs' in s ? MULTI : COLLECTIONS[s.collection]!,
    tokenId: BigInt(token),
    from: OWNERS[s.from]!,
    to: OWNERS[s.to]!,
    blockNumber: BigInt(block),
    blockHash: hash,
    blockTimestamp: BigInt(1_600_000_000 + block * 12),
    transactionHash: hash,
    logIndex,
    batchIndex,
    standard: 'pairs' in s ? ('ERC1155' as const) : ('ERC721' as const),
    amount,
  })
  return specs.flatMap((s, i) =>
    'pairs' in s
      ? s.pairs.map((p, j) => event(s, i, j, p.token, BigInt(p.amount)))
      : [event(s, i, 0, s.token, null)],
  )
}

/**
 * Derived state computed the slow, obvious way from the canonical history. ERC-1155 tokens
 * keep the zero address as owner; balances, supply and holders come from summing every pair.
 */
function model(history: TransferEvent[]) {
  const tokens = new Map<string, { owner: string; count: number; supply: bigint | null }>()
  const balances = new Map<string, bigint>()
  const add = (key: string, owner: string, by: bigint) => {
    if (owner !== ZERO) balances.set(`${key}:${owner}`, (balances.get(`${key}:${owner}`) ?? 0n) + by)
  }
  for (const e of history) {
    const key = `${e.collection}:${e.tokenId}`
    const count = (tokens.get(key)?.count ?? 0) + 1
    if (e.amount == null) tokens.set(key, { owner: e.to, count, supply: null })
    else {
      const supply =
        (tokens.get(key)?.supply ?? 0n) + (e.from === ZERO ? e.amount : 0n) - (e.to === ZERO ? e.amount : 0n)
      tokens.set(key, { owner: ZERO, count, supply })
      add(key, e.from, -e.amount)
      add(key, e.to, e.amount)
    }
  }
  const held = [...balances].filter(([, b]) => b > 0n).map(([k]) => k)
  const collections = new Map<string, { supply: number; holders: Set<string>; transfers: number }>()
  for (const e of history) {
    const c = collections.get(e.collection) ?? { supply: 0, holders: new Set(), transfers: 0 }
    c.transfers++
    collections.set(e.collection, c)
  }
  for (const [key, t] of tokens) {
    const c = collections.get(key.split(':')[0]!)!
    if (t.supply === null && t.owner !== ZERO) {
      c.supply++
      c.holders.add(t.owner)
    }
    if (t.supply !== null && t.supply > 0n) c.supply++
  }
  for (const k of held) {
    const [collection, , owner] = k.split(':')
    collections.get(collection!)!.holders.add(owner!)
  }
  return {
    tokens: [...tokens]
      .map(([key, t]) => ({
        key,
        owner: t.owner,
        burned: t.supply === null ? t.owner === ZERO : t.supply <= 0n,
        count: t.count,
        supply: t.supply?.toString() ?? null,
        holders: t.supply === null ? null : held.filter((k) => k.startsWith(`${key}:`)).length,
      }))
      .sort((a, b) => a.key.localeCompare(b.key)),
    collections: [...collections]
      .map(([address, c]) => ({ address, supply: c.supply, holders: c.holders.size, transfers: c.transfers }))
      .sort((a, b) => a.address.localeCompare(b.address)),
    balances: [...balances]
      .filter(([, b]) => b !== 0n)
      .map(([key, b]) => ({ key, balance: b.toString() }))
      .sort((a, b) => a.key.localeCompare(b.key)),
  }
}

async function stored() {
  const tokens = await db.pool.query(
    `SELECT collection_address || ':' || token_id AS key, current_owner AS owner, is_burned AS burned,
            transfer_count AS count, total_supply::text AS supply, holder_count AS holders
       FROM tokens ORDER BY 1`,
  )
  const balances = await db.pool.query(
    `SELECT collection_address || ':' || token_id || ':' || owner AS key, balance::text AS balance
       FROM token_balances ORDER BY 1`,
  )
  const collections = await db.pool.query(
    'SELECT address, total_supply::int AS supply, unique_holders::int AS holders, total_transfers::int AS transfers FROM collections ORDER BY address',
  )
  return { tokens: tokens.rows, collections: collections.rows, balances: balances.rows }
}

describe('derived state', () => {
  it('always equals a recount of the canonical history (ERC-721 owners, ERC-1155 balances), across batches, overlapping commits and rollbacks', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (steps) => {
        await db.pool.query(
          'TRUNCATE transfers, tokens, token_balances, collections, collection_holders, blocks, indexed_ranges, indexer_state',
        )
        await ensureIndexerState(db.pool, { network: 'devnet', chainId: 31337, startBlock: 0 })
        let history: TransferEvent[] = []
        let last: bigint | null = null
        const ctx = () => ({ network: 'devnet', startBlock: 0n, expectedLastIndexed: last, keepBlocks: 64n })
        /** The batch of `blocks` (each a list of transfer specs) from block `from` on. */
        const batchOf = (from: bigint, blocks: Parameters<typeof toEvents>[1][]): IngestBatch =>
          verifiedBatch(
            from,
            from + BigInt(blocks.length) - 1n,
            blocks.flatMap((specs, i) => toEvents(Number(from) + i, specs)),
          )
        const next = () => (last === null ? 0n : last + 1n)
        for (const step of steps) {
          if (step.kind === 'commit' || step.kind === 'overlapping') {
            const first = batchOf(next(), step.kind === 'commit' ? step.blocks : step.first)
            const batches = [first]
            if (step.kind === 'overlapping') batches.push(batchOf(first.toBlock + 1n, step.second))
            // As a backfill runs them: the next batch is inserted while this one finishes.
            let finishing: Promise<unknown> = Promise.resolve()
            for (const batch of batches) {
              const open = await startCommit(db.pool, batch.transfers)
              await finishing
              finishing = open.finish(ctx(), batch)
              history = history.concat(batch.transfers)
              last = batch.toBlock
            }
            await finishing
          } else if (last !== null) {
            const ancestor: bigint = last - BigInt(step.depth)
            await rollbackAfter(
              db.pool,
              { network: 'devnet', startBlock: 0n, lastSeenBlock: last, chainConfirmedBlock: ancestor },
              ancestor,
            )
            history = history.filter((e) => e.blockNumber <= ancestor)
            last = ancestor < 0n ? null : ancestor
          }
          expect(await stored()).toEqual(model(history))
          // Transfer ids follow the chain, overlapping commits included.
          const order = await db.pool.query(
            'SELECT block_number::int AS b, log_index AS l, batch_index AS i FROM transfers ORDER BY id',
          )
          const positions = order.rows.map((r) => r.b * 10_000 + r.l * 10 + r.i)
          expect(positions).toEqual([...positions].sort((a, b) => a - b))
        }
        const holders = await db.pool.query(
          'SELECT count(*)::int AS n FROM collection_holders WHERE token_count <= 0',
        )
        expect(holders.rows[0].n).toBe(0)
      }),
      { numRuns: 40 },
    )
  }, 180_000)
})
