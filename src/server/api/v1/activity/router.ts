import { responseSchema } from '@/server/api/internals/response-schema'
import { createV1Router, v1Procedure } from '@/server/api/trpc/v1'
import { listActivity } from './activity.handler'
import { activityInput, activityPage } from './activity.schema'

export const activityRouter = createV1Router({
  feed: v1Procedure({
    scope: 'read:activity',
    method: 'GET',
    path: '/v1/activity',
    tags: ['Activity'],
    summary: 'Global activity feed, newest first',
    description:
      'Every canonical transfer of the indexed network, newest first, optionally of one `collection` and/or one `event_type`. To follow new events, request the first page again (every 12 s suits the block time) and deduplicate on `transaction_hash` + `log_index` (+ `batch_index` for ERC-2309 ranges); older history comes through `before_timestamp` + `before_id`. ERC-1155 transfers only with `standard` (extension), each id/value pair of a batch its own item.',
    errorResponses: [400, 401, 403, 429, 503],
  })
    .input(activityInput)
    .output(responseSchema(activityPage))
    .query(({ ctx, input }) => listActivity(ctx, input)),
})
