/**
 * One LISTEN connection per web process, fanned out to every consumer of
 * the activity journal in it (live streams, webhook deliveries), docs/push.md
 * "Live stream":
 *  - `journal` callbacks run when entries may have been committed,
 *    `head` callbacks when the indexer's head moved (with the new head);
 *  - a dropped connection is opened again (backoff 0.5 s doubling to 10 s);
 *    after a reconnect every subscriber is woken once, since notifications
 *    sent meanwhile are lost;
 *  - a fallback poll (every `pollMs`, default 5 s) reads the journal's newest
 *    seq and the head and wakes subscribers when either changed, so a lost
 *    notification (or a database that cannot LISTEN) delays an event by at
 *    most one poll, never stalls it.
 * The connection opens with the first subscription and closes with close().
 */
import type { Logger } from '@/config/logger'
import type { Database } from '@/db/database'
import { journalPulse, listenForJournal } from '@/db/queries/journal-notifications'

export interface JournalSubscriber {
  /** New journal entries may have been committed. */
  journal?: () => void
  /** The indexer's head moved. */
  head?: (head: bigint) => void
}

export interface JournalListener {
  /** Adds a subscriber; returns its unsubscribe function. */
  subscribe(subscriber: JournalSubscriber): () => void
  /** The newest head seen (notification or poll); undefined before the first. */
  readonly lastHead: bigint | undefined
  /** Whether the LISTEN connection is open now. */
  readonly listening: boolean
  close(): Promise<void>
}

export interface JournalListenerOptions {
  network: string
  logger?: Logger
  /** Fallback poll interval in ms (default 5000). */
  pollMs?: number
  /** First reconnect delay in ms (default 500), doubled up to 10 s. */
  reconnectMs?: number
}

export function createJournalListener(db: Database, options: JournalListenerOptions): JournalListener {
  const pollMs = options.pollMs ?? 5000
  const firstDelay = options.reconnectMs ?? 500
  const subscribers = new Set<JournalSubscriber>()
  let started = false
  let closed = false
  let stop: (() => Promise<void>) | undefined
  let delay = firstDelay
  let reconnectTimer: NodeJS.Timeout | undefined
  let pollTimer: NodeJS.Timeout | undefined
  let lastHead: bigint | undefined
  let lastNewest: bigint | undefined
  /** Head notifications so far: a poll that one overtook has read an older head (see poll). */
  let headNotifications = 0

  const wakeJournal = () => {
    for (const s of [...subscribers]) safely(() => s.journal?.())
  }
  const wakeHead = (head: bigint) => {
    lastHead = head
    for (const s of [...subscribers]) safely(() => s.head?.(head))
  }
  const notifiedHead = (head: bigint) => {
    headNotifications++
    wakeHead(head)
  }
  const safely = (f: () => void) => {
    try {
      f()
    } catch (err) {
      options.logger?.error({ err }, 'journal subscriber failed')
    }
  }

  const connect = async () => {
    reconnectTimer = undefined
    if (closed) return
    try {
      stop = await listenForJournal(db.pool, { journal: wakeJournal, head: notifiedHead }, (err) => {
        stop = undefined
        if (closed) return
        options.logger?.warn({ err }, 'journal LISTEN connection ended; reconnecting')
        schedule()
      })
      if (closed) {
        await stop()
        return
      }
      if (delay !== firstDelay) {
        // Notifications sent while the connection was down are lost: wake everyone once.
        delay = firstDelay
        wakeJournal()
        void poll()
      }
    } catch (err) {
      options.logger?.warn({ err }, 'journal LISTEN failed; retrying')
      schedule()
    }
  }
  const schedule = () => {
    if (closed || reconnectTimer) return
    reconnectTimer = setTimeout(connect, delay)
    reconnectTimer.unref?.()
    delay = Math.min(delay * 2, 10_000)
  }

  const poll = async () => {
    try {
      const notificationsBefore = headNotifications
      const pulse = await journalPulse(db, options.network)
      if (lastNewest !== undefined && pulse.newest !== lastNewest) wakeJournal()
      lastNewest = pulse.newest
      // A head notified while the read was under way may be newer than the head it read
      // (notifications come in commit order, after the commit): the read's head is not taken
      // then, so the head never steps back to what the poll saw.
      const overtaken = headNotifications !== notificationsBefore
      if (pulse.head !== null && pulse.head !== lastHead && !overtaken) wakeHead(pulse.head)
    } catch (err) {
      options.logger?.debug({ err }, 'journal poll failed')
    }
  }
  const pollLoop = async () => {
    pollTimer = undefined
    if (closed) return
    await poll()
    if (closed) return
    pollTimer = setTimeout(pollLoop, pollMs)
    pollTimer.unref?.()
  }

  const start = () => {
    if (started || closed) return
    started = true
    void connect()
    void pollLoop()
  }

  return {
    subscribe(subscriber) {
      subscribers.add(subscriber)
      start()
      return () => {
        subscribers.delete(subscriber)
      }
    },
    get lastHead() {
      return lastHead
    },
    get listening() {
      return stop !== undefined
    },
    async close() {
      closed = true
      subscribers.clear()
      if (reconnectTimer) clearTimeout(reconnectTimer)
      if (pollTimer) clearTimeout(pollTimer)
      await stop?.()
    },
  }
}
