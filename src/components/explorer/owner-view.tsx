'use client'

import { useRouter } from 'next/navigation'
import { useEffect, useState } from 'react'
import type { Nft, ResponseOf, Transfer } from '@/client'
import { ChainText } from '@/components/ui/chain-text'
import { Link } from '@/components/ui/link'
import { explorerClient } from './api'
import { Confirmations } from './confirmations'
import { count, exploreHref, short, shortId } from './links'
import { MorePagesFooter } from './more-pages'
import { NftCard } from './nft-card'
import { AddressLink, formatTime } from './nft-view'
import { PageState } from './page-state'
import { useApi, useMorePages } from './use-api'

type OwnerCursor = { after_collection: string; after_token_id: string; after_id: number }
type TimeCursor = { before_timestamp: number; before_id: number }
type Direction = 'all' | 'in' | 'out'

/**
 * /explore/owners/[address]: a wallet — the collections it holds tokens of
 * (GET /v1/owners/{address}/collections, with counts), its holdings, ERC-721 and ERC-1155
 * (GET /v1/owners/{address}/nfts with `standard=all`, each with its balance; `collection=` when
 * one collection is picked), and its transfers in and out, newest first
 * (GET /v1/owners/{address}/transfers, `direction`). Every list pages with its cursor.
 */
export function OwnerView({
  address,
  collection,
  direction,
}: {
  address: string
  collection: string | null
  direction: Direction
}) {
  const router = useRouter()
  // The choices answer at once; the address (and the data) follow.
  const [picked, setPicked] = useState({ collection, direction })
  useEffect(() => setPicked({ collection, direction }), [collection, direction])
  const go = (next: { collection?: string | null; direction?: Direction }) => {
    const params = new URLSearchParams()
    const c = next.collection === undefined ? picked.collection : next.collection
    const d = next.direction ?? picked.direction
    setPicked({ collection: c, direction: d })
    if (c) params.set('collection', c)
    if (d !== 'all') params.set('direction', d)
    const qs = params.toString()
    router.push(`${exploreHref.owner(address)}${qs ? `?${qs}` : ''}`, { scroll: false })
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
      <Holdings
        address={address}
        collection={collection}
        picked={picked.collection}
        onCollection={(c) => go({ collection: c })}
      />
      <Transfers
        address={address}
        direction={direction}
        picked={picked.direction}
        onDirection={(d) => go({ direction: d })}
      />
    </>
  )
}

function Holdings({
  address,
  collection,
  picked,
  onCollection,
}: {
  address: string
  collection: string | null
  picked: string | null
  onCollection: (collection: string | null) => void
}) {
  const query = {
    limit: 50,
    include_metadata: true,
    standard: 'all' as const,
    ...(collection ? { collection: [collection] } : {}),
  }
  const first = useApi(
    (signal) => explorerClient().get('/v1/owners/{address}/nfts', { path: { address }, query, signal }),
    [address, collection],
  )
  const collections = useApi(
    (signal) =>
      explorerClient().get('/v1/owners/{address}/collections', {
        path: { address },
        query: { limit: 100 },
        signal,
      }),
    [address],
  )
  const key = `${address}|${collection}`
  const shown = useMorePages<Nft, OwnerCursor>(key, (cursor) =>
    explorerClient().get('/v1/owners/{address}/nfts', { path: { address }, query: { ...query, ...cursor } }),
  )
  return (
    <section aria-labelledby="holdings-heading">
      <h2 id="holdings-heading">Holdings</h2>
      <CollectionChips page={collections.data} selected={picked} onSelect={onCollection} />
      <PageState loaded={first} what="the holdings">
        {(page) => {
          const { items, next } = shown.after(page)
          return (
            <>
              <p className="muted small" role="status" data-testid="holdings-status">
                {items.length} token{items.length === 1 ? '' : 's'} shown{next ? ', more below' : ''} ·
                coverage {page.coverage.status}
              </p>
              {items.length === 0 ? (
                <p className="muted">
                  This wallet holds no indexed token{collection ? ' of this collection' : ''}.
                </p>
              ) : (
                <ul className="nft-grid" aria-label="Holdings" data-testid="nft-grid">
                  {items.map((nft) => (
                    <NftCard key={`${nft.collection_address}:${nft.token_id}`} nft={nft} showCollection />
                  ))}
                </ul>
              )}
              <MorePagesFooter more={shown} next={next} label="More holdings" />
            </>
          )
        }}
      </PageState>
    </section>
  )
}

