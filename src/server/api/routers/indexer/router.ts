import { apiProcedure, createRouter, responseSchema } from '@/server/api/trpc'
import { getIndexerStatus } from './status.handler'
import { statusInput, statusOutput } from './status.schema'

export const indexerRouter = createRouter({
  status: apiProcedure
    .meta({
      scope: 'read:status',
      openapi: {
        method: 'GET',
        path: '/v1/indexer/status',
        tags: ['Indexer'],
        summary: 'Indexer coverage and freshness',
        description:
          'A sanitized view of indexer coverage. `last_seen_block - last_confirmed_block` is how far the confirmed index trails the observed head.',
        protect: true,
        errorResponses: [400, 401, 403, 404, 429, 503],
      },
    })
    .input(statusInput)
    .output(responseSchema(statusOutput))
    .query(async ({ ctx, input }) => ({ data: await getIndexerStatus(ctx, input) })),
})
