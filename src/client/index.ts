/**
 * The typed client of the NFT Data API, for applications that call it from
 * a server (docs/client.md). It depends on openapi-fetch, eventsource-parser
 * (the live stream) and the generated types only: nothing of the service itself.
 */
export {
  type ActivityItem,
  type Collection,
  type CollectionOwner,
  createNftDataClient,
  type DemoToken,
  type IndexerStatus,
  type ItemOf,
  type ListPath,
  type Nft,
  type NftDataClient,
  type NftDataClientOptions,
  type OwnerCollection,
  type ReadPath,
  type RequestOptions,
  type ResponseOf,
  type Transfer,
} from './client.js'
export { type ClientErrorEnvelope, type ErrorCode, type ErrorEnvelope, NftDataApiError } from './errors.js'
export { eventKey, type FollowOptions, type StreamQuery } from './follow.js'
export { type RetryOptions, retryAfterMs, retryDelayMs, retryingFetch } from './retry.js'
export type { components, operations, paths } from './schema.js'
export { traitParam } from './trait-param.js'
export {
  type ActivityPushEvent,
  verifyWebhook,
  type WebhookHeaders,
  WebhookSignatureError,
} from './webhooks.js'
