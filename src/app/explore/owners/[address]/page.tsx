import type { Metadata } from 'next'
import { notFound } from 'next/navigation'
import { normalizeAddress } from '@/components/explorer/links'
import { OwnerView } from '@/components/explorer/owner-view'

export const metadata: Metadata = { title: 'Wallet' }

export default async function OwnerPage({
  params,
  searchParams,
}: {
  params: Promise<{ address: string }>
  searchParams: Promise<{ collection?: string | string[]; direction?: string }>
}) {
  const address = normalizeAddress(decodeURIComponent((await params).address))
  if (!address) notFound()
  const { collection, direction } = await searchParams
  return (
    <OwnerView
      address={address}
      collection={normalizeAddress(Array.isArray(collection) ? (collection[0] ?? '') : (collection ?? ''))}
      direction={direction === 'in' || direction === 'out' ? direction : 'all'}
    />
  )
}
