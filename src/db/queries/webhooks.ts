/**
 * webhook_endpoints and webhook_deliveries (migration 20261129120000_webhooks;
 * docs/push.md, "Webhooks"): the portal's endpoint management and delivery
 * log, and the statements of delivery (the dispatcher's per-endpoint cursor,
 * the delivery jobs' attempts).
 */
import type pg from 'pg'
import type { StandardParam } from '@/lib/schemas'
import { isoSql, type ReadDb } from './sql'
import type { Tx } from './transaction'

export interface WebhookEndpointRow {
  id: string
  user_id: string
  key_id: string
  url: string
  collection: string | null
  event_type: string | null
  min_confirmations: number
  /** ERC721 | ERC1155 | all; null: ERC-721 events without the extension fields. */
  standard: StandardParam | null
  secret_ciphertext: string
  secret_prefix: string
  enabled: boolean
  disabled_reason: string | null
  disabled_at: string | null
  cursor: string
  failing_since: string | null
  created_at: string
}

const ENDPOINT_COLUMNS = `e.id::text AS id, e.user_id::text AS user_id, e.key_id::text AS key_id, e.url,
  e.collection, e.event_type, e.min_confirmations, e.standard, e.secret_ciphertext, e.secret_prefix, e.enabled,
  e.disabled_reason, ${isoSql('e.disabled_at')} AS disabled_at, e.cursor::text AS cursor,
  ${isoSql('e.failing_since')} AS failing_since, ${isoSql('e.created_at')} AS created_at`

export type DeliveryStatus = 'pending' | 'retrying' | 'delivered' | 'failed' | 'skipped'

export interface WebhookDeliveryRow {
  id: string
  endpoint_id: string
  event_id: string
  event_type: string
  status: DeliveryStatus
  attempts: number
  last_status_code: number | null
  last_error: string | null
  last_duration_ms: number | null
  next_attempt_at: string | null
  created_at: string
  updated_at: string
}

const DELIVERY_COLUMNS = `d.id::text AS id, d.endpoint_id::text AS endpoint_id, d.event_id::text AS event_id,
  d.event_type, d.status, d.attempts, d.last_status_code, d.last_error, d.last_duration_ms,
  ${isoSql('d.next_attempt_at')} AS next_attempt_at, ${isoSql('d.created_at')} AS created_at,
  ${isoSql('d.updated_at')} AS updated_at`

// ── Portal: endpoints of the signed-in user ────────────────────────────────

/** A new endpoint id (its secret is sealed to it before the row exists). */
async function nextEndpointId(tx: Tx): Promise<bigint> {
  const rows = await tx.$queryRawUnsafe<{ id: string }[]>(
    `SELECT nextval(pg_get_serial_sequence('webhook_endpoints', 'id'))::text AS id`,
  )
  return BigInt(rows[0]!.id)
}

/**
 * Inserts an endpoint whose cursor is the journal's newest seq: it receives
 * the events recorded after its creation. Null when the user has no such
 * active key, or when the key has `maxPerKey` endpoints already (the key's row
 * is locked, so two creations cannot both pass the limit).
 */
async function insertEndpoint(
  tx: Tx,
  endpoint: {
    id: bigint
    userId: bigint
    keyId: bigint
    url: string
    collection: string | null
    eventType: string | null
    minConfirmations: number
    standard: StandardParam | null
    secretCiphertext: string
    secretPrefix: string
    maxPerKey: number
  },
): Promise<{ row: WebhookEndpointRow | null; reason: 'no_key' | 'limit' | null }> {
  const keys = await tx.$queryRawUnsafe<{ id: string }[]>(
    `SELECT id::text AS id FROM api_keys WHERE id = $1::bigint AND user_id = $2::bigint AND status = 'active' FOR UPDATE`,
    endpoint.keyId.toString(),
    endpoint.userId.toString(),
  )
  if (keys.length === 0) return { row: null, reason: 'no_key' }
  const count = await tx.$queryRawUnsafe<{ n: number }[]>(
    'SELECT count(*)::int AS n FROM webhook_endpoints WHERE key_id = $1::bigint',
    endpoint.keyId.toString(),
  )
  if ((count[0]?.n ?? 0) >= endpoint.maxPerKey) return { row: null, reason: 'limit' }
  const rows = await tx.$queryRawUnsafe<WebhookEndpointRow[]>(
    `WITH e AS (
       INSERT INTO webhook_endpoints (id, user_id, key_id, url, collection, event_type, min_confirmations,
                                      standard, secret_ciphertext, secret_prefix, cursor)
       VALUES ($1::bigint, $2::bigint, $3::bigint, $4, $5, $6, $7::int, $8, $9, $10,
               COALESCE((SELECT max(seq) FROM activity_journal), 0))
       RETURNING *)
     SELECT ${ENDPOINT_COLUMNS} FROM e`,
    endpoint.id.toString(),
    endpoint.userId.toString(),
    endpoint.keyId.toString(),
    endpoint.url,
    endpoint.collection,
    endpoint.eventType,
    endpoint.minConfirmations,
    endpoint.standard,
    endpoint.secretCiphertext,
    endpoint.secretPrefix,
  )
  return { row: rows[0] ?? null, reason: null }
}

