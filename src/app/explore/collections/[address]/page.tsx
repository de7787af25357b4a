import type { Metadata } from 'next'
import { notFound } from 'next/navigation'
import { CollectionView } from '@/components/explorer/collection-view'
import { atBlockParam } from '@/components/explorer/holders'
import { normalizeAddress } from '@/components/explorer/links'

export const metadata: Metadata = { title: 'Collection' }

export default async function CollectionPage({
  params,
  searchParams,
}: {
  params: Promise<{ address: string }>
  searchParams: Promise<{
    trait?: string | string[]
    include_burned?: string
    view?: string | string[]
    at_block?: string | string[]
  }>
}) {
  const address = normalizeAddress(decodeURIComponent((await params).address))
  if (!address) notFound()
  const { trait, include_burned, view, at_block } = await searchParams
  const traits = (Array.isArray(trait) ? trait : trait ? [trait] : [])
    .filter((t) => t.includes(':'))
    .slice(0, 20)
  const holders = view === 'holders'
  return (
    <CollectionView
      address={address}
      traits={traits}
      includeBurned={include_burned === 'true'}
      view={holders ? 'holders' : 'gallery'}
      atBlock={holders ? atBlockParam(at_block) : null}
    />
  )
}
