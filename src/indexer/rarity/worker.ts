/**
 * The rarity worker (docs/database.md, "Stored rarity"): recomputes the
 * ranking and trait counts of collections marked dirty, debounced — a
 * collection is recomputed once its first change not yet computed is
 * `debounceMs` old, or, for collections whose computation takes long,
 * `costFactor` times its last computation's duration old, so a collection
 * whose metadata keeps changing is recomputed at a bounded rate and its
 * ranking stays at most about that far behind. After each computation the
 * worker rests `restFactor` times its duration, so it takes at most a
 * fifth of the time (by default) however many collections change at once.
 */
import type pg from 'pg'
import type { Logger } from 'pino'
import { describeError, isAbortError } from '../errors'
import { postponeDirtyCollection, recomputeCollectionRarity, selectDirtyCollections } from '../store/rarity'
import { sleep } from '../util/sleep'

export interface RarityWorkerOptions {
  /** How old a collection's first change must be before it is recomputed (default 5 s). */
  debounceMs?: number
  /** How often dirty collections are looked for (default 1 s). */
  pollMs?: number
  /** The wait is at least this many times the collection's last computation (default 10). */
  costFactor?: number
  /** After each computation the worker rests this many times its duration (default 4: at most a fifth of the time computing). */
  restFactor?: number
  /** A collection whose computation failed is tried again after this, doubled per failure in a row (default 30 s). */
  failureBackoffMs?: number
  /** The longest wait after failures (default 1 h). */
  failureBackoffMaxMs?: number
}

export const RARITY_DEFAULTS = {
  debounceMs: 5_000,
  pollMs: 1_000,
  costFactor: 10,
  restFactor: 4,
  failureBackoffMs: 30_000,
  failureBackoffMaxMs: 3_600_000,
} as const

/** Dirty collections looked at per poll. */
const BATCH = 100

export async function runRarityWorker(
  ctx: { pool: pg.Pool; logger: Logger; signal: AbortSignal },
  options: RarityWorkerOptions = {},
): Promise<void> {
  const { debounceMs, pollMs, costFactor, restFactor, failureBackoffMs, failureBackoffMaxMs } = {
    ...RARITY_DEFAULTS,
    ...options,
  }
  const lastMs = new Map<string, number>()
  const failures = new Map<string, number>()
  const log = ctx.logger.child({ component: 'rarity' })
  while (!ctx.signal.aborted) {
    try {
      const dirty = await selectDirtyCollections(ctx.pool, BATCH)
      for (const { collection, ageMs } of dirty) {
        if (ctx.signal.aborted) break
        if (ageMs < Math.max(debounceMs, costFactor * (lastMs.get(collection) ?? 0))) continue
        const started = performance.now()
        try {
          const { tokens } = await recomputeCollectionRarity(ctx.pool, collection)
          failures.delete(collection)
          const ms = performance.now() - started
          lastMs.set(collection, ms)
          log.debug({ collection, tokens, ms: Math.round(ms) }, 'rarity recomputed')
          // When many collections change at once (a metadata backfill), the chain and the metadata queue
          // keep most of the database's time.
          if (restFactor > 0) await sleep(restFactor * ms, ctx.signal)
        } catch (err) {
          if (isAbortError(err) && ctx.signal.aborted) return
          // A lost connection, or something in this collection's own data: its mark stays and it
          // waits, behind the others, so one collection that fails every time stops none of them.
          const count = (failures.get(collection) ?? 0) + 1
          failures.set(collection, count)
          const retryInMs = Math.min(failureBackoffMaxMs, failureBackoffMs * 2 ** (count - 1))
          log.warn(
            { collection, failures: count, retryInMs, err: describeError(err) },
            'rarity recompute failed',
          )
          await postponeDirtyCollection(ctx.pool, collection, retryInMs)
        }
      }
    } catch (err) {
      if (isAbortError(err) && ctx.signal.aborted) return
      // The dirty list could not be read (the database is down): the next poll tries again.
      log.warn({ err: describeError(err) }, 'rarity worker poll failed')
    }
    try {
      await sleep(pollMs, ctx.signal)
    } catch {
      return
    }
  }
}
