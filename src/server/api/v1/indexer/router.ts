import { responseSchema } from '@/server/api/internals/response-schema'
import { createV1Router, v1Procedure } from '@/server/api/trpc/v1'
import { getIndexerStatus } from './status.handler'
import { statusInput, statusOutput } from './status.schema'

export const indexerRouter = createV1Router({
  status: v1Procedure({
    scope: 'read:status',
    method: 'GET',
    path: '/v1/indexer/status',
    tags: ['Indexer'],
    summary: 'Indexer coverage and freshness',
    description:
      'A sanitized view of indexer coverage. `last_seen_block - last_confirmed_block` is how far the confirmed index trails the observed head.',
    errorResponses: [400, 401, 403, 404, 429, 503],
  })
    .input(statusInput)
    .output(responseSchema(statusOutput))
    .query(async ({ ctx, input }) => ({ data: await getIndexerStatus(ctx, input) })),
})
