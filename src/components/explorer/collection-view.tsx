'use client'

import { useRouter } from 'next/navigation'
import { useEffect, useState } from 'react'
import type { Nft, ResponseOf } from '@/client'
import { ChainText } from '@/components/ui/chain-text'
import { Link } from '@/components/ui/link'
import { explorerClient } from './api'
import { HoldersView } from './holders-view'
import { count, exploreHref, short } from './links'
import { MorePagesFooter } from './more-pages'
import { NftCard } from './nft-card'
import { PageState } from './page-state'
import { type TraitOption, traitOptions, traitPicked, VALUES_SHOWN } from './traits'
import { useApi, useMorePages } from './use-api'

/** Tokens per page of the gallery. */
export const GALLERY_PAGE = 50

type Cursor = { after_token_id: string; after_id: number }
type Traits = ResponseOf<'/v1/collections/{address}/traits'>['data']

/** The collection page's views, as tabs: each a link of its own. */
const VIEWS = [
  { view: 'gallery', label: 'Tokens', href: exploreHref.collection },
  { view: 'holders', label: 'Holders', href: (address: string) => exploreHref.collectionHolders(address) },
] as const

/**
 * /explore/collections/[address]: two views, in the page's address so that each can be linked.
 * The gallery (the default): the tokens, 50 a page by ascending token id, read with the list's
 * keyset cursor (`next_page_params`) as the reader scrolls; burned tokens on request
 * (`include_burned`); trait filters (`trait=Type:Value`, repeatable) with the counts of
 * GET …/traits. The holders (`?view=holders[&at_block=N]`, holders-view.tsx). Requests in the
 * order the page needs them: the view's list, then the collection, then (gallery) its traits.
 */
export function CollectionView({
  address,
  traits: selected,
  includeBurned,
  view,
  atBlock,
}: {
  address: string
  traits: string[]
  includeBurned: boolean
  view: (typeof VIEWS)[number]['view']
  atBlock: string | null
}) {
  // The view's own list is asked for first: a child's effects run before its parent's.
  const collection = useApi(
    (signal) =>
      explorerClient().get('/v1/collections/{address}', {
        path: { address },
        query: { standard: 'all' },
        signal,
      }),
    [address],
  )
  // Until the record comes, the gallery's first token names the collection.
  const [listedName, setListedName] = useState<string>()
  const c = collection.data?.data
  return (
    <>
      <nav aria-label="Breadcrumb" className="breadcrumb small">
        <Link href={exploreHref.collections()}>Collections</Link> /{' '}
        <ChainText text={c ? c.name : listedName} fallback={short(address)} max={60} />
      </nav>
      <h1 data-testid="collection-name">
        <ChainText text={c ? c.name : listedName} fallback={short(address)} />
      </h1>
      <p className="muted small break">
        <code>{address}</code>
        {c ? (
          <>
            {' '}
            · <span className="badge">{c.contract_type === 'ERC1155' ? 'ERC-1155' : 'ERC-721'}</span> ·{' '}
            {count(c.total_supply)} {c.contract_type === 'ERC1155' ? 'token ids' : 'tokens'} ·{' '}
            {count(c.unique_holders)} holders · {count(c.total_transfers)} transfers
          </>
        ) : null}
      </p>
      {collection.state === 'error' ? (
        <p className="alert error" role="alert">
          {collection.error.status === 404 ? 'No such collection is indexed.' : collection.error.message}
        </p>
      ) : null}
      <nav aria-label="Collection views" className="view-tabs" data-testid="collection-views">
        {VIEWS.map((tab) => (
          <Link
            key={tab.view}
            href={tab.href(address)}
            aria-current={view === tab.view ? 'page' : undefined}
            scroll={false}
          >
            {tab.label}
          </Link>
        ))}
      </nav>
      {view === 'holders' ? (
        <HoldersView address={address} atBlock={atBlock} collection={c} />
      ) : (
        <Gallery
          address={address}
          selected={selected}
          includeBurned={includeBurned}
          onListedName={setListedName}
        />
      )}
    </>
  )
}