/** The user's endpoints (of one key when given), oldest first. */
/**
 * Endpoints a listing holds at most: every active key's (25 keys of 10 endpoints at most),
 * then the newest of revoked keys', so that a listing stays bounded however many keys an
 * account has revoked (docs/portal.md, "Keys and audit trail").
 */
export const LISTED_ENDPOINTS = 300

export async function listEndpointsOfUser(
  db: ReadDb,
  userId: bigint,
  keyId?: bigint,
  limit = LISTED_ENDPOINTS,
): Promise<WebhookEndpointRow[]> {
  const params: string[] = [userId.toString(), String(limit)]
  if (keyId !== undefined) params.push(keyId.toString())
  const { rows } = await db.pool.query<WebhookEndpointRow>(
    `WITH listed AS (
       SELECT e.id FROM webhook_endpoints e JOIN api_keys k ON k.id = e.key_id
        WHERE e.user_id = $1 ${keyId !== undefined ? 'AND e.key_id = $3' : ''}
        ORDER BY k.status = 'active' DESC, e.id DESC LIMIT $2)
     SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints e JOIN listed l ON l.id = e.id
      ORDER BY e.id`,
    params,
  )
  return rows
}

/** One of the user's endpoints (null when it is not theirs or does not exist). */
export async function findEndpointOfUser(
  db: ReadDb,
  userId: bigint,
  id: bigint,
): Promise<WebhookEndpointRow | null> {
  const { rows } = await db.pool.query<WebhookEndpointRow>(
    `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints e WHERE e.id = $1 AND e.user_id = $2`,
    [id.toString(), userId.toString()],
  )
  return rows[0] ?? null
}

/**
 * Enables or disables one of the user's endpoints. Enabling clears the
 * failure run and the reason; the cursor stays, so delivery resumes where it
 * stopped (entries still in the journal).
 */
async function setEndpointEnabled(
  tx: Tx,
  userId: bigint,
  id: bigint,
  enabled: boolean,
  reason: string | null,
): Promise<WebhookEndpointRow | null> {
  const rows = await tx.$queryRawUnsafe<WebhookEndpointRow[]>(
    `WITH e AS (
       UPDATE webhook_endpoints
          SET enabled = $3::boolean,
              disabled_reason = CASE WHEN $3::boolean THEN NULL ELSE $4::text END,
              disabled_at = CASE WHEN $3::boolean THEN NULL ELSE now() END,
              failing_since = NULL
        WHERE id = $1::bigint AND user_id = $2::bigint
        RETURNING *)
     SELECT ${ENDPOINT_COLUMNS} FROM e`,
    id.toString(),
    userId.toString(),
    enabled,
    reason,
  )
  return rows[0] ?? null
}

/** Replaces the signing secret of one of the user's endpoints. */
async function setEndpointSecret(
  tx: Tx,
  userId: bigint,
  id: bigint,
  secretCiphertext: string,
  secretPrefix: string,
): Promise<WebhookEndpointRow | null> {
  const rows = await tx.$queryRawUnsafe<WebhookEndpointRow[]>(
    `WITH e AS (
       UPDATE webhook_endpoints SET secret_ciphertext = $3, secret_prefix = $4
        WHERE id = $1::bigint AND user_id = $2::bigint RETURNING *)
     SELECT ${ENDPOINT_COLUMNS} FROM e`,
    id.toString(),
    userId.toString(),
    secretCiphertext,
    secretPrefix,
  )
  return rows[0] ?? null
}

/** Deletes one of the user's endpoints with its delivery log; the deleted row, or null. */
async function deleteEndpointOfUser(tx: Tx, userId: bigint, id: bigint): Promise<WebhookEndpointRow | null> {
  const rows = await tx.$queryRawUnsafe<WebhookEndpointRow[]>(
    `WITH e AS (DELETE FROM webhook_endpoints WHERE id = $1::bigint AND user_id = $2::bigint RETURNING *)
     SELECT ${ENDPOINT_COLUMNS} FROM e`,
    id.toString(),
    userId.toString(),
  )
  return rows[0] ?? null
}

