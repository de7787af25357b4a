/**
 * One live activity stream (docs/push.md, "Live stream"): the events a
 * consumer at journal position `after` receives, written as Server-Sent
 * Events as they are committed. What is sent is nextEvents' decision
 * (journal-cursor.ts), so a stream resumed from the id of the last event
 * it sent goes on exactly where it stopped: nothing lost, nothing twice.
 * The process's JournalListener wakes it; a heartbeat comment keeps idle
 * connections open through proxies. Access control and the HTTP exchange
 * before the first byte are the REST layer's (src/server/rest/stream).
 */
import type { Logger } from '@/config/logger'
import { toPushEvent } from './activity-event'
import { type ConsumerFilter, nextEvents } from './journal-cursor'
import type { JournalListener } from './journal-listener'
import type { JournalTail } from './journal-tail'

/** Journal entries read per query; a stream far behind catches up in batches of this size. */
const BATCH = 500

/** Where the frames go: a ServerResponse, or anything with its write/drain contract. */
export interface StreamSink {
  write(chunk: string): boolean
  once(event: 'drain', listener: () => void): unknown
  off(event: 'drain', listener: () => void): unknown
}

export interface ActivityStreamOptions {
  /** The process's window on the newest entries, shared by its streams. */
  tail: JournalTail
  listener: JournalListener
  network: string
  filter: ConsumerFilter
  /** The resume point: events with a greater id are sent. */
  after: bigint
  /** Between heartbeat comments (ms). */
  heartbeatMs: number
  /** Before a failed read is made again (ms); default 2,000. */
  retryMs?: number
  /**
   * How long the client may leave written frames unread (ms); default 60,000. Past it
   * `onStalled` is called: a client that stops reading must not hold its batch, its
   * socket and its stream slot for ever.
   */
  stallMs?: number
  onStalled?: () => void
  logger?: Logger
}

/** An SSE frame of one push event: id, event type and the event's JSON. */
export function eventFrame(event: { id: string; type: string }): string {
  return `id: ${event.id}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`
}

export const HEARTBEAT_FRAME = ': heartbeat\n\n'

export class ActivityStream {
  private cursor: bigint
  /** The id of the last event written (the client's Last-Event-ID); the start point before any. */
  lastSent: bigint
  private waiting = false
  private pumping = false
  private again = false
  private closed = false
  private readonly heartbeat: NodeJS.Timeout
  private retry: NodeJS.Timeout | undefined
  private readonly unsubscribe: () => void
  private drainWaiter: (() => void) | undefined
  private draining: Promise<void> | undefined

  constructor(
    private readonly sink: StreamSink,
    private readonly options: ActivityStreamOptions,
  ) {
    this.cursor = options.after
    this.lastSent = options.after
    this.unsubscribe = options.listener.subscribe({
      journal: () => this.wake(),
      // A head move matters only to an addition held for its confirmations: one held now, or
      // one the read under way may hold with the head it read before (a batch waiting for the
      // client to drain it reads no newer head; the wake makes it read again after).
      head: () => {
        if (this.waiting || (this.pumping && options.filter.minConfirmations > 0)) this.wake()
      },
    })
    this.heartbeat = setInterval(() => {
      // Not while frames wait for the client: a heartbeat is for an idle connection. One the
      // client leaves unread starts the same deadline (a stream that matches nothing).
      if (this.closed || this.draining) return
      if (!this.sink.write(HEARTBEAT_FRAME)) void this.drained()
    }, options.heartbeatMs)
    this.wake()
  }

  /** Reads and sends what is due; a wake during a read runs another read after it. */
  wake(): void {
    if (this.closed) return
    if (this.pumping) {
      this.again = true
      return
    }
    this.pumping = true
    void this.pump().finally(() => {
      this.pumping = false
    })
  }

  private async pump() {
    do {
      this.again = false
      try {
        await this.sendDue()
      } catch (err) {
        // The database failed. Read again soon: the listener wakes a stream only when the journal
        // or the head moves, which on a quiet chain may be long after.
        this.options.logger?.warn({ err }, 'live stream read failed')
        clearTimeout(this.retry)
        if (!this.closed) this.retry = setTimeout(() => this.wake(), this.options.retryMs ?? 2_000)
      }
    } while (this.again && !this.closed)
  }

  private async sendDue() {
    const { tail, network, filter } = this.options
    const pulse = await tail.refresh()
    const head = pulse.head
    for (;;) {
      if (this.closed) return
      const from = this.cursor
      const next = await nextEvents(tail.source, head, from, filter, BATCH)
      if (this.closed) return
      let frames = ''
      // A stream that named a standard gets the extension fields (amount), as /v1/activity does.
      const extended = filter.standard !== undefined
      for (const entry of next.entries) frames += eventFrame(toPushEvent(entry, network, head, extended))
      this.cursor = next.cursor
      this.waiting = next.waiting
      const last = next.entries.at(-1)
      if (last) this.lastSent = BigInt(last.seq)
      if (frames && !this.sink.write(frames)) await this.drained()
      if (next.waiting) return
      if (next.cursor === from) {
        // Nothing more for this stream up to the newest entry seen before the read (seq order is
        // commit order): a filtered stream need not read the other collections' entries again.
        if (pulse.newest > this.cursor) this.cursor = pulse.newest
        return
      }
    }
  }

  /**
   * Waits for the client to take what was written, for stallMs at most (then onStalled); one
   * wait at a time, shared by the reads and the heartbeat.
   */
  private drained(): Promise<void> {
    this.draining ??= new Promise<void>((resolve) => {
      const stalled = setTimeout(() => {
        this.options.logger?.info('live stream ended: the client left its events unread')
        this.options.onStalled?.()
        this.close()
      }, this.options.stallMs ?? 60_000)
      this.drainWaiter = () => {
        clearTimeout(stalled)
        this.drainWaiter = undefined
        this.draining = undefined
        resolve()
      }
      this.sink.once('drain', this.drainWaiter)
    })
    return this.draining
  }

  /** Stops reading and writing (the response ends elsewhere). Idempotent. */
  close(): void {
    if (this.closed) return
    this.closed = true
    clearInterval(this.heartbeat)
    clearTimeout(this.retry)
    this.unsubscribe()
    if (this.drainWaiter) {
      this.sink.off('drain', this.drainWaiter)
      this.drainWaiter()
    }
  }
}
