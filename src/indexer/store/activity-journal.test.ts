/**
 * The activity journal (docs/push.md) records what the store's own write
 * paths do to the canonical transfers: a commit adds, a reorg's rollback
 * removes, a repair that puts rows back unchanged leaves nothing (one that
 * corrects a row in place journals the removal and the corrected row), and
 * history older than the retention is not journaled.
 */
import type { Hex } from 'viem'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { journalBounds, pruneJournal, readJournal } from '@/db/queries/activity-journal'
import { truncateChainData } from '@/db/queries/chain-data'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import type { TransferEvent } from '../events/types'
import { commitBatch, commitWithin, type IngestBatch } from './commit'
import { withWriteTransaction } from './db'
import { rollbackAfter, rollbackWithin } from './rollback'
import { ensureIndexerState } from './state'

let db: TestDatabase

beforeAll(async () => {
  db = await createTestDatabase()
}, 60_000)
afterAll(async () => {
  await db?.drop()
})
beforeEach(async () => {
  await db.pool.query(
    'TRUNCATE transfers, tokens, collections, collection_holders, blocks, indexed_ranges, indexer_state, activity_journal',
  )
  await ensureIndexerState(db.pool, { network: 'devnet', chainId: 31337, startBlock: 1 })
})

const hex = (n: number, bytes: number) => `0x${n.toString(16).padStart(bytes * 2, '0')}` as Hex
const NOW = BigInt(Math.floor(Date.now() / 1000))
const ctx = (expectedLastIndexed: bigint | null) => ({
  network: 'devnet',
  startBlock: 1n,
  expectedLastIndexed,
  keepBlocks: 64n,
})
const state = { network: 'devnet', startBlock: 1n, lastSeenBlock: 10n, chainConfirmedBlock: 0n }

/** Block `block` (of fork `fork`) minting `count` tokens; its time `age` seconds ago. */
function mintBlock(block: number, count: number, options: { fork?: number; age?: bigint } = {}): IngestBatch {
  const fork = options.fork ?? 0
  const hash = hex(fork * 1_000 + block, 32)
  const transfers: TransferEvent[] = Array.from({ length: count }, (_, i) => ({
    collection: hex(0xf1, 20),
    tokenId: BigInt(block * 1000 + i),
    from: hex(0, 20),
    to: hex(0xa1, 20),
    blockNumber: BigInt(block),
    blockHash: hash,
    blockTimestamp: NOW - (options.age ?? 0n) + BigInt(block),
    transactionHash: hex(fork * 1_000 + block, 32),
    logIndex: i,
    batchIndex: 0,
    standard: 'ERC721',
  }))
  const number = BigInt(block)
  return {
    fromBlock: number,
    toBlock: number,
    transfers,
    metadataUpdates: [],
    verified: true,
    blocks: [
      {
        number,
        hash,
        parentHash: hex(block - 1, 32),
        timestamp: NOW - (options.age ?? 0n) + BigInt(block),
      },
    ],
    lastSeenBlock: number,
    chainConfirmedBlock: 0n,
  }
}

const entries = async () =>
  (await readJournal(db, { after: 0n, limit: 1000 })).map((e) => ({
    kind: e.kind,
    block: e.block_number,
    hash: e.block_hash,
    token: e.token_id,
  }))

