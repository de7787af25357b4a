'use client'

/**
 * The explorer's only way to data: the typed client (`@/client`, the package
 * `@nft-data-service/client`) against this origin's public /v1 API, with the tab's demo token
 * (src/components/demo-token.ts): issued on the first request, renewed a minute before it
 * expires or when the API refuses it. Whatever the explorer shows, an API consumer can read the
 * same way (docs/explorer.md).
 *
 * A demo token may send 1 request per second and 30 per minute (the specification's limits).
 * Instead of spending 429s, every request waits its turn here: at least PACE_MS after the
 * previous one was sent, and never more than PER_MINUTE within a minute. The times are kept in
 * sessionStorage, so a reload or a link opened in this tab keeps the pace too. Requests are
 * served by priority: what the page needs to be usable first, pictures for the activity feed last.
 */
import { createNftDataClient, type NftDataClient } from '@/client'
import { forgetDemoToken, issueDemoToken, loadDemoToken } from '@/components/demo-token'

/** Between two requests' sends: the per-second limit, plus a margin for the way there. */
const PACE_MS = 1100
/** Requests within any minute: the per-minute limit. */
const PER_MINUTE = 30
/** A token expiring sooner than this is renewed before the next request. */
const RENEW_BEFORE_MS = 60_000
const SENT_KEY = 'nft-explorer-sent'

export type Priority = 'high' | 'low'

interface Waiter {
  priority: Priority
  resolve: () => void
  signal?: AbortSignal
}

const queue: Waiter[] = []
let timer: ReturnType<typeof setTimeout> | null = null

function sentTimes(now: number): number[] {
  try {
    const raw = sessionStorage.getItem(SENT_KEY)
    const times = raw ? (JSON.parse(raw) as number[]) : []
    return times.filter((t) => typeof t === 'number' && t > now - 60_000 && t <= now + 1000)
  } catch {
    return []
  }
}

function recordSend(now: number) {
  const times = [...sentTimes(now), now]
  try {
    sessionStorage.setItem(SENT_KEY, JSON.stringify(times.slice(-PER_MINUTE)))
  } catch {
    // No storage: the pace holds for this page only.
  }
}

/** When the next request may be sent. */
function nextSlot(now: number): number {
  const times = sentTimes(now)
  let at = now
  const last = times[times.length - 1]
  if (last !== undefined) at = Math.max(at, last + PACE_MS)
  if (times.length >= PER_MINUTE) at = Math.max(at, times[times.length - PER_MINUTE]! + 60_000 + 100)
  return at
}

function pump() {
  if (timer) return
  // Aborted waiters leave the queue without a turn.
  for (let i = queue.length - 1; i >= 0; i--) if (queue[i]!.signal?.aborted) queue.splice(i, 1)
  if (queue.length === 0) return
  const now = Date.now()
  const at = nextSlot(now)
  if (at > now) {
    timer = setTimeout(() => {
      timer = null
      pump()
    }, at - now)
    return
  }
  const index = queue.findIndex((w) => w.priority === 'high')
  const [waiter] = queue.splice(index === -1 ? 0 : index, 1)
  recordSend(now)
  waiter!.resolve()
  pump()
}

/** Waits for this request's turn within the demo token's limits. */
function turn(priority: Priority, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const waiter: Waiter = { priority, resolve, signal }
    queue.push(waiter)
    signal?.addEventListener(
      'abort',
      () => {
        const i = queue.indexOf(waiter)
        if (i !== -1) queue.splice(i, 1)
        reject(signal.reason)
      },
      { once: true },
    )
    pump()
  })
}

/** The chain head the API counted confirmations against in its latest answer (X-Chain-Head). */
const headListeners = new Set<(head: bigint) => void>()
let latestHead: bigint | null = null

function noteChainHead(response: Response) {
  const value = response.headers.get('X-Chain-Head')
  if (!value || !/^\d{1,20}$/.test(value)) return
  const head = BigInt(value)
  if (latestHead !== null && head <= latestHead) return
  latestHead = head
  for (const listener of headListeners) listener(head)
}

/** Calls `listener` with every higher chain head an answer reports; returns the unsubscribe. */
export function onChainHead(listener: (head: bigint) => void): () => void {
  headListeners.add(listener)
  if (latestHead !== null) listener(latestHead)
  return () => headListeners.delete(listener)
}

let issuing: Promise<string> | null = null

/** The tab's demo token, issued or renewed when needed (one issuance at a time). */
export async function demoToken(): Promise<string> {
  const stored = loadDemoToken(Date.now() + RENEW_BEFORE_MS)
  if (stored) return stored.token
  issuing ??= issueDemoToken()
    .then((t) => t.token)
    .finally(() => {
      issuing = null
    })
  return issuing
}

/**
 * The fetch the client sends through: waits its turn, then sends with the demo token. A 401
 * (the token expired or was revoked) forgets the token and sends once more with a new one.
 */
function explorerFetch(priority: Priority) {
  return async (request: Request): Promise<Response> => {
    const send = async () => {
      const token = await demoToken()
      await turn(priority, request.signal)
      const headers = new Headers(request.headers)
      headers.set('Authorization', `Bearer ${token}`)
      return { token, response: await fetch(new Request(request.clone(), { headers, cache: 'no-store' })) }
    }
    const first = await send()
    if (first.response.status !== 401) {
      noteChainHead(first.response)
      return first.response
    }
    forgetDemoToken(first.token)
    const second = (await send()).response
    noteChainHead(second)
    return second
  }
}

const clients = new Map<Priority, NftDataClient>()

/**
 * The typed client of the explorer. `high`: what a page needs first; `low`: what can come later
 * (artwork of activity rows, the index head). Retries follow the client's defaults (429 and
 * 503 wait for Retry-After), so a limit shared with other tabs only slows the page down.
 */
export function explorerClient(priority: Priority = 'high'): NftDataClient {
  let client = clients.get(priority)
  if (!client) {
    client = createNftDataClient({
      baseUrl: window.location.origin,
      fetch: explorerFetch(priority),
      retry: { attempts: 4, timeoutMs: 20_000 },
    })
    clients.set(priority, client)
  }
  return client
}
