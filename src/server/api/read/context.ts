/**
 * What a read handler needs: the configuration, the pg pool and the request's
 * indexer snapshot. Handlers take this plain object, so tests call them
 * without tRPC.
 */
import type pg from 'pg'
import type { Config } from '@/config/env'
import type { IndexerSnapshot } from '@/server/api/read/indexer-snapshot'
import { ApiError } from '@/server/errors/api-error'

export interface ReadContext {
  config: Pick<Config, 'NETWORK' | 'PUBLIC_URL' | 'MEDIA_ORIGIN'>
  db: { pool: pg.Pool }
  snapshot(): Promise<IndexerSnapshot>
  /** Who asked, when a credential did: shared work (snapshots) is limited per requester. */
  credential?: { subject: string }
}

/** `network` on collections, collection detail and activity: only the indexed one (docs/design.md, "Names and formats"). */
export function assertNetwork(ctx: Pick<ReadContext, 'config'>, network: string | undefined): void {
  if (network === undefined || network === ctx.config.NETWORK) return
  throw new ApiError(
    'INVALID_ARGUMENT',
    `network: '${network.slice(0, 64)}' is not indexed here; the only value is '${ctx.config.NETWORK}'.`,
  )
}
