import type { Metadata } from 'next'
import { notFound } from 'next/navigation'
import { normalizeAddress } from '@/components/explorer/links'
import { OwnerView } from '@/components/explorer/owner-view'

export const metadata: Metadata = { title: 'Wallet' }

export default async function OwnerPage({ params }: { params: Promise<{ address: string }> }) {
  const address = normalizeAddress(decodeURIComponent((await params).address))
  if (!address) notFound()
  return <OwnerView address={address} />
}