/** An endpoint's newest deliveries, newest first. */
export async function listDeliveries(
  db: ReadDb,
  endpointId: bigint,
  limit: number,
): Promise<WebhookDeliveryRow[]> {
  const { rows } = await db.pool.query<WebhookDeliveryRow>(
    `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d
      WHERE d.endpoint_id = $1 ORDER BY d.id DESC LIMIT $2`,
    [endpointId.toString(), limit],
  )
  return rows
}

/** One delivery of an endpoint, with its payload (null when not of that endpoint). */
export async function findDelivery(
  db: ReadDb,
  endpointId: bigint,
  id: bigint,
): Promise<(WebhookDeliveryRow & { payload: string }) | null> {
  const { rows } = await db.pool.query<WebhookDeliveryRow & { payload: string }>(
    `SELECT ${DELIVERY_COLUMNS}, d.payload FROM webhook_deliveries d WHERE d.id = $1 AND d.endpoint_id = $2`,
    [id.toString(), endpointId.toString()],
  )
  return rows[0] ?? null
}

// ── Delivery ───────────────────────────────────────────────────────────────

/** pg-boss's `db` option: statements that run on a given connection (inside its transaction). */
export interface JobExecutor {
  executeSql(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>
}

/** The statements of one transaction of delivery. */
export interface WebhookTx {
  /** Reads of the activity journal inside the transaction (nextEvents). */
  reads: ReadDb
  /** For the job library: its job inserted in the same transaction. */
  jobs: JobExecutor
  insertDelivery(endpointId: bigint, event: { id: string; type: string; payload: string }): Promise<bigint>
  setCursor(endpointId: bigint, cursor: bigint): Promise<void>
  /** The endpoint's backlog: its deliveries pending or retrying (counted up to 10,000). */
  openDeliveries(endpointId: bigint): Promise<number>
}

function txOf(client: pg.PoolClient): WebhookTx {
  return {
    reads: { pool: client as unknown as pg.Pool },
    jobs: { executeSql: (text, values) => client.query(text, values) },
    async insertDelivery(endpointId, event) {
      const { rows } = await client.query<{ id: string }>(
        `INSERT INTO webhook_deliveries (endpoint_id, event_id, event_type, payload, enqueued)
         VALUES ($1, $2, $3, $4, true) RETURNING id::text AS id`,
        [endpointId.toString(), event.id, event.type, event.payload],
      )
      return BigInt(rows[0]!.id)
    },
    async setCursor(endpointId, cursor) {
      await client.query('UPDATE webhook_endpoints SET cursor = $2 WHERE id = $1', [
        endpointId.toString(),
        cursor.toString(),
      ])
    },
    async openDeliveries(endpointId) {
      // webhook_deliveries_open_idx: the open rows only, counted up to a bound (every failed
      // attempt counts once: a deep backlog must not make each count long).
      const { rows } = await client.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM (SELECT 1 FROM webhook_deliveries
          WHERE endpoint_id = $1 AND status IN ('pending', 'retrying') LIMIT 10000) open`,
        [endpointId.toString()],
      )
      return rows[0]!.n
    },
  }
}

/** Runs `fn` in one transaction on its own connection; rolled back when it throws. */
export async function inWebhookTransaction<T>(db: ReadDb, fn: (tx: WebhookTx) => Promise<T>): Promise<T> {
  const client = await db.pool.connect()
  try {
    await client.query('BEGIN')
    const result = await fn(txOf(client))
    await client.query('COMMIT')
    return result
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined)
    throw err
  } finally {
    client.release()
  }
}

/** Claims up to `limit` deliveries not queued yet (redeliveries), marking them queued; their ids and endpoints. */
export async function claimUnqueued(
  tx: WebhookTx,
  limit: number,
): Promise<{ deliveryId: bigint; endpointId: bigint }[]> {
  const { rows } = await tx.reads.pool.query<{ id: string; endpoint_id: string }>(
    `UPDATE webhook_deliveries SET enqueued = true
      WHERE id IN (SELECT id FROM webhook_deliveries WHERE NOT enqueued ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED)
      RETURNING id::text AS id, endpoint_id::text AS endpoint_id`,
    [limit],
  )
  return rows.map((r) => ({ deliveryId: BigInt(r.id), endpointId: BigInt(r.endpoint_id) }))
}

/** Whether any delivery waits to be queued (one index probe). */
export async function hasUnqueued(db: ReadDb): Promise<boolean> {
  const { rows } = await db.pool.query('SELECT 1 FROM webhook_deliveries WHERE NOT enqueued LIMIT 1')
  return rows.length > 0
}

/**
 * A new delivery of a delivered (or failed) event of one of the user's
 * endpoints: same event id and payload, queued by the dispatcher. The new
 * row, or null when the delivery is not of that user's endpoint.
 */
async function insertRedelivery(
  tx: Tx,
  userId: bigint,
  endpointId: bigint,
  deliveryId: bigint,
): Promise<WebhookDeliveryRow | null> {
  const rows = await tx.$queryRawUnsafe<WebhookDeliveryRow[]>(
    `WITH d AS (
       INSERT INTO webhook_deliveries (endpoint_id, event_id, event_type, payload)
       SELECT o.endpoint_id, o.event_id, o.event_type, o.payload
         FROM webhook_deliveries o JOIN webhook_endpoints e ON e.id = o.endpoint_id
        WHERE o.id = $1::bigint AND o.endpoint_id = $2::bigint AND e.user_id = $3::bigint
       RETURNING *)
     SELECT ${DELIVERY_COLUMNS} FROM d`,
    deliveryId.toString(),
    endpointId.toString(),
    userId.toString(),
  )
  return rows[0] ?? null
}

/** Ids of the enabled endpoints of active keys whose cursor is behind the journal (or that wait for confirmations). */
export async function endpointsToDispatch(db: ReadDb): Promise<bigint[]> {
  const { rows } = await db.pool.query<{ id: string }>(
    `SELECT e.id::text AS id FROM webhook_endpoints e JOIN api_keys k ON k.id = e.key_id AND k.status = 'active'
      WHERE e.enabled AND e.cursor < COALESCE((SELECT max(seq) FROM activity_journal), 0)
      ORDER BY e.id`,
  )
  return rows.map((r) => BigInt(r.id))
}

/**
 * Locks an enabled endpoint for dispatching, or null when it is disabled, gone
 * or locked by another process (SKIP LOCKED: that process is dispatching it).
 */
export async function lockEndpointForDispatch(
  tx: WebhookTx,
  id: bigint,
): Promise<Pick<
  WebhookEndpointRow,
  'id' | 'collection' | 'event_type' | 'min_confirmations' | 'standard' | 'cursor'
> | null> {
  const { rows } = await tx.reads.pool.query(
    `SELECT id::text AS id, collection, event_type, min_confirmations, standard, cursor::text AS cursor
       FROM webhook_endpoints WHERE id = $1 AND enabled FOR UPDATE SKIP LOCKED`,
    [id.toString()],
  )
  return rows[0] ?? null
}

/** The indexer's head (last seen block) of `network`, or null without a state row. */
export async function selectHead(db: ReadDb, network: string): Promise<bigint | null> {
  const { rows } = await db.pool.query<{ head: string }>(
    'SELECT last_seen_block::text AS head FROM indexer_state WHERE network = $1',
    [network],
  )
  return rows[0] ? BigInt(rows[0].head) : null
}

/** What a delivery job needs: the delivery, its payload, and its endpoint (null when gone). */
export interface DeliveryTarget {
  delivery_id: string
  event_id: string
  payload: string
  status: DeliveryStatus
  attempts: number
  endpoint_id: string
  url: string
  secret_ciphertext: string
  enabled: boolean
  /** A revoked key's endpoints receive nothing. */
  key_active: boolean
}

export async function findDeliveryTarget(db: ReadDb, deliveryId: bigint): Promise<DeliveryTarget | null> {
  const { rows } = await db.pool.query<DeliveryTarget>(
    `SELECT d.id::text AS delivery_id, d.event_id::text AS event_id, d.payload, d.status, d.attempts,
            e.id::text AS endpoint_id, e.url, e.secret_ciphertext, e.enabled,
            k.status = 'active' AS key_active
       FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
            JOIN api_keys k ON k.id = e.key_id
      WHERE d.id = $1`,
    [deliveryId.toString()],
  )
  return rows[0] ?? null
}

/** Records an attempt that the receiver answered with 2xx; ends the endpoint's failure run. */
export async function recordDelivered(
  db: ReadDb,
  deliveryId: bigint,
  attempt: { number: number; statusCode: number; durationMs: number },
): Promise<void> {
  await db.pool.query(
    `WITH d AS (
       UPDATE webhook_deliveries
          SET status = 'delivered', attempts = $4, last_status_code = $2, last_error = NULL,
              last_duration_ms = $3, next_attempt_at = NULL, updated_at = now()
        WHERE id = $1 AND attempts = $4 - 1 RETURNING endpoint_id)
     UPDATE webhook_endpoints SET failing_since = NULL FROM d WHERE webhook_endpoints.id = d.endpoint_id`,
    [deliveryId.toString(), attempt.statusCode, attempt.durationMs, attempt.number],
  )
}

/**
 * Records failed attempt number `attempt.number`: `retryInMs` null means no retry is left;
 * else the next attempt is due that long from the database's now. The endpoint's failure
 * run starts at its first failed attempt since the last delivered one; when it is older
 * than `disableAfterMs`, the endpoint is disabled with `reason`. Returns whether the
 * attempt was recorded (not when that attempt, or a later one, was recorded already: a
 * job run twice) and whether it disabled the endpoint.
 */
export async function recordFailedAttempt(
  tx: WebhookTx,
  deliveryId: bigint,
  attempt: {
    number: number
    statusCode: number | null
    error: string
    durationMs: number
    retryInMs: number | null
    disableAfterMs: number
    reason: string
  },
): Promise<{ recorded: boolean; disabled: boolean }> {
  const { rows } = await tx.reads.pool.query<{ recorded: boolean; disabled: boolean }>(
    `WITH d AS (
       UPDATE webhook_deliveries
          SET status = CASE WHEN $5::float8 IS NULL THEN 'failed' ELSE 'retrying' END,
              attempts = $8, last_status_code = $2, last_error = $3, last_duration_ms = $4,
              next_attempt_at = now() + $5::float8 * interval '1 millisecond', updated_at = now()
        WHERE id = $1 AND attempts = $8 - 1 RETURNING endpoint_id),
     e AS (
       UPDATE webhook_endpoints w
          SET failing_since = COALESCE(w.failing_since, now()),
              enabled = CASE WHEN w.enabled AND w.failing_since < now() - $6 * interval '1 millisecond'
                             THEN false ELSE w.enabled END,
              disabled_reason = CASE WHEN w.enabled AND w.failing_since < now() - $6 * interval '1 millisecond'
                                     THEN $7 ELSE w.disabled_reason END,
              disabled_at = CASE WHEN w.enabled AND w.failing_since < now() - $6 * interval '1 millisecond'
                                 THEN now() ELSE w.disabled_at END
         FROM d WHERE w.id = d.endpoint_id
        RETURNING (w.enabled = false AND w.disabled_at = now()) AS disabled)
     SELECT EXISTS (SELECT 1 FROM d) AS recorded, COALESCE((SELECT disabled FROM e), false) AS disabled`,
    [
      deliveryId.toString(),
      attempt.statusCode,
      attempt.error.slice(0, 500),
      attempt.durationMs,
      attempt.retryInMs,
      attempt.disableAfterMs,
      attempt.reason,
      attempt.number,
    ],
  )
  return { recorded: rows[0]?.recorded ?? false, disabled: rows[0]?.disabled ?? false }
}

/** A delivery that will not be attempted (its endpoint is disabled or gone). */
export async function recordSkipped(db: ReadDb, deliveryId: bigint, reason: string): Promise<void> {
  await db.pool.query(
    `UPDATE webhook_deliveries SET status = 'skipped', last_error = $2, next_attempt_at = NULL, updated_at = now()
      WHERE id = $1`,
    [deliveryId.toString(), reason],
  )
}

/** Deletes deliveries older than `retentionMs`; returns how many. */
export async function pruneDeliveries(db: ReadDb, retentionMs: number): Promise<number> {
  const { rowCount } = await db.pool.query(
    `DELETE FROM webhook_deliveries WHERE created_at < now() - $1 * interval '1 millisecond'`,
    [retentionMs],
  )
  return rowCount ?? 0
}

/** The portal's writes, run in the transaction that writes their audit event (@/db/queries/transaction). */
export const webhookStatements = {
  nextEndpointId,
  insertEndpoint,
  setEndpointEnabled,
  setEndpointSecret,
  deleteEndpointOfUser,
  insertRedelivery,
}

/** The connection's first schema (`public` in a deployment; a test's own schema in tests). */
export async function currentSchema(db: ReadDb): Promise<string> {
  const { rows } = await db.pool.query<{ schema: string }>('SELECT current_schema() AS schema')
  return rows[0]?.schema ?? 'public'
}
