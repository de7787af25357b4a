/**
 * What a push consumer receives next (journal-cursor.ts): in journal order,
 * additions held until they have their confirmations, reorged events that
 * never had them skipped (both halves), and the same answer on every resume.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import { JournalWriter } from '@/test/journal-writes'
import { nextEvents } from './journal-cursor'
import { databaseSource, JournalTail } from './journal-tail'

let db: TestDatabase

beforeAll(async () => {
  db = await createTestDatabase()
}, 60_000)
afterAll(async () => {
  await db?.drop()
})
let journal: JournalWriter
beforeEach(async () => {
  journal ??= new JournalWriter(db.pool)
  await journal.reset()
})

const sent = async (head: number, after: bigint, minConfirmations: number) => {
  const next = await nextEvents(databaseSource(db), BigInt(head), after, { minConfirmations })
  return {
    events: next.entries.map((e) => `${e.kind}:${e.token_id}`),
    cursor: next.cursor,
    waiting: next.waiting,
  }
}

describe('ERC-1155 entries (docs/push.md, "ERC-1155")', () => {
  it('are journaled with their amount and sent only to a consumer that asks for them', async () => {
    await journal.commitBlock(1, 1)
    await journal.insertErc1155(1, 7, 5n)
    await journal.commitBlock(2, 2)
    const { rows } = await db.pool.query(
      'SELECT token_id::text, amount::text FROM activity_journal ORDER BY seq',
    )
    expect(rows).toEqual([
      { token_id: '1', amount: null },
      { token_id: '7', amount: '5' },
      { token_id: '2', amount: null },
    ])
    const of = async (standard: 'ERC721' | 'ERC1155' | 'all' | undefined, source = databaseSource(db)) =>
      (await nextEvents(source, 2n, 0n, { minConfirmations: 0, standard })).entries.map(
        (e) => `${e.token_id}:${e.amount}`,
      )
    expect(await of(undefined)).toEqual(['1:null', '2:null'])
    expect(await of('ERC721')).toEqual(['1:null', '2:null'])
    expect(await of('ERC1155')).toEqual(['7:5'])
    expect(await of('all')).toEqual(['1:null', '7:5', '2:null'])
    // A process window decides the same from memory.
    const tail = new JournalTail(db, 'devnet')
    await tail.refresh()
    await journal.insertErc1155(3, 8, 2n)
    await journal.commitBlock(3, 3)
    await tail.refresh()
    const after =
      BigInt((await db.pool.query('SELECT min(seq)::text AS s FROM activity_journal')).rows[0].s) + 2n
    const windowed = async (standard?: 'ERC1155' | 'all') =>
      (await nextEvents(tail.source, 3n, after, { minConfirmations: 0, standard })).entries.map(
        (e) => e.token_id,
      )
    expect(await windowed()).toEqual(['3'])
    expect(await windowed('ERC1155')).toEqual(['8'])
    expect(await windowed('all')).toEqual(['8', '3'])
  })
})

describe('next events of a push consumer', () => {
  it('without confirmations: every entry in journal order, removals included', async () => {
    await journal.commitBlock(1, 1)
    await journal.commitBlock(2, 2)
    await journal.reorgTo(1, 2)
    await journal.commitBlock(2, 2, 1)
    const all = await sent(2, 0n, 0)
    expect(all.events).toEqual(['added:1', 'added:2', 'removed:2', 'added:1002'])
    expect(all.waiting).toBe(false)
    // Resuming after the second event gives the rest, nothing twice.
    const first = await nextEvents(databaseSource(db), 2n, 0n, { minConfirmations: 0 }, 2)
    expect((await sent(2, first.cursor, 0)).events).toEqual(['removed:2', 'added:1002'])
  })

  it('an addition waits for its confirmations and holds back what follows it', async () => {
    await journal.commitBlock(1, 1)
    await journal.commitBlock(2, 2)
    expect(await sent(2, 0n, 1)).toMatchObject({ events: ['added:1'], waiting: true })
    const held = await sent(2, 0n, 1)
    expect((await sent(3, held.cursor, 1)).events).toEqual(['added:2'])
  })

  it('an event reorged away before its confirmations is never sent, nor its removal; one reorged after them is both', async () => {
    await journal.commitBlock(1, 1)
    await journal.commitBlock(2, 2)
    await journal.commitBlock(3, 3)
    // Block 3 is removed at head 3 (no confirmation yet); block 2 had one.
    await journal.reorgTo(1, 3)
    await journal.commitBlock(2, 4, 1)
    await journal.commitBlock(3, 6, 1)
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
    await journal.commitBlock(1, 1)
    await journal.commitBlock(2, 2)
    await journal.commitBlock(3, 3)
    await journal.reorgTo(1, 3)
    await journal.commitBlock(2, 4, 1)
    await journal.commitBlock(3, 6, 1)
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
