'use client'

import type { ResponseOf, Transfer } from '@/client'
import { ChainText } from '@/components/ui/chain-text'
import { displayText } from '@/components/ui/display-text'
import { Link } from '@/components/ui/link'
import { explorerClient } from './api'
import { Artwork, isMediaPathUrl } from './artwork'
import { Confirmations } from './confirmations'
import { count, exploreHref, short, shortId, ZERO_ADDRESS } from './links'
import { MorePagesFooter } from './more-pages'
import { PageState } from './page-state'
import { useApi, useMorePages } from './use-api'

type TimeCursor = { before_timestamp: number; before_id: number }

/** Characters of a collection's name a breadcrumb shows. */
const BREADCRUMB_NAME = 60
type Holders = ResponseOf<'/v1/nfts/{address}/{tokenId}/owners'>

/**
 * /explore/nfts/[address]/[tokenId]: the artwork (the artwork rule, through the media path
 * only), the normalized attributes (`include_metadata=true`), the current owner (ERC-1155: the
 * holders), the transfer timeline with confirmations, and the coverage of the answer.
 */
export function NftView({ address, tokenId }: { address: string; tokenId: string }) {
  const nft = useApi(
    (signal) =>
      explorerClient().get('/v1/nfts/{address}/{tokenId}', {
        path: { address, tokenId },
        query: { include_metadata: true, standard: 'all' },
        signal,
      }),
    [address, tokenId],
  )
  const transfers = useApi(
    (signal) =>
      explorerClient().get('/v1/nfts/{address}/{tokenId}/transfers', {
        path: { address, tokenId },
        query: { limit: 20, standard: 'all' },
        signal,
      }),
    [address, tokenId],
  )
  const token = nft.data?.data
  return (
    <>
      <nav aria-label="Breadcrumb" className="breadcrumb small">
        <Link href={exploreHref.collections()}>Collections</Link> /{' '}
        <Link href={exploreHref.collection(address)}>
          <ChainText text={token?.collection_name} fallback={short(address)} max={BREADCRUMB_NAME} />
        </Link>{' '}
        / #{shortId(tokenId)}
      </nav>
      <PageState loaded={nft} what="this token">
        {({ data: t }) => (
          <div className="nft-layout">
            <div className="nft-art">
              <Artwork nft={t} alt={displayText(t.name, 200) ?? `Token #${t.token_id}`} size={512} eager />
              {isMediaPathUrl(t.media_url) ? (
                <p className="small muted">
                  Stored media: {t.media_type ?? 'unknown type'} ·{' '}
                  <a href={t.media_url} target="_blank" rel="noopener noreferrer">
                    open the original
                  </a>{' '}
                  (served sandboxed)
                </p>
              ) : (
                <p className="small muted">
                  No stored copy of this token’s image
                  {t.image_url ? ' (its image_url is not loaded here: chain data is not trusted)' : ''}.
                </p>
              )}
              {isMediaPathUrl(t.animation_media_url) ? (
                <p className="small muted">
                  Animation: {t.animation_media_type ?? 'media'} ·{' '}
                  <a href={t.animation_media_url} target="_blank" rel="noopener noreferrer">
                    open it
                  </a>{' '}
                  (served sandboxed)
                </p>
              ) : null}
            </div>
            <div className="nft-facts">
              <h1 data-testid="nft-name">
                <ChainText text={t.name} fallback={`#${shortId(t.token_id)}`} />
              </h1>
              <p className="muted small break">
                <Link href={exploreHref.collection(t.collection_address)}>
                  <ChainText text={t.collection_name} fallback={short(t.collection_address)} />
                </Link>{' '}
                · token <code>{t.token_id}</code>
                {t.contract_type ? (
                  <>
                    {' '}
                    · <span className="badge">{t.contract_type === 'ERC1155' ? 'ERC-1155' : 'ERC-721'}</span>
                  </>
                ) : null}
                {t.is_burned ? (
                  <>
                    {' '}
                    · <span className="badge warn">burned</span>
                  </>
                ) : null}
              </p>
              {displayText(t.description) ? (
                <p className="nft-description">
                  <ChainText text={t.description} fallback={null} />
                </p>
              ) : null}
              <dl className="facts">
                {t.contract_type === 'ERC1155' ? (
                  <>
                    <dt>Supply</dt>
                    <dd>{t.total_supply !== undefined ? count(t.total_supply) : '—'}</dd>
                    <dt>Holders</dt>
                    <dd>{t.holder_count !== undefined ? count(t.holder_count) : '—'}</dd>
                  </>
                ) : (
                  <>
                    <dt>Owner</dt>
                    <dd data-testid="nft-owner">
                      {t.current_owner && t.current_owner !== ZERO_ADDRESS ? (
                        <Link href={exploreHref.owner(t.current_owner)}>
                          <code>{t.current_owner}</code>
                        </Link>
                      ) : t.is_burned ? (
                        'none (burned)'
                      ) : (
                        'unknown'
                      )}
                    </dd>
                  </>
                )}
                <dt>Transfers</dt>
                <dd>{count(t.transfer_count)}</dd>
                <dt>Metadata</dt>
                <dd>{t.metadata_status}</dd>
              </dl>
              {t.contract_type === 'ERC1155' ? <HolderList address={address} tokenId={tokenId} /> : null}
              <h2 className="h3">Attributes</h2>
              {t.attributes && t.attributes.length > 0 ? (
                <ul className="attributes" data-testid="attributes">
                  {t.attributes.map((a, i) => (
                    // biome-ignore lint/suspicious/noArrayIndexKey: a document may repeat a trait type.
                    <li key={i}>
                      <span className="muted small">
                        <ChainText text={a.trait_type} fallback="—" />
                      </span>
                      <span>
                        <ChainText text={String(a.value)} fallback="—" />
                      </span>
                    </li>
                  ))}
                </ul>
              ) : (
                <p className="muted">This token’s metadata declares no attributes.</p>
              )}
            </div>
          </div>
        )}
      </PageState>
      <section aria-labelledby="timeline-heading">
        <h2 id="timeline-heading">Transfers</h2>
        <PageState loaded={transfers} what="the transfers">
          {(page) => <Timeline address={address} tokenId={tokenId} page={page} />}
        </PageState>
      </section>
    </>
  )
}

