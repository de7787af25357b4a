import type { Metadata } from 'next'
import { CollectionGrid } from '@/components/explorer/collection-grid'

export const metadata: Metadata = { title: 'Explore collections' }

export default async function ExplorePage({
  searchParams,
}: {
  searchParams: Promise<{ search?: string | string[] }>
}) {
  const { search } = await searchParams
  return (
    <>
      <h1>Explore collections</h1>
      <p className="lead flush-top">
        Every collection the index holds, ERC-721 and ERC-1155, with its tokens, owners and live activity —
        read through the public <code>/v1</code> API, as any application can.
      </p>
      <CollectionGrid search={(Array.isArray(search) ? search[0] : search)?.slice(0, 200) ?? ''} />
    </>
  )
}
