import { apiProcedure, createRouter, responseSchema } from '@/server/api/trpc'
import { getNftInput, getNftOutput, listCollectionNftsInput, nftPage } from './nft.schema'
import { getNft, listCollectionNfts } from './nfts.handler'

export const nftsRouter = createRouter({
  get: apiProcedure
    .meta({
      scope: 'read:nfts',
      openapi: {
        method: 'GET',
        path: '/v1/nfts/{address}/{tokenId}',
        tags: ['NFTs'],
        summary: 'One NFT',
        description:
          'The current state of one token, with the same fields as the list responses. 404 when the token is unknown.',
        protect: true,
        errorResponses: [400, 401, 403, 404, 429, 503],
      },
    })
    .input(getNftInput)
    .output(responseSchema(getNftOutput))
    .query(async ({ ctx, input }) => ({ data: await getNft(ctx, input) })),

  byCollection: apiProcedure
    .meta({
      scope: 'read:nfts',
      openapi: {
        method: 'GET',
        path: '/v1/collections/{address}/nfts',
        tags: ['NFTs'],
        summary: "A collection's NFTs, in token order",
        description:
          'Tokens of the collection by ascending numeric token id. Burned tokens are left out unless `include_burned=true`. An unknown collection gives an empty page.',
        protect: true,
        errorResponses: [400, 401, 403, 429, 503],
      },
    })
    .input(listCollectionNftsInput)
    .output(responseSchema(nftPage))
    .query(({ ctx, input }) => listCollectionNfts(ctx, input)),
})