/** The tokens, with the filters beside them. */
function Gallery({
  address,
  selected,
  includeBurned,
  onListedName,
}: {
  address: string
  selected: string[]
  includeBurned: boolean
  onListedName: (name: string | undefined) => void
}) {
  const router = useRouter()
  // The checkboxes answer at once; the address (and the data) follow.
  const [burnedShown, setBurnedShown] = useState(includeBurned)
  const [traitsShown, setTraitsShown] = useState(selected)
  const selectedKey = selected.join('&')
  // biome-ignore lint/correctness/useExhaustiveDependencies: `selectedKey` stands for `selected`.
  useEffect(() => {
    setBurnedShown(includeBurned)
    setTraitsShown(selected)
  }, [includeBurned, selectedKey])
  const key = `${address}|${selectedKey}|${includeBurned}`
  const query = {
    limit: GALLERY_PAGE,
    include_metadata: true,
    standard: 'all' as const,
    ...(includeBurned ? { include_burned: true } : {}),
    ...(selected.length > 0 ? { trait: selected } : {}),
  }
  const first = useApi(
    (signal) => explorerClient().get('/v1/collections/{address}/nfts', { path: { address }, query, signal }),
    [key],
  )
  const listedName = first.data?.data[0]?.collection_name
  useEffect(() => onListedName(listedName), [listedName, onListedName])
  const traits = useApi(
    (signal) =>
      explorerClient('low').get('/v1/collections/{address}/traits', {
        path: { address },
        // The types and their counts: a type's values are read when it is opened (TraitValues).
        query: { standard: 'all', values_limit: 0 },
        signal,
      }),
    [address],
  )
  const more = useMorePages<Nft, Cursor>(key, (cursor) =>
    explorerClient().get('/v1/collections/{address}/nfts', {
      path: { address },
      query: { ...query, ...cursor },
    }),
  )

  function navigate(nextTraits: string[], burned: boolean) {
    setBurnedShown(burned)
    setTraitsShown(nextTraits)
    const params = new URLSearchParams()
    for (const t of nextTraits) params.append('trait', t)
    if (burned) params.set('include_burned', 'true')
    const qs = params.toString()
    router.push(`${exploreHref.collection(address)}${qs ? `?${qs}` : ''}`, { scroll: false })
  }

  return (
    <div className="collection-layout">
      <aside className="panel trait-filters" aria-labelledby="filters-heading">
        <h2 id="filters-heading" className="h3 flush-top">
          Filters
        </h2>
        <label className="check">
          <input
            type="checkbox"
            checked={burnedShown}
            onChange={(e) => navigate(traitsShown, e.target.checked)}
          />
          Include burned tokens
        </label>
        {selected.length > 0 ? (
          <p className="small">
            <button type="button" className="link-button" onClick={() => navigate([], burnedShown)}>
              Clear {selected.length} trait filter{selected.length === 1 ? '' : 's'}
            </button>
          </p>
        ) : null}
        <TraitFilters
          address={address}
          traits={traits.data?.data}
          state={traits.state}
          selected={traitsShown}
          onChange={(next) => navigate(next, burnedShown)}
        />
      </aside>
      <section aria-labelledby="tokens-heading" className="gallery">
        <h2 id="tokens-heading" className="visually-hidden">
          Tokens
        </h2>
        <PageState loaded={first} what="the tokens">
          {(page) => {
            const { items, next } = more.after(page)
            return (
              <>
                <p className="muted small" role="status" data-testid="gallery-status">
                  {items.length} token{items.length === 1 ? '' : 's'} shown
                  {next ? ', more below' : ''}
                  {page.coverage.status !== 'complete' ? ` · coverage ${page.coverage.status}` : ''}
                </p>
                {items.length === 0 ? (
                  <p className="muted">No token matches.</p>
                ) : (
                  <ul className="nft-grid" aria-label="Tokens" data-testid="nft-grid">
                    {items.map((nft) => (
                      <NftCard key={`${nft.token_id}`} nft={nft} />
                    ))}
                  </ul>
                )}
                <MorePagesFooter more={more} next={next} label="More tokens" />
              </>
            )
          }}
        </PageState>
      </section>
    </div>
  )
}

/**
 * The trait filters (docs/explorer.md, "Hostile input"): a collection may have 100 types of
 * 1,000 values, so the page reads the types alone and a type's values when it is opened, and
 * they are in the page only while it is open, the first VALUES_SHOWN of them until "Show all"
 * is pressed. Values one filter cannot tell apart (the number 1 and the string "1") are one
 * choice; a type without a name, which a filter cannot name, lists its values without choices.
 */
function TraitFilters({
  address,
  traits,
  state,
  selected,
  onChange,
}: {
  address: string
  traits: Traits | undefined
  state: 'loading' | 'ok' | 'error'
  selected: string[]
  onChange: (traits: string[]) => void
}) {
  if (state === 'loading') return <p className="muted small">Loading traits…</p>
  if (state === 'error' || !traits) return <p className="muted small">Traits are unavailable.</p>
  if (traits.trait_types.length === 0)
    return <p className="muted small">No traits counted for this collection.</p>
  return (
    <div data-testid="trait-filters">
      {traits.trait_types.map((type) => (
        <TraitType
          key={type.trait_type}
          address={address}
          type={type}
          selected={selected}
          onChange={onChange}
        />
      ))}
    </div>
  )
}

