/**
 * Snapshots at a past block (docs/api.md, "Ownership views", "Snapshots"):
 * each one is computed once per (kind, collection or owner, block) and kept
 * in this process as a sorted array, so the pages of a snapshot are binary
 * searches for the cursor, not a recomputation. A snapshot is at a confirmed
 * block, so it changes only when the confirmed history itself is rewritten (a
 * reorganisation deeper than CONFIRMATIONS, a repair, an import): it is kept
 * under the indexer's `historyRewrittenAt` (snapshotKey), so a rewrite
 * retires it, and it is never written to the database (read replicas serve
 * it like any read).
 *
 * Bounded by the heap bytes its snapshots hold, SNAPSHOT_CACHE_BYTES, as
 * each caller counts them; least recently used snapshots are evicted first.
 * A snapshot larger than the bound is computed for each page and not kept.
 * Single flight: requests for a snapshot being computed wait for that one
 * computation. A failed computation is not kept. At most
 * SNAPSHOT_COMPUTATIONS snapshots are computed at once (each may hold a
 * database connection for several statement timeouts: owners.ts,
 * SNAPSHOT_TIMEOUT_FACTOR), so that snapshots of many blocks asked at once
 * cannot take every connection from the other reads; later ones wait their
 * turn, and beyond SNAPSHOT_QUEUE waiting, a request answers 503 with
 * Retry-After. One requester (a credential) has at most one snapshot
 * computing or waiting at a time: another of its own answers 429 with
 * Retry-After, so one key asking many blocks cannot take every turn and the
 * whole queue from the others (a snapshot already held, or one being
 * computed for anyone, is served as usual).
 *
 * Written here rather than taken from lru-cache: a Map keeps insertion
 * order, so least-recently-used eviction by total size plus single flight is
 * these few lines, with no runtime dependency added for them.
 */

import type { SnapshotBasis } from '@/db/queries/owners'
import { ApiError } from '@/server/errors/api-error'
import type { IndexerSnapshot } from './indexer-snapshot'

/**
 * Heap bytes kept across all snapshots of one database pool: 100 MB, about
 * 1,900,000 holders or 5,000,000 held tokens in all (snapshot-columns.ts).
 */
export const SNAPSHOT_CACHE_BYTES = 100 * 2 ** 20

/** Snapshots computed at once, per process: the database's work, not the web process's. */
export const SNAPSHOT_COMPUTATIONS = 2
/** Snapshot computations waiting their turn at most; beyond, 503. */
export const SNAPSHOT_QUEUE = 16

const yoursFirst = () =>
  new ApiError(
    'RATE_LIMITED',
    'A snapshot of yours is being computed; ask for another once it is done (one at a time per credential).',
    { headers: { 'Retry-After': '5' } },
  )

const busy = () =>
  new ApiError('SERVICE_UNAVAILABLE', 'Too many snapshots are being computed; retry shortly.', {
    headers: { 'Retry-After': '5' },
  })

interface Slot<T> {
  value: Promise<T>
  /** Bytes held, once computed (0 while computing). */
  size: number
}

export class SnapshotCache {
  private readonly slots = new Map<string, Slot<unknown>>()
  private total = 0
  private computing = 0
  private readonly waiting: Array<() => void> = []
  /** Requesters with a computation running or waiting. */
  private readonly requesters = new Set<string>()

  constructor(
    readonly maxBytes = SNAPSHOT_CACHE_BYTES,
    readonly maxComputing = SNAPSHOT_COMPUTATIONS,
    readonly maxWaiting = SNAPSHOT_QUEUE,
  ) {}

  /** Bytes held now. */
  get bytes(): number {
    return this.total
  }

  /** Snapshots held or being computed. */
  get size(): number {
    return this.slots.size
  }

  /**
   * The snapshot under `key`, computed by `compute` when not held; `bytesOf` counts what it
   * holds; `requester` (a credential's subject) may have one computation at a time.
   */
  get<T>(
    key: string,
    compute: () => Promise<T>,
    bytesOf: (snapshot: T) => number,
    requester?: string,
  ): Promise<T> {
    const hit = this.slots.get(key) as Slot<T> | undefined
    if (hit) {
      // Most recently used: to the end of the Map's order.
      this.slots.delete(key)
      this.slots.set(key, hit)
      return hit.value
    }
    if (requester !== undefined) {
      if (this.requesters.has(requester)) return Promise.reject(yoursFirst())
      this.requesters.add(requester)
    }
    const value = this.inTurn(compute)
    if (requester !== undefined) {
      const done = () => this.requesters.delete(requester)
      value.then(done, done)
    }
    const slot: Slot<T> = { value, size: 0 }
    this.slots.set(key, slot as Slot<unknown>)
    slot.value.then(
      (snapshot) => {
        if (this.slots.get(key) !== slot) return
        const size = bytesOf(snapshot)
        if (size > this.maxBytes) {
          this.slots.delete(key)
          return
        }
        slot.size = size
        this.total += size
        this.evict()
      },
      () => {
        if (this.slots.get(key) === slot) this.slots.delete(key)
      },
    )
    return slot.value
  }

  /**
   * Runs `compute` once fewer than maxComputing run; rejects at once when
   * maxWaiting already wait. A computation that ends hands its turn to the
   * first waiting, so one arriving meanwhile cannot take it.
   */
  private async inTurn<T>(compute: () => Promise<T>): Promise<T> {
    if (this.computing < this.maxComputing) this.computing++
    else if (this.waiting.length < this.maxWaiting)
      await new Promise<void>((resolve) => this.waiting.push(resolve))
    else throw busy()
    try {
      return await compute()
    } finally {
      const next = this.waiting.shift()
      if (next) next()
      else this.computing--
    }
  }

  private evict() {
    for (const [key, slot] of this.slots) {
      if (this.total <= this.maxBytes) return
      if (slot.size === 0) continue // still computing: not counted yet
      this.slots.delete(key)
      this.total -= slot.size
    }
  }

  clear() {
    this.slots.clear()
    this.total = 0
  }
}

/**
 * The key of a snapshot: its kind and parameters, then the time the confirmed history was
 * last rewritten, as the request's indexer snapshot read it. Snapshots of an older history
 * are never asked for again and leave as the least recently used.
 */
export function snapshotKey(
  indexer: Pick<IndexerSnapshot, 'historyRewrittenAt'>,
  ...parts: Array<string | bigint>
): string {
  return `${parts.join('|')}|${indexer.historyRewrittenAt}`
}

/**
 * The history a snapshot kept under snapshotKey(indexer, …) must be computed from: its
 * transaction checks it (db/queries/owners.ts, inSnapshotTransaction), so that a rewrite
 * after the request read the indexer state is never kept under the old history's key.
 */
export function snapshotBasis(
  network: string,
  indexer: Pick<IndexerSnapshot, 'historyRewrittenAt'>,
): SnapshotBasis {
  return { network, historyRewrittenAt: indexer.historyRewrittenAt }
}

const caches = new WeakMap<object, SnapshotCache>()

/** The snapshot cache of one database (a pool): tests run several databases in one process. */
export function snapshotCache(pool: object): SnapshotCache {
  let cache = caches.get(pool)
  if (!cache) {
    cache = new SnapshotCache()
    caches.set(pool, cache)
  }
  return cache
}
