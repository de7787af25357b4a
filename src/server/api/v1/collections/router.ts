import { responseSchema } from '@/server/api/internals/response-schema'
import { createV1Router, v1Procedure } from '@/server/api/trpc/v1'
import { ERC1155_SCOPED } from '@/server/api/v1/standard-note'
import {
  collectionPage,
  getCollectionInput,
  getCollectionOutput,
  listCollectionsInput,
} from './collection.schema'
import { listCollectionOwners } from './collection-owners.handler'
import { collectionOwnerPage, listCollectionOwnersInput } from './collection-owners.schema'
import { getCollection, listCollections } from './collections.handler'
import { getCollectionTraits } from './traits.handler'
import { getCollectionTraitsInput, getCollectionTraitsOutput } from './traits.schema'

const LIST_ERRORS = [400, 401, 403, 429, 503]

export const collectionsRouter = createV1Router({
  list: v1Procedure({
    scope: 'read:collections',
    method: 'GET',
    path: '/v1/collections',
    tags: ['Collections'],
    summary: 'List collections, newest first',
    description:
      'Collections in the order they were first indexed, newest first. Collections whose contract declares neither a name nor a symbol are left out (the detail endpoint still serves them). `search` is a case-insensitive substring match on name and symbol; a full contract address is an exact lookup. A search shorter than three letters or digits is matched over at most 1,000 collections per request, so such a page can hold fewer than `limit` items with `has_more` true: keep paging. HEAD answers the same statuses without a body. ERC-1155 collections are listed only with `standard` (extension).',
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
    description: `Any collection the indexer has seen, listed or not. 404 when the collection is unknown.${ERC1155_SCOPED}`,
    errorResponses: [...LIST_ERRORS, 404],
  })
    .input(getCollectionInput)
    .output(responseSchema(getCollectionOutput))
    .query(async ({ ctx, input }) => ({ data: await getCollection(ctx, input) })),

  traits: v1Procedure({
    scope: 'read:collections',
    method: 'GET',
    path: '/v1/collections/{address}/traits',
    tags: ['Collections'],
    summary: "A collection's traits and their token counts",
    description: `Extension: every trait type of the collection with its values and how many tokens have each, and how many tokens lack the type, counted over the tokens that are not burned and whose metadata was fetched (metadata_status ok). A token counts once per type and value. Values are compared as JSON values: the number 1 and the string "1" are two values. At most 100 types (most tokens first) and 1,000 values per type (most tokens first) whose JSON texts add up to at most 100,000 bytes; \`trait_types_omitted\` and \`values_omitted\` count the rest. 404 when the collection is unknown.${ERC1155_SCOPED}`,
    errorResponses: [...LIST_ERRORS, 404],
  })
    .input(getCollectionTraitsInput)
    .output(responseSchema(getCollectionTraitsOutput))
    .query(async ({ ctx, input }) => ({ data: await getCollectionTraits(ctx, input) })),

  owners: v1Procedure({
    scope: 'read:owners',
    method: 'GET',
    path: '/v1/collections/{address}/owners',
    tags: ['Collections'],
    summary: "A collection's holders, most tokens first",
    description:
      "Extension: who holds the collection's tokens and how many, most tokens first, then by owner address (bytewise); page with `after_token_count` + `after_owner` from `next_page_params`. ERC-721: `token_count` is the tokens held. ERC-1155: `token_count` is the token ids of which the owner holds a positive balance, and `balance` the sum of those balances. Serves both standards without the `standard` parameter. With `at_block`: the holders after that block (a snapshot). 404 when the collection is unknown.",
    errorResponses: [...LIST_ERRORS, 404],
  })
    .input(listCollectionOwnersInput)
    .output(responseSchema(collectionOwnerPage))
    .query(({ ctx, input }) => listCollectionOwners(ctx, input)),
})
