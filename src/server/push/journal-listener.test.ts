/**
 * The web process's journal listener (journal-listener.ts) on a real
 * PostgreSQL: notifications fan out, a killed connection is reopened, and
 * the fallback poll wakes subscribers when a notification is lost.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Database } from '@/db/database'
import { ensureIndexerState } from '@/indexer/store/state'
import { createTestDatabase, isEmbeddedTestDatabase, type TestDatabase } from '@/test/db'
import { asDatabase } from '@/test/serve-api'
import { createJournalListener, type JournalListener } from './journal-listener'

let db: TestDatabase
const listeners: JournalListener[] = []

beforeAll(async () => {
  db = await createTestDatabase()
  await ensureIndexerState(db.pool, { network: 'devnet', chainId: 31337, startBlock: 1 })
}, 60_000)
afterAll(async () => {
  for (const l of listeners) await l.close()
  await db?.drop()
})

function listen(options: { pollMs?: number; reconnectMs?: number; database?: Database } = {}) {
  const listener = createJournalListener(options.database ?? asDatabase(db), {
    network: 'devnet',
    ...options,
  })
  listeners.push(listener)
  const seen = { journal: 0, heads: [] as bigint[] }
  listener.subscribe({ journal: () => seen.journal++, head: (h) => seen.heads.push(h) })
  const other = { journal: 0 }
  listener.subscribe({ journal: () => other.journal++ })
  return { listener, seen, other }
}

async function until(check: () => boolean, timeoutMs = 5000) {
  const end = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out')
    await new Promise((r) => setTimeout(r, 20))
  }
}

const insertEntry = () =>
  db.pool.query(
    `INSERT INTO activity_journal (kind, transfer_id, collection_address, token_id, from_address, to_address,
       event_type, block_number, block_hash, block_timestamp, transaction_hash, log_index, batch_index, head_block)
     VALUES ('added', 1, '0x01', 1, '0x00', '0x02', 'mint', 1, '0x0a', now(), '0x0b', 0, 0, 1)`,
  )

/** Ends the listener's connection from the server side. */
async function killListenerConnection() {
  const { rowCount } = await db.pool.query(
    `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
      WHERE application_name = $1 AND query LIKE 'LISTEN%' AND pid <> pg_backend_pid()`,
    [db.schema],
  )
  return rowCount
}

// The embedded database (PGlite) delivers no notification to another connection: there
// the fallback poll alone wakes consumers (docs/push.md, "Live stream").
const embedded = isEmbeddedTestDatabase()

describe('journal listener', () => {
  it.skipIf(embedded)('fans journal notifications and head moves out to every subscriber', async () => {
    const { listener, seen, other } = listen({ pollMs: 60_000 })
    await until(() => listener.listening)
    await db.pool.query(`SELECT pg_notify('activity_journal', '')`)
    await until(() => seen.journal >= 1 && other.journal >= 1)
    await db.pool.query(`UPDATE indexer_state SET last_seen_block = 42`)
    await until(() => seen.heads.includes(42n))
    expect(listener.lastHead).toBe(42n)
  })

  it.skipIf(embedded)(
    'a poll whose answer comes after a newer head notification never steps the head back',
    async () => {
      // The poll's read runs on the server at once; its answer is held until released, as on a
      // loaded machine where the notification of a later commit is handled first.
      let release!: () => void
      const held = new Promise<void>((resolve) => {
        release = resolve
      })
      let answered!: () => void
      const pollAnswered = new Promise<void>((resolve) => {
        answered = resolve
      })
      let pollRead!: () => void
      const pollHasRead = new Promise<void>((resolve) => {
        pollRead = resolve
      })
      const pool = new Proxy(db.pool, {
        get(target, name) {
          if (name === 'query') {
            return async (text: string, values?: unknown[]) => {
              const result = await target.query(text, values)
              if (text.includes('FROM activity_journal')) {
                pollRead()
                await held
                setImmediate(answered)
              }
              return result
            }
          }
          const value = Reflect.get(target, name)
          return typeof value === 'function' ? value.bind(target) : value
        },
      })
      await db.pool.query('UPDATE indexer_state SET last_seen_block = 7')
      const { listener, seen } = listen({ pollMs: 60_000, database: asDatabase({ ...db, pool }) })
      await pollHasRead
      await until(() => listener.listening)
      await db.pool.query('UPDATE indexer_state SET last_seen_block = 43')
      await until(() => seen.heads.includes(43n))
      release()
      await pollAnswered
      expect(seen.heads).toEqual([43n])
      expect(listener.lastHead).toBe(43n)
    },
  )

  it.skipIf(embedded)('opens the connection again when it drops, and wakes subscribers once', async () => {
    const { listener, seen } = listen({ pollMs: 60_000, reconnectMs: 50 })
    await until(() => listener.listening)
    expect(await killListenerConnection()).toBeGreaterThan(0)
    await until(() => !listener.listening)
    await until(() => listener.listening)
    await until(() => seen.journal >= 1)
    const before = seen.journal
    await db.pool.query(`SELECT pg_notify('activity_journal', '')`)
    await until(() => seen.journal > before)
  })

  it('the fallback poll wakes subscribers when no notification comes', async () => {
    const { seen } = listen({ pollMs: 100 })
    await new Promise((r) => setTimeout(r, 250))
    const before = seen.journal
    // A raw insert sends no notification (the triggers are on transfers), and nobody listens anyway.
    await insertEntry()
    await until(() => seen.journal > before, 2000)
  })
})
