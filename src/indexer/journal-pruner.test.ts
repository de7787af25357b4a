/** The indexer's pruning of the activity journal (journal-pruner.ts) on a real PostgreSQL. */
import pino from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import { JournalWriter } from '@/test/journal-writes'
import { pruneJournalOnce, runJournalPruner } from './journal-pruner'

let db: TestDatabase

beforeAll(async () => {
  db = await createTestDatabase()
}, 60_000)
afterAll(async () => {
  await db?.drop()
})

const seqs = async () =>
  (
    await db.pool.query<{ seq: string }>('SELECT seq::text AS seq FROM activity_journal j ORDER BY j.seq')
  ).rows.map((r) => r.seq)

describe('activity journal pruning', () => {
  it('deletes the entries past the retention, in batches, and keeps the rest', async () => {
    const journal = new JournalWriter(db.pool)
    await journal.reset()
    for (let block = 1; block <= 5; block++) await journal.commitBlock(block, block)
    const all = await seqs()
    await db.pool.query(
      `UPDATE activity_journal SET recorded_at = now() - interval '25 hours' WHERE seq <= $1`,
      [all[2]],
    )
    expect(await pruneJournalOnce(db.pool, { batch: 2 })).toBe(3)
    expect(await seqs()).toEqual(all.slice(3))
    expect(await pruneJournalOnce(db.pool)).toBe(0)
  })

  it('runs as a task of the indexer until its signal aborts', async () => {
    const journal = new JournalWriter(db.pool)
    await journal.reset()
    await journal.commitBlock(1, 1)
    await db.pool.query(`UPDATE activity_journal SET recorded_at = now() - interval '25 hours'`)
    const stop = new AbortController()
    const task = runJournalPruner(
      { pool: db.pool, logger: pino({ level: 'silent' }), signal: stop.signal },
      { everyMs: 50 },
    )
    const end = Date.now() + 5000
    while ((await seqs()).length > 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 20))
    expect(await seqs()).toEqual([])
    stop.abort()
    await task
  })
})
