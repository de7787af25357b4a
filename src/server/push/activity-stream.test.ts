/**
 * One live stream (ActivityStream) on a real journal, with a client that reads slowly and a
 * listener the test drives (the real one shares its NOTIFY channels with every test of the run):
 * a stream that waits for confirmations sends a held addition once the head moves, also when
 * the head moved while the stream waited for its client to drain (docs/push.md, "Live stream").
 */
import { EventEmitter } from 'node:events'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { ensureIndexerState } from '@/indexer/store/state'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import { insertJournalAdditions, upTo } from '@/test/journal-writes'
import { asDatabase } from '@/test/serve-api'
import { ActivityStream, HEARTBEAT_FRAME, type StreamSink } from './activity-stream'
import type { ConsumerFilter } from './journal-cursor'
import type { JournalListener, JournalSubscriber } from './journal-listener'
import { JournalTail } from './journal-tail'

let db: TestDatabase

beforeAll(async () => {
  db = await createTestDatabase()
  await ensureIndexerState(db.pool, { network: 'devnet', chainId: 31337, startBlock: 1 })
}, 60_000)
afterAll(async () => {
  await db?.drop()
})

/** A listener whose notifications the test sends. */
function drivenListener() {
  const subscribers = new Set<JournalSubscriber>()
  const listener: JournalListener = {
    subscribe(subscriber) {
      subscribers.add(subscriber)
      return () => subscribers.delete(subscriber)
    },
    lastHead: undefined,
    listening: true,
    close: async () => {},
  }
  const headMoved = (head: bigint) => {
    for (const s of subscribers) s.head?.(head)
  }
  return { listener, headMoved }
}

/** A client that does not read until told: write() reports backpressure until then, as a full socket does. */
class SlowSink extends EventEmitter implements StreamSink {
  frames: string[] = []
  blocked = true
  write(chunk: string): boolean {
    this.frames.push(chunk)
    return !this.blocked
  }
  drain() {
    this.blocked = false
    this.emit('drain')
  }
  ids() {
    return (
      this.frames
        .join('')
        .match(/^id: \d+$/gm)
        ?.map((l) => l.slice(4)) ?? []
    )
  }
}

const until = async (check: () => boolean, ms: number) => {
  const end = Date.now() + ms
  while (!check() && Date.now() < end) await new Promise((r) => setTimeout(r, 20))
  return check()
}

describe('live stream with min_confirmations under backpressure', () => {
  it('a head move while the stream waits for drain still releases the held addition', async () => {
    // 500 additions in block 1 (one full stream batch), then one in block 2; head 2, m = 1.
    await insertJournalAdditions(db.pool, upTo(1, 501), 2, (g) => (g <= 500 ? 1 : 2))
    await db.pool.query(`UPDATE indexer_state SET last_seen_block = 2`)
    const newest = BigInt((await db.pool.query(`SELECT max(seq)::text AS n FROM activity_journal`)).rows[0].n)

    const database = asDatabase(db)
    const { listener, headMoved } = drivenListener()
    const tail = new JournalTail(database, 'devnet')
    const sink = new SlowSink()
    const stream = new ActivityStream(sink, {
      tail,
      listener,
      network: 'devnet',
      filter: { minConfirmations: 1 },
      after: newest - 501n,
      heartbeatMs: 60_000,
    })
    try {
      // The first batch (block 1) is written; the client has not read it yet.
      expect(await until(() => sink.ids().length === 500, 5_000)).toBe(true)
      // The head moves (a block without transfers: no journal entry) while the stream waits to drain.
      await db.pool.query(`UPDATE indexer_state SET last_seen_block = 3`)
      headMoved(3n)
      // The client reads: the block-2 addition now has its confirmation and must follow.
      sink.drain()
      await until(() => sink.ids().length === 501, 3_000)
      expect(sink.ids().length).toBe(501)
    } finally {
      stream.close()
    }
  })
})

describe('live stream after a failed read', () => {
  it('reads again by itself: a failed read is not left until the journal or the head moves', async () => {
    await db.pool.query('TRUNCATE activity_journal')
    await insertJournalAdditions(db.pool, upTo(1, 3), 1)
    const oldest = BigInt((await db.pool.query(`SELECT min(seq)::text AS n FROM activity_journal`)).rows[0].n)
    const tail = new JournalTail(asDatabase(db), 'devnet')
    // The first read fails (a statement timeout, a pool that could not connect); the listener
    // then sends nothing: no entry is committed and the head does not move.
    const refresh = vi
      .spyOn(tail, 'refresh')
      .mockRejectedValueOnce(new Error('canceling statement due to statement timeout'))
    const sink = new SlowSink()
    sink.drain()
    const stream = new ActivityStream(sink, {
      tail,
      listener: drivenListener().listener,
      network: 'devnet',
      filter: { minConfirmations: 0 },
      after: oldest - 1n,
      heartbeatMs: 60_000,
      retryMs: 200,
    })
    try {
      expect(await until(() => sink.ids().length === 3, 5_000)).toBe(true)
      expect(refresh.mock.calls.length).toBeGreaterThanOrEqual(2)
    } finally {
      stream.close()
    }
  })
})

/** A stream to a client that reads nothing (heartbeats every 50 ms, a 400 ms deadline); how often it was cut. */
function unreadStream(filter: ConsumerFilter, after: bigint) {
  const sink = new SlowSink()
  const cut = { count: 0 }
  const stream = new ActivityStream(sink, {
    tail: new JournalTail(asDatabase(db), 'devnet'),
    listener: drivenListener().listener,
    network: 'devnet',
    filter,
    after,
    heartbeatMs: 50,
    stallMs: 400,
    onStalled: () => cut.count++,
  })
  return { sink, stream, cut }
}

describe('live stream to a client that stops reading', () => {
  it('is ended once its events stay unread for stallMs, and sends no heartbeat meanwhile', async () => {
    await db.pool.query('TRUNCATE activity_journal')
    await insertJournalAdditions(db.pool, upTo(1, 3), 1)
    const oldest = BigInt((await db.pool.query(`SELECT min(seq)::text AS n FROM activity_journal`)).rows[0].n)
    const { sink, stream, cut } = unreadStream({ minConfirmations: 0 }, oldest - 1n)
    try {
      expect(await until(() => sink.ids().length === 3, 5_000)).toBe(true)
      const written = sink.frames.length
      expect(await until(() => cut.count > 0, 3_000)).toBe(true)
      // Nothing was written while the events waited (a heartbeat would only add to the backlog),
      // and nothing after: the stream is closed.
      await new Promise((r) => setTimeout(r, 200))
      expect({ cut: cut.count, frames: sink.frames.length }).toEqual({ cut: 1, frames: written })
    } finally {
      stream.close()
    }
  })

  it('with nothing to send, is ended once its heartbeat stays unread for stallMs', async () => {
    // A collection with no events: only heartbeats are ever written.
    const { sink, stream, cut } = unreadStream(
      { minConfirmations: 0, collection: '0x00000000000000000000000000000000000000ee' },
      0n,
    )
    try {
      expect(await until(() => cut.count > 0, 3_000)).toBe(true)
      // The first heartbeat went unread: no other was written behind it.
      expect({ cut: cut.count, frames: sink.frames }).toEqual({ cut: 1, frames: [HEARTBEAT_FRAME] })
    } finally {
      stream.close()
    }
  })
})
