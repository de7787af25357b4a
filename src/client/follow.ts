/**
 * Following new activity, as the specification describes it: poll the first
 * page of /v1/activity at an interval (12 s suits a 12 s block time) and
 * deduplicate locally. An event is identified by `transaction_hash` and
 * `log_index`, plus `batch_index` for the tokens of one ERC-2309 range log.
 *
 * When more events arrived between two polls than one page holds, the
 * follower reads further pages (through `next_page_params`) until it meets
 * an event it has already seen, so nothing is skipped: at most
 * `maxPagesPerPoll` pages per poll, and where a burst is longer, the next
 * poll (after at most a second) goes on from the cursor where this one
 * stopped. Events are yielded oldest first once the walk back has met a seen
 * one; the events held meanwhile are bounded by `memory`, past which they
 * are yielded (oldest first) before the older rest of the burst. The
 * identities remembered are bounded (`memory`): an event older than that
 * many newer ones is not expected back on the first page.
 *
 * Extension: when the server has the live stream (GET /v1/activity/stream,
 * Server-Sent Events), the follower uses it instead of polling: the stream
 * is opened first, then (unless `skipExisting`) the first page is read and
 * handed out, then the stream's events, each once. A broken connection is
 * resumed from the last event id received (nothing lost, nothing twice);
 * events a reorganisation took away go to `onRemoved`. A server without
 * the stream (404, 405) or a runtime whose fetch cannot stream a body makes
 * the follower poll as above.
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser'
import { NftDataApiError } from './errors.js'
import { retryDelayMs } from './retry.js'
import type { paths } from './schema.js'

type ActivityPage = paths['/v1/activity']['get']['responses'][200]['content']['application/json']
export type ActivityItem = ActivityPage['data'][number]
export type ActivityQuery = NonNullable<paths['/v1/activity']['get']['parameters']['query']>

export interface FollowOptions {
  /** Filters of the feed (`collection`, `event_type`); `limit` is the page size (default 100). */
  query?: Omit<ActivityQuery, 'before_timestamp' | 'before_id'>
  /** Between two polls. Default 12 000 ms. */
  intervalMs?: number
  /** Yield nothing of what the feed holds at the start: only what comes after. Default false. */
  skipExisting?: boolean
  /** Pages read in one poll at most; a longer burst is read on in the next polls. Default 10. */
  maxPagesPerPoll?: number
  /** Event identities remembered. Default 10 000. */
  memory?: number
  /** Stops the follower (the generator returns). */
  signal?: AbortSignal
  /** Use the live stream when the server has one (default true); false: always poll. */
  stream?: boolean
  /** With the live stream: an event handed out before that a reorganisation took away. */
  onRemoved?: (event: ActivityItem) => void
  /** Called once the follower knows how it follows: `stream` or `poll`. */
  onMode?: (mode: 'stream' | 'poll') => void
}

/** The live stream's filters (those of the feed). */
export type StreamQuery = Pick<ActivityQuery, 'collection' | 'event_type' | 'standard'>

/** Opens GET /v1/activity/stream (after `lastEventId` when given); the response, whatever its status. */
export type OpenStream = (
  query: StreamQuery,
  lastEventId: string | undefined,
  signal: AbortSignal | undefined,
) => Promise<Response>

/** The identity of an event for deduplication. */
export function eventKey(event: ActivityItem): string {
  return `${event.transaction_hash}:${event.log_index}:${event.batch_index ?? 0}`
}

type ReadPage = (query: ActivityQuery, signal: AbortSignal | undefined) => Promise<ActivityPage>

export async function* followActivity(
  readPage: ReadPage,
  options: FollowOptions = {},
  openStream?: OpenStream,
): AsyncGenerator<ActivityItem, void, undefined> {
  if (openStream && options.stream !== false) {
    const outcome = yield* followStream(readPage, openStream, options)
    if (outcome === 'done') return
  }
  options.onMode?.('poll')
  yield* pollActivity(readPage, options)
}

async function* pollActivity(
  readPage: ReadPage,
  options: FollowOptions,
): AsyncGenerator<ActivityItem, void, undefined> {
  const { signal } = options
  const intervalMs = options.intervalMs ?? 12_000
  const maxPages = options.maxPagesPerPoll ?? 10
  const memory = options.memory ?? 10_000
  const seen = new RecentKeys(memory)
  const query: ActivityQuery = { limit: 100, ...options.query }
  let first = true
  // Unseen events read (newest first) and not yet yielded, and where the walk back goes on.
  let held: ActivityItem[] = []
  let resume: Cursor | undefined
  while (!signal?.aborted) {
    let cursor: Cursor = resume ?? {}
    let caughtUp = false
    // The first poll reads one page: the feed's whole history is not "new".
    for (let page = 0; page < (first ? 1 : maxPages); page++) {
      const body = await readPage({ ...query, ...cursor }, signal).catch((err) => {
        if (signal?.aborted) return undefined
        throw err
      })
      if (!body) return
      const unseen = body.data.filter((event) => !seen.has(eventKey(event)))
      held.push(...unseen)
      const next = body.pagination.next_page_params
      // A page holding a known event reaches back to what was read before.
      caughtUp = first || unseen.length < body.data.length || !body.pagination.has_more || !next
      if (caughtUp || !next) break
      cursor = next
    }
    resume = caughtUp ? undefined : cursor
    // Newest first on the wire; handed out oldest first, once nothing older is left unread
    // (or when more is held than `memory`: then what is held goes first, the older rest after).
    if (caughtUp || held.length >= memory) {
      for (const event of held.reverse()) {
        seen.add(eventKey(event))
        if (!(first && options.skipExisting)) yield event
      }
      held = []
    }
    first = false
    await pause(resume ? Math.min(intervalMs, 1000) : intervalMs, signal)
  }
}

