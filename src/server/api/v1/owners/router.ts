import { responseSchema } from '@/server/api/internals/response-schema'
import { createV1Router, v1Procedure } from '@/server/api/trpc/v1'
import { listOwnerCollections, listOwnerNfts, listOwnerTransfers } from './owners.handler'
import {
  listOwnerCollectionsInput,
  listOwnerNftsInput,
  listOwnerTransfersInput,
  ownerCollectionPage,
  ownerNftPage,
  ownerTransferPage,
} from './owners.schema'

export const ownersRouter = createV1Router({
  nfts: v1Procedure({
    scope: 'read:owners',
    method: 'GET',
    path: '/v1/owners/{address}/nfts',
    tags: ['Owners'],
    summary: 'Tokens an address holds',
    description:
      "Tokens whose current owner is the address, ordered across collections by collection address, then numeric token id. A burned token belongs to the zero address, so it leaves its last holder's list; check `is_burned` all the same when deciding current holdings. Extension: `standard=ERC1155` or `all` lists (also) the ERC-1155 tokens the address holds a positive balance of, in the same order, each with its `balance`. Extension: `collection` (repeatable, up to 100) keeps only those collections' tokens; `at_block` lists the tokens held after that block (a snapshot: each token's owner, burned state, transfer count and balance at that block, its metadata as today).",
    errorResponses: [400, 401, 403, 429, 503],
  })
    .input(listOwnerNftsInput)
    .output(responseSchema(ownerNftPage))
    .query(({ ctx, input }) => listOwnerNfts(ctx, input)),

  collections: v1Procedure({
    scope: 'read:owners',
    method: 'GET',
    path: '/v1/owners/{address}/collections',
    tags: ['Owners'],
    summary: 'Collections an address holds tokens of',
    description:
      "Extension: the collections of which the address holds a token (ERC-721) or a positive balance of a token id (ERC-1155), by collection address; page with `after_collection` from `next_page_params`. Each with the collection's name, symbol and `contract_type`, the `token_count` held and, for ERC-1155, the `balance` summed over its token ids. Serves both standards without the `standard` parameter.",
    errorResponses: [400, 401, 403, 429, 503],
  })
    .input(listOwnerCollectionsInput)
    .output(responseSchema(ownerCollectionPage))
    .query(({ ctx, input }) => listOwnerCollections(ctx, input)),

  transfers: v1Procedure({
    scope: 'read:transfers',
    method: 'GET',
    path: '/v1/owners/{address}/transfers',
    tags: ['Transfers'],
    summary: "An address's transfers in and out, newest first",
    description:
      "Extension: canonical transfers from or to the address (a transfer from the address to itself once), newest first; inside one block the later log comes first. `direction=in` or `out` keeps one side. Page with `before_timestamp` + `before_id` from `next_page_params`. Serves both standards without the `standard` parameter: every record carries `amount` ('1' on ERC-721 rows). Mints are the zero address's transfers out, burns its transfers in.",
    errorResponses: [400, 401, 403, 429, 503],
  })
    .input(listOwnerTransfersInput)
    .output(responseSchema(ownerTransferPage))
    .query(({ ctx, input }) => listOwnerTransfers(ctx, input)),
})
