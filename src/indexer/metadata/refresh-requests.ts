/**
 * Picks up the refreshes users ask for in the portal (docs/metadata.md,
 * "Refresh requests"): the web process writes a row and NOTIFYs; this loop
 * LISTENs on its own connection and applies what is pending at once, and
 * polls every `pollMs` besides (a lost notification, a database without
 * LISTEN, a connection being re-made). Applied token refreshes are due ahead
 * of the backlog; `onTokens` tells the token pipeline to take them now.
 */
import type pg from 'pg'
import type { Logger } from 'pino'
import { describeError } from '../errors'
import { applyRefreshRequests, listenForRefreshRequests } from '../store/metadata-refresh'

export interface RefreshRequestDeps {
  pool: pg.Pool
  logger: Logger
  signal: AbortSignal
  /** Token refreshes were queued: take them now (TokenPipeline.prioritize). */
  onTokens: () => void
  /** Collections were set to be read again: read them now. */
  onCollections?: () => void
}

export async function runRefreshRequests(
  deps: RefreshRequestDeps,
  options: { pollMs?: number } = {},
): Promise<void> {
  const { pool, logger, signal } = deps
  const pollMs = options.pollMs ?? 2_000
  let wake: (() => void) | null = null
  let notified = false
  const onNotify = () => {
    notified = true
    wake?.()
  }
  const listener: { stop: (() => Promise<void>) | null } = { stop: null }
  let listenFailures = 0
  let nextListenAt = 0
  const listen = async () => {
    if (listener.stop || Date.now() < nextListenAt) return
    try {
      listener.stop = await listenForRefreshRequests(pool, onNotify, (err) => {
        listener.stop = null
        if (err && !signal.aborted) logger.warn(`refresh requests: listening ended: ${describeError(err)}`)
      })
      listenFailures = 0
    } catch (err) {
      // Polling goes on meanwhile; listening is tried again later (a minute at most).
      nextListenAt = Date.now() + Math.min(60_000, 1_000 * 2 ** listenFailures++)
      logger.warn(`refresh requests: cannot LISTEN, polling every ${pollMs} ms: ${describeError(err)}`)
    }
  }
  try {
    while (!signal.aborted) {
      await listen()
      notified = false
      try {
        const applied = await applyRefreshRequests(pool)
        if (applied.tokens > 0 || applied.collectionTokens > 0) deps.onTokens()
        if (applied.collections > 0) deps.onCollections?.()
        if (applied.tokens + applied.collections > 0)
          logger.info(
            applied,
            `refresh requests: ${applied.tokens} token(s), ${applied.collections} collection(s)`,
          )
      } catch (err) {
        if (signal.aborted) break
        logger.warn(`refresh requests not applied: ${describeError(err)}`)
      }
      if (notified) continue
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer)
          signal.removeEventListener('abort', done)
          wake = null
          resolve()
        }
        const timer = setTimeout(done, pollMs)
        wake = done
        signal.addEventListener('abort', done, { once: true })
      })
    }
  } finally {
    await listener.stop?.()
  }
}
