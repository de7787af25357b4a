import { responseSchema } from '@/server/api/internals/response-schema'
import { createV1Router, v1Procedure } from '@/server/api/trpc/v1'
import { ERC1155_SCOPED } from '@/server/api/v1/standard-note'
import { collectionTransfersInput, tokenTransfersInput, transferPage } from './transfer.schema'
import { listTransfers } from './transfers.handler'

const FEED_NOTE =
  'Canonical rows only (rows of blocks orphaned by a reorganisation are removed), newest first; inside one block the later log comes first. Page with `before_timestamp` + `before_id` from `next_page_params`. `coverage` can be `partial` with a `start_block` when the collection predates the indexed window.'

export const transfersRouter = createV1Router({
  byCollection: v1Procedure({
    scope: 'read:transfers',
    method: 'GET',
    path: '/v1/collections/{address}/transfers',
    tags: ['Transfers'],
    summary: "A collection's transfers, newest first",
    description: `${FEED_NOTE} An unknown collection gives an empty page.${ERC1155_SCOPED}`,
    errorResponses: [400, 401, 403, 404, 429, 503],
  })
    .input(collectionTransfersInput)
    .output(responseSchema(transferPage))
    .query(({ ctx, input }) => listTransfers(ctx, input)),

  byToken: v1Procedure({
    scope: 'read:transfers',
    method: 'GET',
    path: '/v1/nfts/{address}/{tokenId}/transfers',
    tags: ['Transfers'],
    summary: "A token's transfers, newest first",
    description: `${FEED_NOTE} An unknown token gives an empty page.${ERC1155_SCOPED}`,
    errorResponses: [400, 401, 403, 404, 429, 503],
  })
    .input(tokenTransfersInput)
    .output(responseSchema(transferPage))
    .query(({ ctx, input }) => listTransfers(ctx, input)),
})
