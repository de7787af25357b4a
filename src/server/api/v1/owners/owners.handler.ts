/**
 * GET /v1/owners/{address}/nfts: the tokens whose current owner is the
 * address, ordered across collections by (collection_address, token_id, id),
 * token ids compared as numbers (tokens_owner_idx). A burned token's owner is
 * the zero address, so an owner's list holds the tokens they hold now.
 */

import { MEDIA_JOINS } from '@/db/media-path'
import type { ReadContext } from '@/server/api/read/context'
import { globalCoverage } from '@/server/api/read/coverage'
import { buildPage, pageLimit, safeInteger } from '@/server/api/read/page'
import { mediaOrigin, NFT_COLUMNS, type NftRow, toNft } from '@/server/api/v1/nfts/nft-row'
import type { ListOwnerNftsInput, OwnerNftPage } from './owners.schema'

export async function listOwnerNfts(ctx: ReadContext, input: ListOwnerNftsInput): Promise<OwnerNftPage> {
  const limit = pageLimit(input.limit)
  const params: unknown[] = [input.address]
  const where = ['t.current_owner = $1']
  if (
    input.after_collection !== undefined &&
    input.after_token_id !== undefined &&
    input.after_id !== undefined
  ) {
    params.push(input.after_collection, input.after_token_id, input.after_id)
    where.push('(t.collection_address, t.token_id, t.id) > ($2::varchar, $3::numeric, $4::int8)')
  }
  params.push(limit + 1)
  const sql = `
    SELECT ${NFT_COLUMNS}, c.name AS collection_name, c.symbol AS collection_symbol
      FROM (SELECT t.id FROM tokens t WHERE ${where.join(' AND ')}
             ORDER BY t.collection_address, t.token_id, t.id LIMIT $${params.length}) page
      JOIN tokens t ON t.id = page.id
      LEFT JOIN collections c ON c.address = t.collection_address
      ${MEDIA_JOINS}
     ORDER BY t.collection_address, t.token_id, t.id`
  const [{ rows }, snapshot] = await Promise.all([ctx.db.pool.query<NftRow>(sql, params), ctx.snapshot()])
  const network = ctx.config.NETWORK
  const origin = mediaOrigin(ctx.config)
  return buildPage(
    rows,
    limit,
    (r) => toNft(r, network, origin),
    (r) => ({
      after_collection: r.collection_address,
      after_token_id: r.token_id,
      after_id: safeInteger(r.id),
    }),
    globalCoverage(snapshot),
  )
}
