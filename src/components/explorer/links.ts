/** The explorer's routes (docs/explorer.md, "Routes"). */
export const exploreHref = {
  collections: (search?: string) => (search ? `/explore?search=${encodeURIComponent(search)}` : '/explore'),
  collection: (address: string) => `/explore/collections/${address}`,
  /** The collection page's holders view, at a past block when `atBlock` is given. */
  collectionHolders: (address: string, atBlock?: string | null) =>
    `/explore/collections/${address}?view=holders${atBlock ? `&at_block=${encodeURIComponent(atBlock)}` : ''}`,
  nft: (address: string, tokenId: string) => `/explore/nfts/${address}/${tokenId}`,
  owner: (address: string) => `/explore/owners/${address}`,
  activity: () => '/explore/activity',
}

export const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000'

/** 0x1234…abcd: an address or hash short enough for a card; the whole one goes in a title. */
export function short(hex: string): string {
  return hex.length > 14 ? `${hex.slice(0, 6)}…${hex.slice(-4)}` : hex
}

/** A token id for a heading: long ids (uint256) shortened in the middle. */
export function shortId(tokenId: string): string {
  return tokenId.length > 12 ? `${tokenId.slice(0, 6)}…${tokenId.slice(-4)}` : tokenId
}

/** 1,234 from a decimal string of any size. */
export function count(value: string | number): string {
  try {
    return BigInt(value).toLocaleString('en')
  } catch {
    return String(value)
  }
}

const LOWER_ADDRESS = /^0x[0-9a-f]{40}$/
const UINT256_MAX = 2n ** 256n - 1n

/**
 * A token id of a route as the API writes it — decimal, no leading zeros (`0001` is `1`) — or null
 * when it is no uint256 (not decimal digits, more than 78 of them, or above 2^256 − 1): no token
 * can have it.
 */
export function canonicalTokenId(value: string): string | null {
  if (!/^\d{1,78}$/.test(value)) return null
  const id = BigInt(value)
  return id <= UINT256_MAX ? id.toString() : null
}

/** The lowercase form of an address typed or linked in any case, or null. */
export function normalizeAddress(value: string): string | null {
  const lower = value.trim().toLowerCase()
  return LOWER_ADDRESS.test(lower) ? lower : null
}
