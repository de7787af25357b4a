import { responseSchema } from '@/server/api/internals/response-schema'
import { createV1Router, v1Procedure } from '@/server/api/trpc/v1'
import { ERC1155_SCOPED } from '@/server/api/v1/standard-note'
import { listTokenHolders } from './holders.handler'
import { listTokenHoldersInput, tokenHolderPage } from './holders.schema'
import {
  getNftInput,
  getNftMetadataOutput,
  getNftOutput,
  listCollectionNftsInput,
  nftKeyInput,
  nftPage,
} from './nft.schema'
import { getNft, getNftMetadata, listCollectionNfts } from './nfts.handler'

export const nftsRouter = createV1Router({
  get: v1Procedure({
    scope: 'read:nfts',
    method: 'GET',
    path: '/v1/nfts/{address}/{tokenId}',
    tags: ['NFTs'],
    summary: 'One NFT',
    description: `The current state of one token, with the same fields as the list responses. 404 when the token is unknown.${ERC1155_SCOPED}`,
    errorResponses: [400, 401, 403, 404, 429, 503],
  })
    .input(getNftInput)
    .output(responseSchema(getNftOutput))
    .query(async ({ ctx, input }) => ({ data: await getNft(ctx, input) })),

  metadata: v1Procedure({
    scope: 'read:nfts',
    method: 'GET',
    path: '/v1/nfts/{address}/{tokenId}/metadata',
    tags: ['NFTs'],
    summary: "One NFT's metadata document, as fetched",
    description: `Extension: the JSON document the token's URI served when it was last fetched successfully (at most 1 MiB), where it was read from and when. NUL characters are removed, unpaired UTF-16 surrogates replaced and nesting beyond 64 levels cut; the NFT's own fields (\`description\`, \`attributes\`, …) are normalized from it. 404 when the token is unknown or no document of it is stored.${ERC1155_SCOPED}`,
    errorResponses: [400, 401, 403, 404, 429, 503],
  })
    .input(nftKeyInput)
    .output(responseSchema(getNftMetadataOutput))
    .query(async ({ ctx, input }) => ({ data: await getNftMetadata(ctx, input) })),

  owners: v1Procedure({
    scope: 'read:nfts',
    method: 'GET',
    path: '/v1/nfts/{address}/{tokenId}/owners',
    tags: ['NFTs'],
    summary: "A token's holders and their balances",
    description:
      "Extension: who holds the token and how many, largest balance first, then by owner address (bytewise); page with `after_balance` + `after_owner` from `next_page_params`. An ERC-1155 token lists every holder with a positive balance; an ERC-721 token lists its current owner with balance '1', and nobody once burned. Serves both standards without the `standard` parameter. 404 when the token is unknown.",
    errorResponses: [400, 401, 403, 404, 429, 503],
  })
    .input(listTokenHoldersInput)
    .output(responseSchema(tokenHolderPage))
    .query(({ ctx, input }) => listTokenHolders(ctx, input)),

  byCollection: v1Procedure({
    scope: 'read:nfts',
    method: 'GET',
    path: '/v1/collections/{address}/nfts',
    tags: ['NFTs'],
    summary: "A collection's NFTs, in token order",
    description: `Tokens of the collection by ascending numeric token id. Burned tokens are left out unless \`include_burned=true\`. An unknown collection gives an empty page.${ERC1155_SCOPED}`,
    errorResponses: [400, 401, 403, 404, 429, 503],
  })
    .input(listCollectionNftsInput)
    .output(responseSchema(nftPage))
    .query(({ ctx, input }) => listCollectionNfts(ctx, input)),
})
