import type { Metadata } from 'next'
import { notFound } from 'next/navigation'
import { normalizeAddress } from '@/components/explorer/links'
import { NftView } from '@/components/explorer/nft-view'

export const metadata: Metadata = { title: 'Token' }

export default async function NftPage({ params }: { params: Promise<{ address: string; tokenId: string }> }) {
  const { address: rawAddress, tokenId } = await params
  const address = normalizeAddress(decodeURIComponent(rawAddress))
  if (!address || !/^\d{1,78}$/.test(tokenId)) notFound()
  return <NftView address={address} tokenId={tokenId} />
}