function Timeline({
  address,
  tokenId,
  page,
}: {
  address: string
  tokenId: string
  page: ResponseOf<'/v1/nfts/{address}/{tokenId}/transfers'>
}) {
  const more = useMorePages<Transfer, TimeCursor>(`${address}|${tokenId}`, (cursor) =>
    explorerClient().get('/v1/nfts/{address}/{tokenId}/transfers', {
      path: { address, tokenId },
      query: { limit: 20, standard: 'all', ...cursor },
    }),
  )
  const { items, next } = more.after(page)
  return (
    <>
      <p className="muted small" data-testid="coverage">
        Coverage: <strong>{page.coverage.status}</strong>
        {page.coverage.start_block !== null ? ` from block ${page.coverage.start_block}` : ''}
        {page.coverage.status === 'partial' ? ' — earlier transfers may be missing' : ''}
      </p>
      {items.length === 0 ? (
        <p className="muted">No transfer is indexed for this token.</p>
      ) : (
        <ol className="timeline" aria-label="Transfers, newest first" data-testid="timeline">
          {items.map((x) => (
            <li key={`${x.transaction_hash}:${x.log_index}:${x.batch_index}`}>
              <span className={`event-kind ${x.event_type}`}>{x.event_type}</span>
              <span className="timeline-parties">
                {x.event_type === 'mint' ? null : (
                  <>
                    from <AddressLink address={x.from_address} />{' '}
                  </>
                )}
                {x.event_type === 'burn' ? null : (
                  <>
                    to <AddressLink address={x.to_address} />
                  </>
                )}
                {x.amount !== undefined && x.amount !== '1' ? ` · ×${count(x.amount)}` : ''}
              </span>
              <span className="muted small">
                block {x.block_number} ·{' '}
                <time dateTime={x.block_timestamp}>{formatTime(x.block_timestamp)}</time> ·{' '}
                <Confirmations value={x.confirmations} /> · tx{' '}
                <code title={x.transaction_hash}>{short(x.transaction_hash)}</code>
              </span>
            </li>
          ))}
        </ol>
      )}
      <MorePagesFooter more={more} next={next} label="Older transfers" />
    </>
  )
}

function HolderList({ address, tokenId }: { address: string; tokenId: string }) {
  const holders = useApi<Holders>(
    (signal) =>
      explorerClient().get('/v1/nfts/{address}/{tokenId}/owners', {
        path: { address, tokenId },
        query: { limit: 10 },
        signal,
      }),
    [address, tokenId],
  )
  return (
    <>
      <h2 className="h3">Holders</h2>
      <PageState loaded={holders} what="the holders">
        {(page) =>
          page.data.length === 0 ? (
            <p className="muted">Nobody holds this token.</p>
          ) : (
            <ol className="holders" data-testid="holders">
              {page.data.map((h) => (
                <li key={h.owner}>
                  <AddressLink address={h.owner} /> <span className="muted">×{count(h.balance)}</span>
                </li>
              ))}
              {page.pagination.has_more ? <li className="muted small">and more</li> : null}
            </ol>
          )
        }
      </PageState>
    </>
  )
}

export function AddressLink({ address }: { address: string }) {
  if (address === ZERO_ADDRESS) return <code title={address}>0x0</code>
  return (
    <Link href={exploreHref.owner(address)} title={address}>
      <code>{short(address)}</code>
    </Link>
  )
}

export function formatTime(iso: string): string {
  const d = new Date(iso)
  return Number.isNaN(d.getTime()) ? iso : d.toISOString().replace('T', ' ').slice(0, 19).concat(' UTC')
}
