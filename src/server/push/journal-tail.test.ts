/**
 * The process's window on the newest journal entries (journal-tail.ts) after an idle spell:
 * when the streams come back behind more entries than the window holds, it starts again at the
 * newest ones instead of reading the whole backlog into memory and trimming it after; reads from
 * before the window still come from the database, complete.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ensureIndexerState } from '@/indexer/store/state'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import { insertJournalAdditions, upTo } from '@/test/journal-writes'
import { asDatabase } from '@/test/serve-api'
import { JournalTail } from './journal-tail'

let db: TestDatabase

beforeAll(async () => {
  db = await createTestDatabase()
  await ensureIndexerState(db.pool, { network: 'devnet', chainId: 31337, startBlock: 1 })
}, 60_000)

afterAll(async () => {
  await db?.drop()
})

const journal = (from: number, to: number) => insertJournalAdditions(db.pool, upTo(from, to), 1)

describe('the journal window after an idle spell', () => {
  it('reads no more of a backlog than it keeps, and older reads still come whole from the database', async () => {
    await journal(1, 10)
    // Journal rows the window's own database reads returned.
    let rowsRead = 0
    const database = asDatabase(db)
    const counted = {
      ...database,
      pool: new Proxy(database.pool, {
        get(pool, key) {
          if (key !== 'query') return Reflect.get(pool, key)
          return async (...args: Parameters<typeof pool.query>) => {
            const result = await (pool.query as (...a: unknown[]) => Promise<{ rows: unknown[] }>)(...args)
            if (String(args[0]).includes('FROM activity_journal')) rowsRead += result.rows.length
            return result
          }
        },
      }),
    }
    const tail = new JournalTail(counted, 'devnet', 100)
    const first = await tail.refresh()
    // The streams close; 5,000 entries are journaled before the next one opens.
    await journal(11, 5_010)
    rowsRead = 0
    const pulse = await tail.refresh()
    expect(pulse.newest - first.newest).toBe(5_000n)
    // The entries it keeps, and the row of its pulse (the newest seq and the head).
    expect(rowsRead).toBeLessThanOrEqual(101)
    // The newest entries from the window, older ones from the database: the same, whole.
    const fromWindow = await tail.source.read({ after: pulse.newest - 50n, limit: 100 })
    expect(fromWindow.map((e) => BigInt(e.seq))).toEqual(
      Array.from({ length: 50 }, (_, i) => pulse.newest - 49n + BigInt(i)),
    )
    const older = await tail.source.read({ after: first.newest, limit: 1_000 })
    expect(older.map((e) => BigInt(e.seq))).toEqual(
      Array.from({ length: 1_000 }, (_, i) => first.newest + 1n + BigInt(i)),
    )
  })
})