function TraitType({
  address,
  type,
  selected,
  onChange,
}: {
  address: string
  type: Traits['trait_types'][number]
  selected: string[]
  onChange: (traits: string[]) => void
}) {
  const picked = traitPicked(type.trait_type, selected)
  const [open, setOpen] = useState(picked)
  // Kept here, not in TraitValues (gone while the type is closed): a type reopened shows as many values as before.
  const [all, setAll] = useState(false)
  // A type with a picked value opens (a link, the back button); the reader may close it again.
  useEffect(() => {
    if (picked) setOpen(true)
  }, [picked])
  return (
    <details open={open} onToggle={(e) => setOpen(e.currentTarget.open)}>
      <summary>
        <ChainText text={type.trait_type} fallback="—" max={80} />{' '}
        <span className="muted small">({type.value_count})</span>
      </summary>
      {open ? (
        <TraitValues
          address={address}
          traitType={type.trait_type}
          selected={selected}
          onChange={onChange}
          all={all}
          onShowAll={() => setAll(true)}
        />
      ) : null}
    </details>
  )
}

/** An open type's values, read with GET …/traits?trait_type=. */
function TraitValues({
  address,
  traitType,
  selected,
  onChange,
  all,
  onShowAll,
}: {
  address: string
  traitType: string
  selected: string[]
  onChange: (traits: string[]) => void
  /** "Show all" was pressed. */
  all: boolean
  onShowAll: () => void
}) {
  const values = useApi(
    (signal) =>
      explorerClient('low').get('/v1/collections/{address}/traits', {
        path: { address },
        query: { standard: 'all', trait_type: [traitType] },
        signal,
      }),
    [address, traitType],
  )
  const legend = (
    <legend className="visually-hidden">
      <ChainText text={traitType} fallback="—" max={80} />
    </legend>
  )
  if (values.state !== 'ok')
    return (
      <fieldset className="trait-values">
        {legend}
        <p className="muted small flush">
          {values.state === 'loading' ? 'Loading values…' : 'The values are unavailable.'}
        </p>
      </fieldset>
    )
  // Absent when the collection's counts changed since the types were read.
  const type = values.data.data.trait_types.find((t) => t.trait_type === traitType)
  const options = type ? traitOptions(type) : []
  // A choice picked beyond the first values (a link, the back button) stays in view.
  const pickedLate = options.some(
    (o, i) => i >= VALUES_SHOWN && o.filter !== null && selected.includes(o.filter),
  )
  const shown = all || pickedLate ? options : options.slice(0, VALUES_SHOWN)
  const filterable = options.some((o) => o.filter !== null)
  return (
    <fieldset className="trait-values">
      {legend}
      {filterable || options.length === 0 ? null : (
        <p className="muted small flush">A trait type without a name cannot be filtered on.</p>
      )}
      {options.length === 0 ? <p className="muted small flush">No values counted.</p> : null}
      {shown.map((option) => (
        <TraitChoice key={option.key} option={option} selected={selected} onChange={onChange} />
      ))}
      {shown.length < options.length ? (
        <p className="small flush">
          <button type="button" className="link-button" onClick={onShowAll}>
            Show all {options.length.toLocaleString('en')} values
          </button>
        </p>
      ) : null}
      {type && type.values_omitted > 0 ? (
        <p className="muted small flush">and {type.values_omitted.toLocaleString('en')} rarer values</p>
      ) : null}
    </fieldset>
  )
}

function TraitChoice({
  option,
  selected,
  onChange,
}: {
  option: TraitOption
  selected: string[]
  onChange: (traits: string[]) => void
}) {
  const label = (
    <span>
      <ChainText text={option.label} fallback="—" max={80} />{' '}
      <span className="muted">{count(option.tokens)}</span>
    </span>
  )
  const { filter } = option
  if (filter === null) return <p className="small not-filterable">{label}</p>
  const checked = selected.includes(filter)
  return (
    <label className="check small">
      <input
        type="checkbox"
        checked={checked}
        onChange={() =>
          onChange(checked ? selected.filter((s) => s !== filter) : [...selected, filter].slice(0, 20))
        }
      />
      {label}
    </label>
  )
}
