/**
 * A process's window on the newest activity journal entries (docs/push.md,
 * "Live stream"). Every live stream of a web process wakes on the same
 * notification and wants the same new entries: the window reads them once
 * (with the head) and the streams at the tail decide what to send from
 * memory, so a block costs a few queries per process, not per stream. A
 * consumer further behind than the window reads the database as before.
 */
import {
  type JournalEntry,
  type JournalRemoval,
  ofStandard,
  readJournal,
  removalsOf,
} from '@/db/queries/activity-journal'
import type { StandardFilter } from '@/db/queries/collections'
import { journalPulse } from '@/db/queries/journal-notifications'
import type { ReadDb } from '@/db/queries/sql'

/** Where nextEvents reads the journal (journal-cursor.ts): the database, or a JournalTail. */
export interface JournalSource {
  read(options: {
    after: bigint
    limit: number
    collection?: string | undefined
    eventType?: string | undefined
    /** Absent: every standard. */
    standard?: StandardFilter | undefined
  }): Promise<JournalEntry[]>
  removalsOf(events: JournalEntry[]): Promise<JournalRemoval[]>
}

export const databaseSource = (db: ReadDb): JournalSource => ({
  read: (options) => readJournal(db, options),
  removalsOf: (events) => removalsOf(db, events),
})

export interface JournalPulse {
  /** The newest seq in the window: every entry up to it has been read. */
  newest: bigint
  /** The indexer's head (0 before its first run). */
  head: bigint
}

/** Entries read per query while catching up. */
const READ_BATCH = 1_000

const identity = (e: Pick<JournalEntry, 'transaction_hash' | 'log_index' | 'batch_index'>) =>
  `${e.transaction_hash}:${e.log_index}:${e.batch_index}`

export class JournalTail {
  /** Every committed entry with seq > base, in seq order (null: not read yet). */
  private entries: JournalEntry[] = []
  /** The window's removals by event identity (removals are rare: reorgs). */
  private removals = new Map<string, JournalEntry[]>()
  private base: bigint | null = null
  private pulse: JournalPulse = { newest: 0n, head: 0n }
  private pending: Promise<JournalPulse> | null = null
  private again = false
  readonly source: JournalSource

  constructor(
    private readonly db: ReadDb,
    private readonly network: string,
    private readonly capacity = 20_000,
  ) {
    const fromDatabase = databaseSource(db)
    this.source = {
      read: (options) =>
        this.covers(options.after) ? Promise.resolve(this.readWindow(options)) : fromDatabase.read(options),
      removalsOf: (events) =>
        events.every((e) => this.covers(BigInt(e.seq)))
          ? Promise.resolve(this.removalsInWindow(events))
          : fromDatabase.removalsOf(events),
    }
  }

  /**
   * Brings the window up to the newest committed entries and the head. A call
   * while a read runs gets a read that starts after the call (entries
   * committed just before it are never missed); concurrent callers share it.
   */
  refresh(): Promise<JournalPulse> {
    if (this.pending) {
      this.again = true
      return this.pending
    }
    this.pending = (async () => {
      try {
        do {
          this.again = false
          await this.readNew()
        } while (this.again)
        return this.pulse
      } finally {
        this.pending = null
      }
    })()
    return this.pending
  }

  private covers(after: bigint) {
    return this.base !== null && after >= this.base
  }

  private async readNew() {
    const pulse = await journalPulse(this.db, this.network)
    // A new window starts at the newest entry: what came before is read from the database.
    if (this.base === null) this.base = pulse.newest
    // Further behind than it keeps (no stream read it for a while): it starts again among the
    // newest entries rather than reading the whole backlog into memory to trim it after.
    const last = this.entries.length > 0 ? BigInt(this.entries.at(-1)!.seq) : this.base
    if (pulse.newest - last > BigInt(this.capacity)) {
      this.entries = []
      this.removals.clear()
      this.base = pulse.newest - BigInt(this.capacity)
    }
    for (;;) {
      const after = this.entries.length > 0 ? BigInt(this.entries.at(-1)!.seq) : this.base
      const rows = await readJournal(this.db, { after, limit: READ_BATCH })
      for (const row of rows) {
        this.entries.push(row)
        if (row.kind === 'removed')
          this.removals.set(identity(row), [...(this.removals.get(identity(row)) ?? []), row])
      }
      if (rows.length < READ_BATCH) break
    }
    if (this.entries.length > this.capacity) {
      const dropped = this.entries.splice(0, this.entries.length - this.capacity)
      const base = BigInt(dropped.at(-1)!.seq)
      this.base = base
      for (const [key, list] of this.removals) {
        const kept = list.filter((e) => BigInt(e.seq) > base)
        if (kept.length === 0) this.removals.delete(key)
        else this.removals.set(key, kept)
      }
    }
    const newest = this.entries.length > 0 ? BigInt(this.entries.at(-1)!.seq) : this.base
    this.pulse = { newest, head: pulse.head ?? 0n }
  }

  private readWindow(options: Parameters<JournalSource['read']>[0]): JournalEntry[] {
    const out: JournalEntry[] = []
    for (let i = this.firstAfter(options.after); i < this.entries.length && out.length < options.limit; i++) {
      const entry = this.entries[i]!
      if (options.collection !== undefined && entry.collection_address !== options.collection) continue
      if (options.eventType !== undefined && entry.event_type !== options.eventType) continue
      if (options.standard !== undefined && !ofStandard(entry, options.standard)) continue
      out.push(entry)
    }
    return out
  }

  /** Index of the first entry with seq > after (binary search: entries are in seq order). */
  private firstAfter(after: bigint): number {
    let lo = 0
    let hi = this.entries.length
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (BigInt(this.entries[mid]!.seq) <= after) lo = mid + 1
      else hi = mid
    }
    return lo
  }

  /** A removal comes after its addition, so an addition in the window has its removals there too. */
  private removalsInWindow(events: JournalEntry[]): JournalRemoval[] {
    const out: JournalRemoval[] = []
    for (const key of new Set(events.map(identity))) out.push(...(this.removals.get(key) ?? []))
    return out.sort((a, b) => (BigInt(a.seq) < BigInt(b.seq) ? -1 : 1))
  }
}
