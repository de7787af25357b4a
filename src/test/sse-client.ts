/**
 * A Server-Sent Events reader for tests of GET /v1/activity/stream: fetch
 * with a bearer credential, frames parsed by eventsource-parser, events
 * collected as they arrive.
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser'

export interface SseConnection {
  status: number
  headers: Headers
  /** The body when the answer was no stream (an error envelope). */
  body?: string
  events: EventSourceMessage[]
  comments: string[]
  retry?: number
  /** Resolves when the server ended the stream. */
  ended: Promise<void>
  isEnded(): boolean
  /** Waits until `n` events arrived (throws after `timeoutMs`). */
  waitFor(n: number, timeoutMs?: number): Promise<EventSourceMessage[]>
  close(): void
}

export async function openSse(
  url: string,
  options: { credential?: string; lastEventId?: string; headers?: Record<string, string> } = {},
): Promise<SseConnection> {
  const abort = new AbortController()
  const headers: Record<string, string> = { Accept: 'text/event-stream', ...options.headers }
  if (options.credential) headers.Authorization = `Bearer ${options.credential}`
  if (options.lastEventId !== undefined) headers['Last-Event-ID'] = options.lastEventId
  const res = await fetch(url, { headers, signal: abort.signal })
  const events: EventSourceMessage[] = []
  const comments: string[] = []
  let ended = false
  const conn: SseConnection = {
    status: res.status,
    headers: res.headers,
    events,
    comments,
    ended: Promise.resolve(),
    isEnded: () => ended,
    async waitFor(n, timeoutMs = 5000) {
      const end = Date.now() + timeoutMs
      while (events.length < n) {
        if (Date.now() > end) {
          throw new Error(`${events.length} of ${n} events after ${timeoutMs} ms: ${events.map((e) => e.id)}`)
        }
        await new Promise((r) => setTimeout(r, 10))
      }
      return events.slice(0, n)
    },
    close: () => abort.abort(),
  }
  if (!res.headers.get('content-type')?.startsWith('text/event-stream')) {
    conn.body = await res.text()
    ended = true
    return conn
  }
  const parser = createParser({
    onEvent: (e) => events.push(e),
    onComment: (c) => comments.push(c.trim()),
    onRetry: (ms) => {
      conn.retry = ms
    },
  })
  conn.ended = (async () => {
    const decoder = new TextDecoder()
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        parser.feed(decoder.decode(chunk, { stream: true }))
      }
    } catch {
      // Aborted by close().
    } finally {
      ended = true
    }
  })()
  return conn
}
