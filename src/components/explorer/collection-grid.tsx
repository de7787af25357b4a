'use client'

import { useRouter } from 'next/navigation'
import { type FormEvent, useEffect, useState } from 'react'
import type { Collection, Nft } from '@/client'
import { ChainText } from '@/components/ui/chain-text'
import { displayText } from '@/components/ui/display-text'
import { Link } from '@/components/ui/link'
import { explorerClient } from './api'
import { Artwork } from './artwork'
import { count, exploreHref, short } from './links'
import { MorePagesFooter } from './more-pages'
import { CARD_NAME } from './nft-card'
import { PageState } from './page-state'
import { type Loaded, useApi, useMorePages } from './use-api'

type Cursor = { before_timestamp: number; before_id: number }

/**
 * Cards that get a cover (one request each): a demo token sends 30 requests a minute, and the
 * page's own data and the next page the reader opens must not wait behind pictures.
 */
const COVERS = 8

/**
 * /explore: the collections, newest first, 24 at a time (GET /v1/collections with
 * `standard=all`, so ERC-1155 collections are listed too), with a search by name.
 * A collection's picture is its first token's thumbnail: a collection's own `image_url`
 * is chain data and there is no stored copy of it (docs/explorer.md, "Media safety").
 */
export function CollectionGrid({ search }: { search: string }) {
  const router = useRouter()
  const [query, setQuery] = useState(search)
  const first = useApi(
    (signal) =>
      explorerClient().get('/v1/collections', {
        query: { standard: 'all', limit: 24, ...(search ? { search } : {}) },
        signal,
      }),
    [search],
  )
  const more = useMorePages<Collection, Cursor>(search, (cursor) =>
    explorerClient().get('/v1/collections', {
      query: { standard: 'all', limit: 24, ...(search ? { search } : {}), ...cursor },
    }),
  )
  useEffect(() => setQuery(search), [search])

  function submit(event: FormEvent) {
    event.preventDefault()
    router.push(exploreHref.collections(query.trim()))
  }

  return (
    <>
      <form className="explore-search" onSubmit={submit}>
        <label htmlFor="collection-search">Search collections by name</label>
        <div className="explore-search-row">
          <input
            id="collection-search"
            type="search"
            value={query}
            maxLength={200}
            onChange={(e) => setQuery(e.target.value)}
            placeholder="e.g. glyphs"
          />
          <button type="submit" className="button">
            Search
          </button>
        </div>
      </form>
      <PageState loaded={first} what="the collections">
        {(page) => {
          const { items, next } = more.after(page)
          return (
            <>
              {items.length === 0 ? (
                <p className="muted" role="status">
                  {search ? (
                    <>
                      No collection's name contains “<ChainText text={search} fallback={search} />
                      ”.
                    </>
                  ) : (
                    'No collection is indexed yet.'
                  )}
                </p>
              ) : (
                <ul className="collection-grid" aria-label="Collections" data-testid="collection-grid">
                  {items.map((c, i) => (
                    <CollectionCard key={c.contract_address} collection={c} withCover={i < COVERS} />
                  ))}
                </ul>
              )}
              <MorePagesFooter more={more} next={next} label="More collections" loadOnScroll={false} />
            </>
          )
        }}
      </PageState>
    </>
  )
}

function CollectionCard({ collection: c, withCover }: { collection: Collection; withCover: boolean }) {
  // The first token's artwork stands for the collection; asked for after the page's own data.
  const cover: Loaded<Nft | undefined> = useApi(
    async (signal) =>
      withCover
        ? explorerClient('low')
            .get('/v1/collections/{address}/nfts', {
              path: { address: c.contract_address },
              query: { limit: 1, include_metadata: true, standard: 'all' },
              signal,
            })
            .then((p) => p.data[0])
        : undefined,
    [c.contract_address, withCover],
  )
  return (
    <li className="collection-card" data-testid="collection-card">
      <Artwork nft={cover.data} alt="" size={256} pending={!withCover || cover.state === 'loading'} />
      <div className="collection-card-body">
        <h2 className="h3 flush">
          <Link href={exploreHref.collection(c.contract_address)} className="stretched-link">
            <ChainText text={c.name} fallback={short(c.contract_address)} max={CARD_NAME} className="clamp" />
          </Link>
        </h2>
        <p className="muted small flush">
          {displayText(c.symbol) ? (
            <>
              <ChainText text={c.symbol} fallback={null} max={20} /> ·{' '}
            </>
          ) : null}
          <span className="badge">{c.contract_type === 'ERC1155' ? 'ERC-1155' : 'ERC-721'}</span>
        </p>
        <dl className="counts small">
          <div>
            <dt>{c.contract_type === 'ERC1155' ? 'Token ids' : 'Tokens'}</dt>
            <dd>{count(c.total_supply)}</dd>
          </div>
          <div>
            <dt>Holders</dt>
            <dd>{count(c.unique_holders)}</dd>
          </div>
          <div>
            <dt>Transfers</dt>
            <dd>{count(c.total_transfers)}</dd>
          </div>
        </dl>
      </div>
    </li>
  )
}
