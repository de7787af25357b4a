'use client'

import { useRouter } from 'next/navigation'
import { type FormEvent, useEffect, useRef, useState } from 'react'
import type { Collection, CollectionOwner } from '@/client'
import { ChainText } from '@/components/ui/chain-text'
import { Link } from '@/components/ui/link'
import { explorerClient } from './api'
import { formatShare, holdingOf, holdingsTotal } from './holders'
import { count, exploreHref, short } from './links'
import { MorePagesFooter } from './more-pages'
import { PageState } from './page-state'
import { useApi, useMorePages } from './use-api'

/** Holders per page. */
export const HOLDERS_PAGE = 25

type HolderCursor = { after_token_count: number; after_owner: string; at_block?: string }

/**
 * The collection page's holders view (`?view=holders[&at_block=N]`, docs/explorer.md "Holders"):
 * GET /v1/collections/{address}/owners, most tokens first, paged with its keyset cursor; with
 * `at_block` the holders after that block (a snapshot; the cursor keeps the block). A refused
 * block shows the API's message. The block lives in the page's address.
 */
export function HoldersView({
  address,
  atBlock,
  collection,
}: {
  address: string
  atBlock: string | null
  /** The collection's record, once read (its standard and total supply). */
  collection: Collection | undefined
}) {
  const router = useRouter()
  const [typed, setTyped] = useState(atBlock ?? '')
  const field = useRef<HTMLInputElement>(null)
  useEffect(() => setTyped(atBlock ?? ''), [atBlock])
  const query = { limit: HOLDERS_PAGE, ...(atBlock !== null ? { at_block: atBlock } : {}) }
  const first = useApi(
    (signal) =>
      explorerClient().get('/v1/collections/{address}/owners', { path: { address }, query, signal }),
    [address, atBlock],
  )
  const more = useMorePages<CollectionOwner, HolderCursor>(`${address}|${atBlock}`, (cursor) =>
    explorerClient().get('/v1/collections/{address}/owners', {
      path: { address },
      query: { ...query, ...cursor },
    }),
  )

  const show = (block: string | null) => {
    setTyped(block ?? '')
    router.push(exploreHref.collectionHolders(address, block), { scroll: false })
  }
  function submit(event: FormEvent) {
    event.preventDefault()
    const block = typed.trim()
    show(block === '' ? null : block)
  }

  const refused = first.state === 'error' && atBlock !== null && first.error.status === 400
  return (
    <section aria-labelledby="holders-heading" className="holders">
      <h2 id="holders-heading" className="visually-hidden">
        Holders
      </h2>
      <form className="explore-search holders-block" onSubmit={submit} data-testid="holders-block-form">
        <label htmlFor="holders-at-block">As of block</label>
        <p id="holders-at-block-help" className="help">
          A confirmed block number: the holders after that block. Empty: the current holders.
        </p>
        <div className="explore-search-row">
          <input
            ref={field}
            id="holders-at-block"
            type="text"
            inputMode="numeric"
            autoComplete="off"
            spellCheck={false}
            maxLength={40}
            aria-describedby="holders-at-block-help"
            aria-invalid={refused ? true : undefined}
            value={typed}
            onChange={(e) => setTyped(e.target.value)}
            placeholder="e.g. 1200"
          />
          <button type="submit" className="button">
            Show
          </button>
        </div>
        {atBlock !== null ? (
          <p className="small flush">
            <button
              type="button"
              className="link-button"
              onClick={() => {
                // The button goes away with the block: the focus goes back to the field.
                field.current?.focus()
                show(null)
              }}
            >
              Show the current holders
            </button>
          </p>
        ) : null}
      </form>
      {refused ? (
        <p className="alert error" role="alert" data-testid="holders-refused">
          Block <ChainText text={atBlock} fallback={atBlock} /> cannot be shown: {first.error.message}
        </p>
      ) : (
        <PageState loaded={first} what="the holders">
          {(page) => {
            const { items, next } = more.after(page)
            return (
              <HoldersTable
                address={address}
                atBlock={atBlock}
                collection={collection}
                holders={items}
                complete={next === undefined}
                coverage={page.coverage.status}
                footer={<MorePagesFooter more={more} next={next} label="More holders" loadOnScroll={false} />}
              />
            )
          }}
        </PageState>
      )}
    </section>
  )
}

