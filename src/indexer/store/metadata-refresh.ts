/**
 * Refresh requests from the portal (metadata_refresh_requests; the web side
 * writes them: src/db/queries/metadata-refresh.ts). The indexer applies them:
 * a token is queued again ahead of the backlog (due at PRIORITY_DUE_AT, which
 * sorts before every other due time), a collection is read again and its
 * tokens are queued as an ERC-4906 BatchMetadataUpdate queues them (due now,
 * behind what was already waiting: docs/metadata.md, "Refresh requests").
 */
import type pg from 'pg'
import type { DueTokenRow } from './metadata-queue'

/** The channel the web process notifies (METADATA_REFRESH_CHANNEL on the web side). */
export const REFRESH_CHANNEL = 'metadata_refresh'

/** Due time of a token refreshed on request: before any other due time, so read first. */
export const PRIORITY_DUE_AT = '1970-01-01T00:00:00Z'

/** token_id of a collection's own request. */
const COLLECTION_TARGET = '-1'

export interface AppliedRefreshes {
  tokens: number
  collections: number
  /** Tokens of the refreshed collections queued again. */
  collectionTokens: number
}

/**
 * Takes every request not applied yet and queues its work, in one
 * transaction: a request is applied once, whichever indexer takes it. Applied
 * rows stay (they are the web side's per-target limit) for a day.
 */
export async function applyRefreshRequests(pool: pg.Pool): Promise<AppliedRefreshes> {
  const client = await pool.connect()
  try {
    await client.query('BEGIN')
    const { rows } = await client.query<{ collection_address: string; token_id: string }>(
      `UPDATE metadata_refresh_requests SET applied_at = now()
        WHERE applied_at IS NULL RETURNING collection_address, token_id::text`,
    )
    const tokens = rows.filter((r) => r.token_id !== COLLECTION_TARGET)
    const collections = [
      ...new Set(rows.filter((r) => r.token_id === COLLECTION_TARGET).map((r) => r.collection_address)),
    ]
    let tokenCount = 0
    let collectionTokens = 0
    if (collections.length > 0) {
      await client.query(
        `UPDATE collections SET metadata_status = 'pending', metadata_attempts = 0,
                metadata_requests = metadata_requests + 1, metadata_next_attempt_at = NULL, updated_at = now()
          WHERE address = ANY($1::varchar[])`,
        [collections],
      )
      // As an ERC-4906 BatchMetadataUpdate over the whole collection (store/transfers.ts).
      const queued = await client.query(
        `UPDATE tokens SET metadata_status = 'pending', metadata_attempts = 0, metadata_next_attempt_at = now(),
                metadata_recheck_at = NULL, updated_at = now()
          WHERE collection_address = ANY($1::varchar[])`,
        [collections],
      )
      collectionTokens = queued.rowCount ?? 0
    }
    if (tokens.length > 0) {
      const queued = await client.query(
        `UPDATE tokens t SET metadata_status = 'pending', metadata_attempts = 0, metadata_next_attempt_at = $3,
                metadata_recheck_at = NULL, updated_at = now()
           FROM unnest($1::varchar[], $2::numeric[]) AS r(c, id)
          WHERE t.collection_address = r.c AND t.token_id = r.id`,
        [tokens.map((r) => r.collection_address), tokens.map((r) => r.token_id), PRIORITY_DUE_AT],
      )
      tokenCount = queued.rowCount ?? 0
    }
    await client.query(
      `DELETE FROM metadata_refresh_requests
        WHERE applied_at IS NOT NULL AND requested_at < now() - interval '1 day'`,
    )
    await client.query('COMMIT')
    return { tokens: tokenCount, collections: collections.length, collectionTokens }
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined)
    throw err
  } finally {
    client.release()
  }
}

/**
 * Tokens refreshed on request and not taken yet (due at PRIORITY_DUE_AT): one
 * range of tokens_metadata_queue_idx. The ids given (in memory) are skipped.
 */
export async function selectPriorityTokens(
  pool: pg.Pool,
  limit: number,
  skipIds: string[],
): Promise<DueTokenRow[]> {
  const { rows } = await pool.query<DueTokenRow>(
    `SELECT id::text, collection_address, token_id::text, metadata_attempts,
            metadata_next_attempt_at::text AS next_at, false AS recheck
       FROM tokens WHERE metadata_status = 'pending' AND metadata_next_attempt_at <= $3
        AND id <> ALL($2::bigint[])
      ORDER BY metadata_next_attempt_at LIMIT $1`,
    [limit, skipIds, PRIORITY_DUE_AT],
  )
  return rows
}

/**
 * LISTENs on REFRESH_CHANNEL on a connection of its own (taken from the
 * pool for as long as it listens). `onNotify` runs on each notification;
 * `onEnd` when the connection fails or ends. Returns a stop function.
 */
export async function listenForRefreshRequests(
  pool: pg.Pool,
  onNotify: () => void,
  onEnd: (err?: Error) => void,
): Promise<() => Promise<void>> {
  const client = await pool.connect()
  let ended = false
  const end = (err?: Error) => {
    if (ended) return
    ended = true
    client.off('notification', onNotification)
    client.release(err ?? true)
    onEnd(err)
  }
  const onNotification = (msg: pg.Notification) => {
    if (msg.channel === REFRESH_CHANNEL) onNotify()
  }
  client.on('notification', onNotification)
  client.once('error', (err) => end(err))
  client.once('end', () => end())
  try {
    await client.query(`LISTEN ${REFRESH_CHANNEL}`)
  } catch (err) {
    end(err as Error)
    throw err
  }
  return async () => {
    if (ended) return
    await client.query(`UNLISTEN ${REFRESH_CHANNEL}`).catch(() => undefined)
    end()
  }
}
