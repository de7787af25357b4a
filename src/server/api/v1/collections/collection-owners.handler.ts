/**
 * GET /v1/collections/{address}/owners (docs/api.md, "Ownership views"): a
 * collection's holders, most tokens first, then by owner address (bytewise),
 * paged by (after_token_count, after_owner). Both standards, without the
 * `standard` parameter: an ERC-1155 holder counts the token ids of which it
 * holds a positive balance and carries the sum of those balances. 404 for an
 * unknown collection.
 *
 * With `at_block`: the holders after that block (a snapshot, computed once
 * per collection and block and kept in the process's snapshot cache;
 * src/server/api/read/snapshot-cache.ts), paged the same way.
 */
import { selectCollection } from '@/db/queries/collections'
import { selectCollectionOwners, selectCollectionOwnersAt } from '@/db/queries/owners'
import { snapshotBlock } from '@/server/api/read/at-block'
import type { ReadContext } from '@/server/api/read/context'
import { collectionCoverage } from '@/server/api/read/coverage'
import { buildPage, pageLimit } from '@/server/api/read/page'
import { snapshotBasis, snapshotCache, snapshotKey } from '@/server/api/read/snapshot-cache'
import { HolderColumns } from '@/server/api/read/snapshot-columns'
import { historyOf } from '@/server/api/v1/collections/collection-shape'
import { ApiError } from '@/server/errors/api-error'
import type {
  CollectionOwner,
  CollectionOwnerPage,
  ListCollectionOwnersInput,
} from './collection-owners.schema'

type After = { tokenCount: number; owner: string }

const unknown = (address: string) => new ApiError('NOT_FOUND', `No collection ${address} is indexed.`)

function toOwner(row: { owner: string; token_count: number; balance: string | null }): CollectionOwner {
  const out: CollectionOwner = { owner: row.owner, token_count: row.token_count }
  if (row.balance !== null) out.balance = row.balance
  return out
}

export async function listCollectionOwners(
  ctx: ReadContext,
  input: ListCollectionOwnersInput,
): Promise<CollectionOwnerPage> {
  const limit = pageLimit(input.limit)
  const after: After | undefined =
    input.after_token_count !== undefined && input.after_owner !== undefined
      ? { tokenCount: input.after_token_count, owner: input.after_owner }
      : undefined
  if (input.at_block !== undefined) return ownersAtBlock(ctx, input.address, input.at_block, limit, after)
  const [rows, snapshot] = await Promise.all([
    selectCollectionOwners(ctx.db, { address: input.address, after, rows: limit + 1 }),
    ctx.snapshot(),
  ])
  const first = rows[0]
  if (!first) throw unknown(input.address)
  const holders = rows.flatMap((r) =>
    r.owner !== null && r.token_count !== null
      ? [{ owner: r.owner, token_count: r.token_count, balance: r.balance }]
      : [],
  )
  return buildPage(
    holders,
    limit,
    toOwner,
    (h) => ({ after_token_count: h.token_count, after_owner: h.owner }),
    collectionCoverage(snapshot, historyOf(first)),
  )
}

async function ownersAtBlock(
  ctx: ReadContext,
  address: string,
  atBlock: string,
  limit: number,
  after: After | undefined,
): Promise<CollectionOwnerPage> {
  const [collection, snapshot] = await Promise.all([selectCollection(ctx.db, address), ctx.snapshot()])
  if (!collection) throw unknown(address)
  const history = historyOf(collection)
  const coverage = collectionCoverage(snapshot, history)
  const block = snapshotBlock(atBlock, snapshot, coverage)
  const multi = collection.standard === 'ERC1155'
  const since = history.firstSeenBlock ?? history.deployBlock ?? 0n
  const holders = await snapshotCache(ctx.db.pool).get(
    snapshotKey(snapshot, 'holders', address, block),
    async () =>
      HolderColumns.of(
        await selectCollectionOwnersAt(ctx.db, {
          address,
          block,
          multi,
          head: snapshot.lastSeenBlock,
          since,
          basis: snapshotBasis(ctx.config.NETWORK, snapshot),
        }),
      ),
    (columns) => columns.bytes,
    ctx.credential?.subject,
  )
  const start = after ? holders.firstAfter(after) : 0
  return buildPage(
    holders.slice(start, start + limit + 1),
    limit,
    toOwner,
    (h) => ({ after_token_count: h.token_count, after_owner: h.owner, at_block: atBlock }),
    coverage,
  )
}
