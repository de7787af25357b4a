/**
 * Keeps the activity journal to its retention (24 h, docs/push.md): the
 * indexer, the journal's only writer, deletes older entries at start and
 * every `everyMs` (default 10 min), in batches. Stream clients resuming from
 * a pruned id are told the oldest id kept (410 RESUME_POINT_EXPIRED).
 */
import type pg from 'pg'
import type { Logger } from 'pino'
import { JOURNAL_RETENTION_MS } from '@/db/queries/activity-journal'
import { pruneJournalBatch } from './store/journal-pruning'
import { sleep } from './util/sleep'

export interface JournalPrunerOptions {
  everyMs?: number
  retentionMs?: number
  batch?: number
}

/** One pruning round: batches until none is full. Returns the entries deleted. */
export async function pruneJournalOnce(pool: pg.Pool, options: JournalPrunerOptions = {}): Promise<number> {
  const retentionMs = options.retentionMs ?? JOURNAL_RETENTION_MS
  const batch = options.batch ?? 10_000
  let total = 0
  for (;;) {
    const deleted = await pruneJournalBatch(pool, retentionMs, batch)
    total += deleted
    if (deleted < batch) return total
  }
}

export async function runJournalPruner(
  deps: { pool: pg.Pool; logger: Logger; signal: AbortSignal },
  options: JournalPrunerOptions = {},
): Promise<void> {
  const everyMs = options.everyMs ?? 10 * 60_000
  while (!deps.signal.aborted) {
    try {
      const deleted = await pruneJournalOnce(deps.pool, options)
      if (deleted > 0) deps.logger.debug({ deleted }, 'activity journal pruned')
    } catch (err) {
      // The next round tries again; a journal a few minutes over its retention harms no one.
      if (!deps.signal.aborted) deps.logger.warn({ err }, 'activity journal pruning failed')
    }
    await sleep(everyMs, deps.signal).catch(() => undefined)
  }
}
