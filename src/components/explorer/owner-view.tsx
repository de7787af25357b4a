'use client'

import Link from 'next/link'
import { useState } from 'react'
import type { Nft } from '@/client'
import { explorerClient } from './api'
import { LoadMore } from './collection-view'
import { exploreHref, short } from './links'
import { NftCard } from './nft-card'
import { PageState } from './page-state'
import { describeError, useApi } from './use-api'

type OwnerCursor = { after_collection: string; after_token_id: string; after_id: number }

/**
 * /explore/owners/[address]: a wallet's holdings, ERC-721 and ERC-1155 (with `standard=all`,
 * each with its balance), by collection and token id, 50 at a time through the list's cursor.
 */
export function OwnerView({ address }: { address: string }) {
  const first = useApi(
    (signal) =>
      explorerClient().get('/v1/owners/{address}/nfts', {
        path: { address },
        query: { limit: 50, include_metadata: true, standard: 'all' },
        signal,
      }),
    [address],
  )
  const [more, setMore] = useState<{ items: Nft[]; next?: OwnerCursor; busy: boolean; error?: string }>({
    items: [],
    busy: false,
  })
  async function loadMore(cursor: OwnerCursor) {
    setMore((m) => ({ ...m, busy: true, error: undefined }))
    try {
      const p = await explorerClient().get('/v1/owners/{address}/nfts', {
        path: { address },
        query: { limit: 50, include_metadata: true, standard: 'all', ...cursor },
      })
      setMore((m) => ({ items: [...m.items, ...p.data], next: p.pagination.next_page_params, busy: false }))
    } catch (err) {
      setMore((m) => ({ ...m, busy: false, error: describeError(err).message }))
    }
  }
  return (
    <>
      <nav aria-label="Breadcrumb" className="breadcrumb small">
        <Link href={exploreHref.collections()}>Collections</Link> / Wallet {short(address)}
      </nav>
      <h1>Wallet {short(address)}</h1>
      <p className="muted small break">
        <code data-testid="owner-address">{address}</code>
      </p>
      <section aria-labelledby="holdings-heading">
        <h2 id="holdings-heading">Holdings</h2>
        <PageState loaded={first} what="the holdings">
          {(page) => {
            const items = [...page.data, ...more.items]
            const next = more.items.length > 0 ? more.next : page.pagination.next_page_params
            return (
              <>
                <p className="muted small" role="status" data-testid="holdings-status">
                  {items.length} token{items.length === 1 ? '' : 's'} shown{next ? ', more below' : ''} ·
                  coverage {page.coverage.status}
                </p>
                {items.length === 0 ? (
                  <p className="muted">This wallet holds no indexed token.</p>
                ) : (
                  <ul className="nft-grid" aria-label="Holdings" data-testid="nft-grid">
                    {items.map((nft) => (
                      <NftCard key={`${nft.collection_address}:${nft.token_id}`} nft={nft} showCollection />
                    ))}
                  </ul>
                )}
                {next ? (
                  <LoadMore busy={more.busy} onLoad={() => loadMore(next)} label="More holdings" />
                ) : null}
                {more.error ? (
                  <p className="alert error" role="alert">
                    {more.error}
                  </p>
                ) : null}
              </>
            )
          }}
        </PageState>
      </section>
    </>
  )
}
