/**
 * Refreshes asked for by a signed-in user (docs/portal.md, "Token view"): a
 * token's metadata, or a collection's (name, symbol, contractURI and every
 * token). The web process never fetches: it claims the target in
 * metadata_refresh_requests and wakes the indexer (NOTIFY), which queues the
 * work (docs/metadata.md, "Refresh requests"). Three limits, checked in this
 * order so that a refused request costs nothing: the target's window (one
 * refresh per token per 10 minutes, per collection per hour, across all
 * users; PostgreSQL, atomic), then the user's (30 per hour; the rate-limit
 * store, Redis when configured). Every accepted refresh is an audit event in
 * the same transaction.
 */
import { randomUUID } from 'node:crypto'
import type { Database } from '@/db/database'
import { COLLECTION_TARGET } from '@/db/queries/metadata-refresh'
import { withTransaction } from '@/db/queries/transaction'
import { ApiError } from '@/server/errors/api-error'
import { type Actor, writeAuditEvent } from '@/server/portal-auth/audit'
import type { LimitPolicy } from '@/server/ratelimit/policy'
import type { LimitStore } from '@/server/ratelimit/store'

/** The limits (docs/portal.md, "Token view"). */
export const REFRESH_LIMITS = {
  /** Accepted refreshes per user and hour, tokens and collections together. */
  perUserPerHour: 30,
  /** One refresh of a token per this long, whoever asks. */
  tokenWindowMs: 10 * 60_000,
  /** One refresh of a collection per this long, whoever asks. */
  collectionWindowMs: 60 * 60_000,
}

const USER_POLICY: LimitPolicy = {
  id: 'rf',
  windows: [{ name: 'hour', limit: REFRESH_LIMITS.perUserPerHour, windowMs: 3_600_000 }],
}

export interface RefreshAccepted {
  status: 'accepted'
  target: 'token' | 'collection'
  collection_address: string
  token_id: string | null
  requested_at: string
  /** When this target can be refreshed again. */
  next_allowed_at: string
}

function limited(what: string, retryAt: Date): ApiError {
  const seconds = Math.max(1, Math.ceil((retryAt.getTime() - Date.now()) / 1000))
  return new ApiError('RATE_LIMITED', `${what} The next one is possible at ${retryAt.toISOString()}.`, {
    headers: { 'Retry-After': String(seconds) },
  })
}

async function requestRefresh(
  deps: { db: Database; limitStore: LimitStore | undefined },
  actor: Actor,
  target: { collection: string; tokenId: bigint | null },
): Promise<RefreshAccepted> {
  const isToken = target.tokenId !== null
  const windowMs = isToken ? REFRESH_LIMITS.tokenWindowMs : REFRESH_LIMITS.collectionWindowMs
  const subject = actor.userId.toString()
  const ticket = `refresh.${randomUUID()}`
  let counted = false
  try {
    return await withTransaction(deps.db, async (q) => {
      if (isToken) {
        const token = await q.metadataRefresh.findToken(target.collection, target.tokenId!)
        if (!token)
          throw new ApiError('NOT_FOUND', `Token ${target.tokenId} of ${target.collection} is not indexed.`)
      } else {
        const collection = await q.metadataRefresh.findCollection(target.collection)
        if (!collection) throw new ApiError('NOT_FOUND', `Collection ${target.collection} is not indexed.`)
      }
      const claim = await q.metadataRefresh.claimRefresh({
        collection: target.collection,
        tokenId: target.tokenId ?? COLLECTION_TARGET,
        userId: actor.userId,
        windowMs,
      })
      if (!claim.accepted) {
        throw limited(
          isToken
            ? `This token was refreshed less than ${windowMs / 60_000} minutes ago.`
            : `This collection was refreshed less than ${windowMs / 60_000} minutes ago.`,
          claim.retryAt,
        )
      }
      if (!deps.limitStore) throw new Error('refresh: no rate-limit store in the portal context')
      const decision = await deps.limitStore.acquire(USER_POLICY, subject, ticket, 1_000)
      if (!decision.allowed) {
        throw limited(
          `At most ${REFRESH_LIMITS.perUserPerHour} refreshes per hour per account.`,
          new Date(Date.now() + decision.retryAfterMs),
        )
      }
      counted = true
      await writeAuditEvent(q, actor, {
        action: isToken ? 'token_refresh_requested' : 'collection_refresh_requested',
        details: {
          collection_address: target.collection,
          ...(isToken ? { token_id: target.tokenId!.toString() } : {}),
        },
        at: claim.requestedAt,
      })
      await q.metadataRefresh.notifyIndexer()
      return {
        status: 'accepted' as const,
        target: isToken ? ('token' as const) : ('collection' as const),
        collection_address: target.collection,
        token_id: isToken ? target.tokenId!.toString() : null,
        requested_at: claim.requestedAt.toISOString(),
        next_allowed_at: new Date(claim.requestedAt.getTime() + windowMs).toISOString(),
      }
    })
  } catch (err) {
    // Not accepted after all (the transaction failed): the user's count is given back.
    if (counted) await deps.limitStore?.refund(USER_POLICY, subject, ticket).catch(() => undefined)
    throw err
  }
}

export const refreshToken = (
  deps: { db: Database; limitStore: LimitStore | undefined },
  actor: Actor,
  input: { address: string; tokenId: bigint },
) => requestRefresh(deps, actor, { collection: input.address, tokenId: input.tokenId })

export const refreshCollection = (
  deps: { db: Database; limitStore: LimitStore | undefined },
  actor: Actor,
  input: { address: string },
) => requestRefresh(deps, actor, { collection: input.address, tokenId: null })
