/**
 * What a push consumer receives next (journal-cursor.ts): in journal order,
 * additions held until they have their confirmations, reorged events that
 * never had them skipped (both halves), and the same answer on every resume.
 */
import type { Hex } from 'viem'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { TransferEvent } from '@/indexer/events/types'
import { commitBatch, type IngestBatch } from '@/indexer/store/commit'
import { rollbackAfter } from '@/indexer/store/rollback'
import { ensureIndexerState } from '@/indexer/store/state'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import { nextEvents } from './journal-cursor'
import { databaseSource, JournalTail } from './journal-tail'

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
let lastIndexed: bigint | null = null

/** Commits block `block` (of fork `fork`) with one mint, the head at `head`. */
async function commitBlock(block: number, head: number, fork = 0) {
  const hash = hex(fork * 1_000 + block, 32)
  const transfer: TransferEvent = {
    collection: hex(0xf1, 20),
    tokenId: BigInt(fork * 1_000 + block),
    from: hex(0, 20),
    to: hex(0xa1, 20),
    blockNumber: BigInt(block),
    blockHash: hash,
    blockTimestamp: NOW + BigInt(block),
    transactionHash: hash,
    logIndex: 0,
    batchIndex: 0,
    standard: 'ERC721',
  }
  const batch: IngestBatch = {
    fromBlock: BigInt(block),
    toBlock: BigInt(block),
    transfers: [transfer],
    metadataUpdates: [],
    verified: false,
    blocks: [{ number: BigInt(block), hash, parentHash: hex(block - 1, 32), timestamp: NOW + BigInt(block) }],
    lastSeenBlock: BigInt(head),
    chainConfirmedBlock: 0n,
  }
  const ctx = {
    network: 'devnet',
    startBlock: 1n,
    expectedLastIndexed: block === 1 ? null : lastIndexed,
    keepBlocks: 64n,
  }
  lastIndexed = (await commitBatch(db.pool, ctx, batch)).lastIndexedBlock
}

/** A reorg back to `ancestor` seen at head `head`. */
async function reorgTo(ancestor: number, head: number) {
  await db.pool.query('UPDATE indexer_state SET last_seen_block = $1', [head])
  const progress = await rollbackAfter(
    db.pool,
    { network: 'devnet', startBlock: 1n, lastSeenBlock: BigInt(head), chainConfirmedBlock: 0n },
    BigInt(ancestor),
  )
  lastIndexed = progress.lastIndexedBlock
}

const sent = async (head: number, after: bigint, minConfirmations: number) => {
  const next = await nextEvents(databaseSource(db), BigInt(head), after, { minConfirmations })
  return {
    events: next.entries.map((e) => `${e.kind}:${e.token_id}`),
    cursor: next.cursor,
    waiting: next.waiting,
  }
}

describe('next events of a push consumer', () => {
  it('without confirmations: every entry in journal order, removals included', async () => {
    await commitBlock(1, 1)
    await commitBlock(2, 2)
    await reorgTo(1, 2)
    await commitBlock(2, 2, 1)
    const all = await sent(2, 0n, 0)
    expect(all.events).toEqual(['added:1', 'added:2', 'removed:2', 'added:1002'])
    expect(all.waiting).toBe(false)
    // Resuming after the second event gives the rest, nothing twice.
    const first = await nextEvents(databaseSource(db), 2n, 0n, { minConfirmations: 0 }, 2)
    expect((await sent(2, first.cursor, 0)).events).toEqual(['removed:2', 'added:1002'])
  })

  it('an addition waits for its confirmations and holds back what follows it', async () => {
    await commitBlock(1, 1)
    await commitBlock(2, 2)
    expect(await sent(2, 0n, 1)).toMatchObject({ events: ['added:1'], waiting: true })
    const held = await sent(2, 0n, 1)
    expect((await sent(3, held.cursor, 1)).events).toEqual(['added:2'])
  })

  it('an event reorged away before its confirmations is never sent, nor its removal; one reorged after them is both', async () => {
    await commitBlock(1, 1)
    await commitBlock(2, 2)
    await commitBlock(3, 3)
    // Block 3 is removed at head 3 (no confirmation yet); block 2 had one.
    await reorgTo(1, 3)
    await commitBlock(2, 4, 1)
    await commitBlock(3, 6, 1)
    const run = await sent(6, 0n, 1)
    expect(run.events).toEqual(['added:1', 'added:2', 'removed:2', 'added:1002', 'added:1003'])
    expect(run.events).not.toContain('added:3')
    // Waiting for two, block 2's first event never had them before it was removed: neither half is sent.
    const early = await sent(6, 0n, 2)
    expect(early.events).toEqual(['added:1', 'added:1002', 'added:1003'])
  })

  it('a process window on the newest entries decides as the database does, and falls back to it behind the window', async () => {
    const tail = new JournalTail(db, 'devnet', 4)
    await tail.refresh()
    await commitBlock(1, 1)
    await commitBlock(2, 2)
    await commitBlock(3, 3)
    await reorgTo(1, 3)
    await commitBlock(2, 4, 1)
    await commitBlock(3, 6, 1)
    const pulse = await tail.refresh()
    expect(pulse.head).toBe(6n)
    const seqs = (await nextEvents(databaseSource(db), 6n, 0n, { minConfirmations: 0 })).entries.map((e) =>
      BigInt(e.seq),
    )
    expect(pulse.newest).toBe(seqs.at(-1))
    const from = [0n, ...seqs]
    for (const minConfirmations of [0, 1, 2]) {
      for (const after of from) {
        const fromWindow = await nextEvents(tail.source, 6n, after, { minConfirmations })
        const fromDatabase = await nextEvents(databaseSource(db), 6n, after, { minConfirmations })
        expect(fromWindow).toEqual(fromDatabase)
      }
    }
    // The window holds the last 4 entries: reads there no longer need the table.
    await db.pool.query('DELETE FROM activity_journal')
    const inWindow = await nextEvents(tail.source, 6n, seqs.at(-4)!, { minConfirmations: 0 })
    expect(inWindow.entries.map((e) => BigInt(e.seq))).toEqual(seqs.slice(-3))
    const behind = await nextEvents(tail.source, 6n, 0n, { minConfirmations: 0 })
    expect(behind.entries).toEqual([])
  })
})
