import { responseSchema } from '@/server/api/internals/response-schema'
import { createV1Router, v1Procedure } from '@/server/api/trpc/v1'
import { listOwnerNfts } from './owners.handler'
import { listOwnerNftsInput, ownerNftPage } from './owners.schema'

export const ownersRouter = createV1Router({
  nfts: v1Procedure({
    scope: 'read:owners',
    method: 'GET',
    path: '/v1/owners/{address}/nfts',
    tags: ['Owners'],
    summary: 'Tokens an address holds',
    description:
      "Tokens whose current owner is the address, ordered across collections by collection address, then numeric token id. There is no collection filter: page until a match appears or `has_more` is false. A burned token belongs to the zero address, so it leaves its last holder's list; check `is_burned` all the same when deciding current holdings. Extension: `standard=ERC1155` or `all` lists (also) the ERC-1155 tokens the address holds a positive balance of, in the same order, each with its `balance`.",
    errorResponses: [400, 401, 403, 429, 503],
  })
    .input(listOwnerNftsInput)
    .output(responseSchema(ownerNftPage))
    .query(({ ctx, input }) => listOwnerNfts(ctx, input)),
})