function CollectionChips({
  page,
  selected,
  onSelect,
}: {
  page: ResponseOf<'/v1/owners/{address}/collections'> | undefined
  selected: string | null
  onSelect: (collection: string | null) => void
}) {
  if (!page || page.data.length === 0) return null
  return (
    <fieldset className="chips-filter" data-testid="owner-collections">
      <legend className="small muted">Collections held</legend>
      <label className="chip-option">
        <input
          type="radio"
          name="owner-collection"
          checked={selected === null}
          onChange={() => onSelect(null)}
        />
        All
      </label>
      {page.data.map((c) => (
        <label key={c.collection.address} className="chip-option">
          <input
            type="radio"
            name="owner-collection"
            checked={selected === c.collection.address}
            onChange={() => onSelect(c.collection.address)}
          />
          <ChainText text={c.collection.name} fallback={short(c.collection.address)} max={60} />{' '}
          <span className="muted">
            {count(c.token_count)}
            {c.balance !== undefined ? ` · ×${count(c.balance)}` : ''}
          </span>
        </label>
      ))}
      {page.pagination.has_more ? <span className="muted small">and more</span> : null}
    </fieldset>
  )
}

function Transfers({
  address,
  direction,
  picked,
  onDirection,
}: {
  address: string
  direction: Direction
  picked: Direction
  onDirection: (direction: Direction) => void
}) {
  const query = { limit: 20, ...(direction !== 'all' ? { direction } : {}) }
  const first = useApi(
    (signal) =>
      explorerClient('low').get('/v1/owners/{address}/transfers', { path: { address }, query, signal }),
    [address, direction],
  )
  const key = `${address}|${direction}`
  const shown = useMorePages<Transfer, TimeCursor>(key, (cursor) =>
    explorerClient().get('/v1/owners/{address}/transfers', {
      path: { address },
      query: { ...query, ...cursor },
    }),
  )
  return (
    <section aria-labelledby="wallet-transfers-heading">
      <h2 id="wallet-transfers-heading">Transfers</h2>
      <fieldset className="chips-filter">
        <legend className="small muted">Direction</legend>
        {(['all', 'in', 'out'] as const).map((d) => (
          <label key={d} className="chip-option">
            <input
              type="radio"
              name="wallet-direction"
              checked={picked === d}
              onChange={() => onDirection(d)}
            />
            {d === 'all' ? 'In and out' : d === 'in' ? 'Received' : 'Sent'}
          </label>
        ))}
      </fieldset>
      <PageState loaded={first} what="the transfers">
        {(page) => {
          const { items, next } = shown.after(page)
          return (
            <>
              {items.length === 0 ? (
                <p className="muted">No transfer.</p>
              ) : (
                <ol className="timeline" aria-label="Transfers, newest first" data-testid="wallet-transfers">
                  {items.map((x) => (
                    <li key={`${x.transaction_hash}:${x.log_index}:${x.batch_index}`}>
                      <span className={`event-kind ${x.event_type}`}>{x.event_type}</span>
                      <Link href={exploreHref.nft(x.collection_address, x.token_id)}>
                        #{shortId(x.token_id)}
                      </Link>{' '}
                      {x.to_address === address ? (
                        <>
                          from <AddressLink address={x.from_address} />
                        </>
                      ) : (
                        <>
                          to <AddressLink address={x.to_address} />
                        </>
                      )}
                      {x.amount !== undefined && x.amount !== '1' ? ` · ×${count(x.amount)}` : ''}{' '}
                      <span className="muted small">
                        block {x.block_number} ·{' '}
                        <time dateTime={x.block_timestamp}>{formatTime(x.block_timestamp)}</time> ·{' '}
                        <Confirmations value={x.confirmations} />
                      </span>
                    </li>
                  ))}
                </ol>
              )}
              <MorePagesFooter more={shown} next={next} label="Older transfers" />
            </>
          )
        }}
      </PageState>
    </section>
  )
}