describe('activity journal', () => {
  it('a commit journals each new transfer once, in chain order, with its row id and collection', async () => {
    await commitBatch(db.pool, ctx(null), mintBlock(1, 2))
    await commitBatch(db.pool, ctx(1n), mintBlock(2, 1))
    const journal = await readJournal(db, { after: 0n, limit: 10 })
    expect(journal.map((e) => [e.kind, e.token_id])).toEqual([
      ['added', '1000'],
      ['added', '1001'],
      ['added', '2000'],
    ])
    const ids = await db.pool.query('SELECT id::text FROM transfers ORDER BY id')
    expect(journal.map((e) => e.id)).toEqual(ids.rows.map((r) => r.id))
    expect(journal.map((e) => BigInt(e.seq))).toEqual(
      [...journal.map((e) => BigInt(e.seq))].sort((a, b) => (a < b ? -1 : 1)),
    )
    // Read after a seq and by filter.
    expect((await readJournal(db, { after: BigInt(journal[0]!.seq), limit: 10 })).length).toBe(2)
    expect(await readJournal(db, { after: 0n, limit: 10, collection: hex(0xf2, 20) })).toEqual([])
    expect((await readJournal(db, { after: 0n, limit: 10, eventType: 'mint' })).length).toBe(3)
  })

  it('a reorg’s rollback journals the removed transfers; the new fork’s are added', async () => {
    await commitBatch(db.pool, ctx(null), mintBlock(1, 1))
    await commitBatch(db.pool, ctx(1n), mintBlock(2, 2))
    await rollbackAfter(db.pool, state, 1n)
    await commitBatch(db.pool, ctx(1n), mintBlock(2, 1, { fork: 1 }))
    const journal = await entries()
    // One rollback's removals come in the order the rows are deleted: compared as a set.
    const removed = journal.slice(3, 5).sort((a, b) => a.token.localeCompare(b.token))
    expect([...journal.slice(0, 3), ...removed, ...journal.slice(5)]).toEqual([
      { kind: 'added', block: '1', hash: hex(1, 32), token: '1000' },
      { kind: 'added', block: '2', hash: hex(2, 32), token: '2000' },
      { kind: 'added', block: '2', hash: hex(2, 32), token: '2001' },
      { kind: 'removed', block: '2', hash: hex(2, 32), token: '2000' },
      { kind: 'removed', block: '2', hash: hex(2, 32), token: '2001' },
      { kind: 'added', block: '2', hash: hex(1002, 32), token: '2000' },
    ])
  })

  it('a repair that rewrites a block leaves only what changed', async () => {
    await commitBatch(db.pool, ctx(null), mintBlock(1, 1))
    // Stored with a log left out; the verified answer holds both.
    const partial = mintBlock(2, 2)
    await commitBatch(db.pool, ctx(1n), { ...partial, transfers: partial.transfers.slice(0, 1) })
    const before = await entries()
    await withWriteTransaction(db.pool, async (client) => {
      const rolledBack = await rollbackWithin(client, state, 1n)
      await commitWithin(client, { ...ctx(rolledBack.lastIndexedBlock), keepBlocks: 64n }, mintBlock(2, 2))
    })
    expect(await entries()).toEqual([
      ...before,
      { kind: 'added', block: '2', hash: hex(2, 32), token: '2001' },
    ])
    // The next transaction starts without the repair's mark: a plain rollback is journaled again.
    await rollbackAfter(db.pool, state, 1n)
    const removed = (await entries()).filter((e) => e.kind === 'removed').map((e) => e.token)
    expect(removed.sort()).toEqual(['2000', '2001'])
  })

  it('a repair that corrects a row in place journals its removal and the corrected row', async () => {
    // Block 2 committed on one read a provider altered: log 0 names carol, log 1 (ERC-1155)
    // moves 5; log 2 is right. Same identities and block hash in the verified logs.
    const carol = hex(0xc3, 20)
    const block2 = (to: Hex, amount: bigint): IngestBatch => {
      const batch = mintBlock(2, 3)
      const [t0, t1, t2] = batch.transfers
      const erc1155 = { ...t1!, collection: hex(0xf2, 20), standard: 'ERC1155' as const, amount }
      return { ...batch, transfers: [{ ...t0!, to }, erc1155, t2!] }
    }
    await commitBatch(db.pool, ctx(null), mintBlock(1, 1))
    await commitBatch(db.pool, ctx(1n), block2(carol, 5n))
    const before = await readJournal(db, { after: 0n, limit: 100 })
    await withWriteTransaction(db.pool, async (client) => {
      const rolledBack = await rollbackWithin(client, state, 1n)
      await commitWithin(client, ctx(rolledBack.lastIndexedBlock), block2(hex(0xa1, 20), 7n))
    })
    const stored = await db.pool.query(
      'SELECT log_index, to_address, amount::text FROM transfers WHERE block_number = 2 ORDER BY log_index',
    )
    const journal = await readJournal(db, { after: BigInt(before.at(-1)!.seq), limit: 100 })
    const shape = (e: (typeof journal)[number]) => ({
      kind: e.kind,
      log: e.log_index,
      to: e.to_address,
      amount: e.amount,
    })
    // The removals of one rollback come in deletion order: compared as a set. Log 2 came back
    // unchanged and leaves nothing.
    const removed = journal
      .slice(0, 2)
      .map(shape)
      .sort((a, b) => a.log - b.log)
    expect([...removed, ...journal.slice(2).map(shape)]).toEqual([
      { kind: 'removed', log: 0, to: carol, amount: null },
      { kind: 'removed', log: 1, to: hex(0xa1, 20), amount: '5' },
      { kind: 'added', log: 0, to: hex(0xa1, 20), amount: null },
      { kind: 'added', log: 1, to: hex(0xa1, 20), amount: '7' },
    ])
    // A consumer that replays the whole journal ('added' sets an event, 'removed' takes it
    // back) ends with the stored transfers.
    const replayed = new Map<number, { log_index: number; to_address: string; amount: string | null }>()
    for (const e of [...before, ...journal]) {
      if (e.block_number !== '2') continue
      if (e.kind === 'added')
        replayed.set(e.log_index, { log_index: e.log_index, to_address: e.to_address, amount: e.amount })
      else replayed.delete(e.log_index)
    }
    expect([...replayed.values()].sort((a, b) => a.log_index - b.log_index)).toEqual(stored.rows)
  })

  it('history older than a day is not journaled, and pruning drops entries past the retention', async () => {
    await commitBatch(db.pool, ctx(null), mintBlock(1, 2, { age: 2n * 86_400n }))
    expect(await entries()).toEqual([])
    await commitBatch(db.pool, ctx(1n), mintBlock(2, 1))
    expect(await pruneJournal(db, 60_000)).toBe(0)
    const bounds = await journalBounds(db)
    expect(bounds.oldest).toBe(bounds.newest)
    await db.pool.query(`UPDATE activity_journal SET recorded_at = now() - interval '2 days'`)
    expect(await pruneJournal(db)).toBe(1)
    expect((await journalBounds(db)).oldest).toBeNull()
  })

  it('a reset of the chain data empties the journal and restarts its ids', async () => {
    await commitBatch(db.pool, ctx(null), mintBlock(1, 2))
    expect((await journalBounds(db)).newest).toBeGreaterThan(0n)
    await truncateChainData(db.url)
    expect(await journalBounds(db)).toEqual({ newest: 0n, oldest: null })
    await ensureIndexerState(db.pool, { network: 'devnet', chainId: 31337, startBlock: 1 })
    await commitBatch(db.pool, ctx(null), mintBlock(1, 1))
    expect((await readJournal(db, { after: 0n, limit: 10 })).map((e) => e.seq)).toEqual(['1'])
  })
})
