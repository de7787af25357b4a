/**
 * GET /v1/owners/{address}/nfts: the tokens whose current owner is the
 * address, ordered across collections by (collection_address, token_id, id),
 * token ids compared as numbers (src/db/queries/tokens.ts). A burned token's
 * owner is the zero address, so an owner's list holds the tokens they hold now.
 * With `standard` (docs/api.md, "ERC-1155"): also or only the ERC-1155 tokens
 * of which the address holds a positive balance, in the same order and with
 * the same cursor, each with its `balance`.
 */

import { selectOwnerTokens } from '@/db/queries/tokens'
import type { ReadContext } from '@/server/api/read/context'
import { globalCoverage } from '@/server/api/read/coverage'
import { buildPage, pageLimit, safeInteger } from '@/server/api/read/page'
import { standardsOf } from '@/server/api/read/standard'
import { mediaOrigin, toNft } from '@/server/api/v1/nfts/nft-shape'
import type { ListOwnerNftsInput, OwnerNftPage } from './owners.schema'

export async function listOwnerNfts(ctx: ReadContext, input: ListOwnerNftsInput): Promise<OwnerNftPage> {
  const limit = pageLimit(input.limit)
  const standards = standardsOf(input.standard)
  const after =
    input.after_collection !== undefined && input.after_token_id !== undefined && input.after_id !== undefined
      ? { collection: input.after_collection, tokenId: input.after_token_id, id: input.after_id }
      : undefined
  const [rows, snapshot] = await Promise.all([
    selectOwnerTokens(ctx.db, {
      owner: input.address,
      after,
      rows: limit + 1,
      withDocument: input.include_metadata ?? false,
      withStandard: standards.extended,
      standard: standards.filter,
    }),
    ctx.snapshot(),
  ])
  const network = ctx.config.NETWORK
  const origin = mediaOrigin(ctx.config)
  return buildPage(
    rows,
    limit,
    (r) => toNft(r, network, origin, standards.extended),
    (r) => ({
      after_collection: r.collection_address,
      after_token_id: r.token_id,
      after_id: safeInteger(r.id),
    }),
    globalCoverage(snapshot),
  )
}
