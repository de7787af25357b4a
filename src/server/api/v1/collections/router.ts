import { responseSchema } from '@/server/api/internals/response-schema'
import { createV1Router, v1Procedure } from '@/server/api/trpc/v1'
import {
  collectionPage,
  getCollectionInput,
  getCollectionOutput,
  listCollectionsInput,
} from './collection.schema'
import { getCollection, listCollections } from './collections.handler'

const LIST_ERRORS = [400, 401, 403, 429, 503]

export const collectionsRouter = createV1Router({
  list: v1Procedure({
    scope: 'read:collections',
    method: 'GET',
    path: '/v1/collections',
    tags: ['Collections'],
    summary: 'List collections, newest first',
    description:
      'Collections in the order they were first indexed, newest first. Collections whose contract declares neither a name nor a symbol are left out (the detail endpoint still serves them). `search` is a case-insensitive substring match on name and symbol; a full contract address is an exact lookup. A search shorter than three letters or digits is matched over at most 1,000 collections per request, so such a page can hold fewer than `limit` items with `has_more` true: keep paging. HEAD answers the same statuses without a body.',
    errorResponses: LIST_ERRORS,
  })
    .input(listCollectionsInput)
    .output(responseSchema(collectionPage))
    .query(({ ctx, input }) => listCollections(ctx, input)),

  get: v1Procedure({
    scope: 'read:collections',
    method: 'GET',
    path: '/v1/collections/{address}',
    tags: ['Collections'],
    summary: 'One collection',
    description: 'Any collection the indexer has seen, listed or not. 404 when the collection is unknown.',
    errorResponses: [...LIST_ERRORS, 404],
  })
    .input(getCollectionInput)
    .output(responseSchema(getCollectionOutput))
    .query(async ({ ctx, input }) => ({ data: await getCollection(ctx, input) })),
})
