/**
 * The typed client of the NFT Data API, for applications that call it from
 * a server (docs/client.md). It depends on openapi-fetch and the generated
 * types only: nothing of the service itself.
 */
export {
  type ActivityItem,
  type Collection,
  createNftDataClient,
  type DemoToken,
  type IndexerStatus,
  type ItemOf,
  type ListPath,
  type Nft,
  type NftDataClient,
  type NftDataClientOptions,
  type ReadPath,
  type RequestOptions,
  type ResponseOf,
  type Transfer,
} from './client'
export { type ClientErrorEnvelope, type ErrorCode, type ErrorEnvelope, NftDataApiError } from './errors'
export { eventKey, type FollowOptions } from './follow'
export { type RetryOptions, retryAfterMs, retryDelayMs, retryingFetch } from './retry'
export type { components, operations, paths } from './schema'