type Cursor = Pick<ActivityQuery, 'before_timestamp' | 'before_id'>

/** The stream's event JSON (ActivityPushEvent): its `data` is the activity item with `block_hash`. */
interface PushEvent {
  id: string
  type: 'activity.added' | 'activity.removed'
  data: ActivityItem & { block_hash?: string | null }
}

/**
 * Follows through the live stream; 'unsupported' when the server or the
 * runtime has none (before anything was handed out), 'done' when stopped.
 */
async function* followStream(
  readPage: ReadPage,
  openStream: OpenStream,
  options: FollowOptions,
): AsyncGenerator<ActivityItem, 'done' | 'unsupported', undefined> {
  const { signal } = options
  const seen = new RecentKeys(options.memory ?? 10_000)
  const filters: StreamQuery = {}
  if (options.query?.collection !== undefined) filters.collection = options.query.collection
  if (options.query?.event_type !== undefined) filters.event_type = options.query.event_type
  if (options.query?.standard !== undefined) filters.standard = options.query.standard
  let lastEventId: string | undefined
  let started = false
  let failures = 0
  let retryMs = 1000
  while (!signal?.aborted) {
    let response: Response
    try {
      response = await openStream(filters, lastEventId, signal)
    } catch (err) {
      if (signal?.aborted) return 'done'
      if (!started) throw err
      await pause(retryDelayMs(++failures, null), signal)
      continue
    }
    const body = response.body
    const streaming =
      response.ok && body !== null && typeof body.getReader === 'function' && isEventStream(response)
    if (!started && (response.status === 404 || response.status === 405 || (response.ok && !streaming))) {
      await body?.cancel().catch(() => undefined)
      return 'unsupported'
    }
    if (response.status === 410) {
      // The resume point is older than the events kept: start over with new events (the gap is lost).
      await body?.cancel().catch(() => undefined)
      lastEventId = undefined
      continue
    }
    if (response.status === 429 || response.status >= 500 || (response.ok && !streaming)) {
      await body?.cancel().catch(() => undefined)
      await pause(retryDelayMs(++failures, response.headers.get('Retry-After')), signal)
      continue
    }
    if (!response.ok || !body) throw await NftDataApiError.from(response)
    failures = 0
    if (!started) {
      started = true
      options.onMode?.('stream')
      // The stream is open (its start is fixed): what the feed holds now comes first.
      if (!options.skipExisting) {
        const page = await readPage({ limit: 100, ...options.query }, signal).catch((err) => {
          if (signal?.aborted) return undefined
          throw err
        })
        if (!page) return 'done'
        for (const event of page.data.reverse()) {
          seen.add(eventKey(event))
          yield event
        }
      }
    }
    const messages: EventSourceMessage[] = []
    const parser = createParser({
      onEvent: (message) => messages.push(message),
      onRetry: (ms) => {
        retryMs = ms
      },
    })
    const reader = body.getReader()
    const decoder = new TextDecoder()
    try {
      for (;;) {
        const { value, done } = await reader.read()
        if (done) break
        parser.feed(decoder.decode(value, { stream: true }))
        while (messages.length > 0) {
          const message = messages.shift()!
          const event = JSON.parse(message.data) as PushEvent
          lastEventId = message.id ?? event.id
          const { block_hash: _blockHash, ...item } = event.data
          const key = eventKey(item)
          if (event.type === 'activity.added') {
            if (seen.has(key)) continue
            seen.add(key)
            yield item
          } else if (event.type === 'activity.removed') {
            // A transaction included again later is a new event.
            seen.delete(key)
            options.onRemoved?.(item)
          }
        }
      }
    } catch (err) {
      if (signal?.aborted) return 'done'
      if (err instanceof SyntaxError) throw err
      // The connection broke off: resume below.
    } finally {
      await reader.cancel().catch(() => undefined)
    }
    await pause(retryMs, signal)
  }
  return 'done'
}

function isEventStream(response: Response): boolean {
  return (response.headers.get('Content-Type') ?? '').toLowerCase().startsWith('text/event-stream')
}

/** A set that forgets its oldest entries beyond `capacity`. */
class RecentKeys {
  private readonly keys = new Set<string>()
  constructor(private readonly capacity: number) {}
  has(key: string) {
    return this.keys.has(key)
  }
  delete(key: string) {
    this.keys.delete(key)
  }
  add(key: string) {
    this.keys.add(key)
    if (this.keys.size > this.capacity) this.keys.delete(this.keys.values().next().value as string)
  }
}

/** Waits; resolves early (without error) when the signal aborts. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve()
    const done = () => {
      clearTimeout(timer)
      signal?.removeEventListener('abort', done)
      resolve()
    }
    const timer = setTimeout(done, ms)
    signal?.addEventListener('abort', done, { once: true })
  })
}
