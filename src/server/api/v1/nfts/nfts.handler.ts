/**
 * GET /v1/nfts/{address}/{tokenId} and GET /v1/collections/{address}/nfts.
 *
 * A collection's tokens are listed in token order: (token_id, id) ascending,
 * token ids compared as numbers. Without burned tokens the page is read from
 * tokens_collection_live_idx (collection, is_burned, token_id, id); with them,
 * from the unique (collection, token_id) key — a token id appears once per
 * collection, so that order is the same (token_id, id) order.
 */

import { MEDIA_JOINS } from '@/db/media-path'
import type { ReadContext } from '@/server/api/read/context'
import { collectionCoverage } from '@/server/api/read/coverage'
import { buildPage, pageLimit, safeInteger } from '@/server/api/read/page'
import { historyOf } from '@/server/api/v1/collections/collection-row'
import { mediaOrigin, NFT_COLUMNS, type NftRow, toNft } from '@/server/api/v1/nfts/nft-row'
import { ApiError } from '@/server/errors/api-error'
import type { ListCollectionNftsInput, Nft, NftPage } from './nft.schema'

export async function getNft(ctx: ReadContext, input: { address: string; tokenId: string }): Promise<Nft> {
  const { rows } = await ctx.db.pool.query<NftRow>(
    `SELECT ${NFT_COLUMNS}, c.name AS collection_name, c.symbol AS collection_symbol
       FROM tokens t
       LEFT JOIN collections c ON c.address = t.collection_address
       ${MEDIA_JOINS}
      WHERE t.collection_address = $1 AND t.token_id = $2::numeric`,
    [input.address, input.tokenId],
  )
  const row = rows[0]
  if (!row) {
    throw new ApiError('NOT_FOUND', `No token ${input.tokenId} of collection ${input.address} is indexed.`)
  }
  return toNft(row, ctx.config.NETWORK, mediaOrigin(ctx.config))
}

type CollectionNftRow = NftRow & {
  deploy_block: string | null
  first_seen_block: string | null
  id: string | null
}

export async function listCollectionNfts(ctx: ReadContext, input: ListCollectionNftsInput): Promise<NftPage> {
  const limit = pageLimit(input.limit)
  const includeBurned = input.include_burned ?? false
  const params: unknown[] = [input.address]
  // $1, not the lateral c.address: the planner then knows the collection.
  const where = ['t.collection_address = $1']
  if (!includeBurned) where.push('NOT t.is_burned')
  const after =
    input.after_token_id !== undefined && input.after_id !== undefined
      ? { tokenId: BigInt(input.after_token_id), id: BigInt(input.after_id) }
      : undefined
  if (after && !includeBurned) {
    params.push(input.after_token_id, input.after_id)
    where.push('(t.token_id, t.id) > ($2::numeric, $3::int8)')
  } else if (after) {
    // The unique (collection, token_id) key has no id: bound by token_id
    // alone (an exact index range) and drop the cursor's own token below.
    params.push(input.after_token_id)
    where.push('t.token_id >= $2::numeric')
  }
  // One extra row when the cursor's own token may come back.
  params.push(limit + 1 + (after && includeBurned ? 1 : 0))
  const order = includeBurned ? 't.token_id' : 't.token_id, t.id'
  // token_id is unique per collection, so ordering by it alone is the (token_id, id) order.
  // One round trip: the collection (for names and coverage) and the page.
  // No row at all: the collection is unknown.
  const sql = `
    SELECT c.name AS collection_name, c.symbol AS collection_symbol,
           c.deploy_block::text AS deploy_block, c.first_seen_block::text AS first_seen_block, p.*
      FROM collections c
      LEFT JOIN LATERAL (
        SELECT ${NFT_COLUMNS}
          FROM (SELECT t.id FROM tokens t WHERE ${where.join(' AND ')}
                 ORDER BY ${order} LIMIT $${params.length}) page
          JOIN tokens t ON t.id = page.id
          ${MEDIA_JOINS}
      ) p ON true
     WHERE c.address = $1
     ORDER BY p.token_id::numeric, p.id::int8`
  const [{ rows }, snapshot] = await Promise.all([
    ctx.db.pool.query<CollectionNftRow>(sql, params),
    ctx.snapshot(),
  ])
  const coverage = collectionCoverage(snapshot, rows[0] ? historyOf(rows[0]) : null)
  const tokens = (rows.filter((r) => r.id !== null) as NftRow[]).filter(
    (r) =>
      !after ||
      BigInt(r.token_id) > after.tokenId ||
      (BigInt(r.token_id) === after.tokenId && BigInt(r.id) > after.id),
  )
  const network = ctx.config.NETWORK
  const origin = mediaOrigin(ctx.config)
  return buildPage(
    tokens,
    limit,
    (r) => toNft(r, network, origin),
    (r) => ({ after_token_id: r.token_id, after_id: safeInteger(r.id) }),
    coverage,
  )
}
