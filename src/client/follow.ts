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
 */
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
}

/** The identity of an event for deduplication. */
export function eventKey(event: ActivityItem): string {
  return `${event.transaction_hash}:${event.log_index}:${event.batch_index ?? 0}`
}

type ReadPage = (query: ActivityQuery, signal: AbortSignal | undefined) => Promise<ActivityPage>

export async function* followActivity(
  readPage: ReadPage,
  options: FollowOptions = {},
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

/** A set that forgets its oldest entries beyond `capacity`. */
class RecentKeys {
  private readonly keys = new Set<string>()
  constructor(private readonly capacity: number) {}
  has(key: string) {
    return this.keys.has(key)
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