function HoldersTable({
  address,
  atBlock,
  collection,
  holders,
  complete,
  coverage,
  footer,
}: {
  address: string
  atBlock: string | null
  collection: Collection | undefined
  holders: CollectionOwner[]
  complete: boolean
  coverage: string
  footer: React.ReactNode
}) {
  // ERC-1155 rows carry `balance`; the record says so too once it is read.
  const edition = collection?.contract_type === 'ERC1155' || holders.some((h) => h.balance !== undefined)
  const total = holdingsTotal({ holders, complete, edition, atBlock, totalSupply: collection?.total_supply })
  const unit = edition ? 'units' : 'tokens'
  const when = atBlock !== null ? `after block ${atBlock}` : 'now'
  const name = <ChainText text={collection?.name} fallback={short(address)} max={100} />
  return (
    <>
      <p className="muted small" role="status" data-testid="holders-status">
        {atBlock !== null ? `Holders after block ${atBlock}` : 'Current holders'} · {holders.length} shown
        {complete ? '' : ', more below'}
        {coverage !== 'complete' ? ` · coverage ${coverage}` : ''}
      </p>
      {holders.length === 0 ? (
        <p className="muted">No holder {atBlock !== null ? `after block ${atBlock}` : 'now'}.</p>
      ) : (
        <>
          <p className="muted small" data-testid="holders-share-note">
            {total !== null
              ? `Share: of the ${count(total.toString())} ${unit} held by all holders ${when}`
              : `Share: of all the ${unit} held ${when}; shown once every holder is listed (the API gives no such total${atBlock !== null ? ' for a past block' : ' of units'})`}
            {edition ? ' (a unit: one of an id’s balance).' : ' (burned tokens excluded).'}
          </p>
          <table className="data-table holders-table" data-testid="holders-table">
            <caption className="visually-hidden">
              {atBlock !== null ? (
                <>
                  Holders of {name} after block {atBlock}
                </>
              ) : (
                <>Current holders of {name}</>
              )}
              , most tokens first
            </caption>
            <thead>
              <tr>
                <th scope="col">Rank</th>
                <th scope="col">Owner</th>
                <th scope="col" className="num">
                  {edition ? 'Token ids' : 'Tokens'}
                </th>
                {edition ? (
                  <th scope="col" className="num">
                    Balance
                  </th>
                ) : null}
                <th scope="col" className="num">
                  Share
                </th>
              </tr>
            </thead>
            <tbody>
              {holders.map((h, i) => {
                const share = formatShare(holdingOf(h, edition), total)
                return (
                  <tr key={h.owner} data-testid="holder-row" data-owner={h.owner}>
                    <td>{i + 1}</td>
                    <th scope="row">
                      <Link href={exploreHref.owner(h.owner)} title={h.owner}>
                        <code>{short(h.owner)}</code>
                      </Link>
                    </th>
                    <td className="num" data-testid="holder-count">
                      {count(h.token_count)}
                    </td>
                    {edition ? (
                      <td className="num" data-testid="holder-balance">
                        {h.balance !== undefined ? count(h.balance) : ''}
                      </td>
                    ) : null}
                    <td className="num" data-testid="holder-share">
                      {share ?? (
                        <>
                          <span aria-hidden="true">—</span>
                          <span className="visually-hidden">not known yet</span>
                        </>
                      )}
                    </td>
                  </tr>
                )
              })}
            </tbody>
          </table>
        </>
      )}
      {footer}
    </>
  )
}
