/**
 * metadata_refresh_requests, the web side: a signed-in user's refresh of a
 * token or a collection is one row per target, written here and applied by
 * the indexer (src/indexer/store/metadata-refresh.ts; docs/metadata.md,
 * "Refresh requests"). The row's requested_at is the target's limit too: a
 * claim succeeds only when the last accepted request is older than the window,
 * atomically across web processes (the row is locked by the upsert).
 */
import { Prisma } from '@/db/generated/client'
import type { Tx } from './transaction'

/** token_id of a collection's own request. */
export const COLLECTION_TARGET = -1n

/** The PostgreSQL channel the indexer listens on. */
export const METADATA_REFRESH_CHANNEL = 'metadata_refresh'

export type RefreshClaim = { accepted: true; requestedAt: Date } | { accepted: false; retryAt: Date }

/**
 * Claims a refresh of (collection, tokenId) for `userId`: accepted when no
 * request of that target was accepted within `windowMs`; otherwise, when the
 * next one will be. Accepted rows are pending for the indexer (applied_at null).
 */
async function claimRefresh(
  tx: Tx,
  target: { collection: string; tokenId: bigint; userId: bigint; windowMs: number },
): Promise<RefreshClaim> {
  const tokenId = new Prisma.Decimal(target.tokenId.toString())
  const claimed = await tx.$queryRaw<{ requested_at: Date }[]>`
    INSERT INTO metadata_refresh_requests (collection_address, token_id, requested_at, requested_by, applied_at)
    VALUES (${target.collection}, ${tokenId}, now(), ${target.userId}, NULL)
    ON CONFLICT (collection_address, token_id) DO UPDATE
       SET requested_at = now(), requested_by = excluded.requested_by, applied_at = NULL
     WHERE metadata_refresh_requests.requested_at <= now() - ${target.windowMs} * interval '1 millisecond'
    RETURNING requested_at`
  if (claimed[0]) return { accepted: true, requestedAt: claimed[0].requested_at }
  const held = await tx.$queryRaw<{ retry_at: Date }[]>`
    SELECT requested_at + ${target.windowMs} * interval '1 millisecond' AS retry_at
      FROM metadata_refresh_requests WHERE collection_address = ${target.collection} AND token_id = ${tokenId}`
  return { accepted: false, retryAt: held[0]?.retry_at ?? new Date(Date.now() + target.windowMs) }
}

/** Wakes the indexer (delivered when the transaction commits; it also polls). */
async function notifyIndexer(tx: Tx): Promise<void> {
  await tx.$executeRaw`SELECT pg_notify(${METADATA_REFRESH_CHANNEL}, '')`
}

/** Whether the token is indexed (any state: a burned token is refused by the caller). */
async function findToken(
  tx: Tx,
  collection: string,
  tokenId: bigint,
): Promise<{ is_burned: boolean } | undefined> {
  const rows = await tx.$queryRaw<{ is_burned: boolean }[]>`
    SELECT is_burned FROM tokens
     WHERE collection_address = ${collection} AND token_id = ${new Prisma.Decimal(tokenId.toString())}`
  return rows[0]
}

/** Whether the collection is indexed, and how many tokens a refresh of it queues. */
async function findCollection(tx: Tx, collection: string): Promise<{ total_supply: bigint } | undefined> {
  const rows = await tx.$queryRaw<{ total_supply: bigint }[]>`
    SELECT total_supply FROM collections WHERE address = ${collection}`
  return rows[0]
}

export const metadataRefreshStatements = { claimRefresh, notifyIndexer, findToken, findCollection }
