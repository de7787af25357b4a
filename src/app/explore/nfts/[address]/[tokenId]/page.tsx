import type { Metadata } from 'next'
import { notFound, permanentRedirect } from 'next/navigation'
import { canonicalTokenId, exploreHref, normalizeAddress } from '@/components/explorer/links'
import { NftView } from '@/components/explorer/nft-view'

export const metadata: Metadata = { title: 'Token' }

export default async function NftPage({ params }: { params: Promise<{ address: string; tokenId: string }> }) {
  const { address: rawAddress, tokenId: rawTokenId } = await params
  const address = normalizeAddress(decodeURIComponent(rawAddress))
  const tokenId = canonicalTokenId(rawTokenId)
  if (!address || tokenId === null) notFound()
  // One address per token: an id written with leading zeros goes to the id as the API writes it.
  if (tokenId !== rawTokenId) permanentRedirect(exploreHref.nft(address, tokenId))
  return <NftView address={address} tokenId={tokenId} />
}
