import type { Scope } from '@/lib/scopes'

/** What each scope opens, in the words of the endpoint list. */
export const SCOPE_GRANTS: Record<Scope, string> = {
  'read:collections': 'Collection list, HEAD and detail',
  'read:nfts': 'Single NFT and collection NFTs',
  'read:owners': 'NFTs held by an address',
  'read:transfers': 'Both transfer lists',
  'read:activity': 'Activity feed',
  'read:status': 'Indexer status',
}
