'use client'

import { type FormEvent, useEffect, useId, useRef, useState } from 'react'
import { JsonView } from '@/components/try/json-view'
import { useDemoToken } from '@/components/try/use-demo-token'
import { useNow } from '@/components/try/use-now'
import { ChainText } from '@/components/ui/chain-text'
import { displayText } from '@/components/ui/display-text'
import { type RefreshOutcome, useRefresh } from './use-refresh'
import { type CollectionData, type Lookup, type TokenData, useTokenLookup } from './use-token-lookup'

const ADDRESS = /^0x[0-9a-fA-F]{40}$/
const TOKEN_ID = /^[0-9]{1,78}$/
/** Characters of a token's name its image's text names it by (the heading shows it whole). */
const ALT_NAME = 200

/** An http(s) URL, else null: only those become links. */
function webUrl(value: string | undefined): string | null {
  if (!value) return null
  try {
    const url = new URL(value)
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null
  } catch {
    return null
  }
}

/** Where the page may load the image from: the service's own copy, or bytes inside the URI itself. */
function imageSource(token: TokenData): string | null {
  if (token.media_url) return token.media_url
  if (token.image_url && /^data:image\//i.test(token.image_url)) return token.image_url
  return null
}

function when(iso: string | undefined): string {
  return iso ? new Date(iso).toLocaleString() : '—'
}

function wait(ms: number): string {
  const s = Math.max(1, Math.ceil(ms / 1000))
  if (s < 120) return `${s} s`
  return `${Math.ceil(s / 60)} min`
}

function OutcomeLine({ target, result, now }: { target: string; result: RefreshOutcome; now: number }) {
  if (result.kind === 'accepted')
    return (
      <p className="alert ok" data-testid="refresh-outcome">
        Refresh of the {target} accepted at {new Date(result.at).toLocaleTimeString()}. The indexer reads it
        again now; this view reloads in a few seconds. Next refresh of this {target} possible at{' '}
        {new Date(result.nextAllowedAt).toLocaleTimeString()}.
      </p>
    )
  if (result.kind === 'limited')
    return (
      <p className="alert warn" data-testid="refresh-outcome">
        Limited: {result.message}{' '}
        {result.retryAt > now ? `Try again in ${wait(result.retryAt - now)}.` : 'You can try again now.'}
      </p>
    )
  return (
    <p className="alert error" data-testid="refresh-outcome">
      {result.message}
    </p>
  )
}

function CollectionSummary({ collection }: { collection: CollectionData }) {
  return (
    <section className="panel token-section" aria-labelledby="collection-heading">
      <h2 id="collection-heading">
        <ChainText text={collection.name} fallback="Unnamed collection" />
      </h2>
      <dl className="facts">
        <dt>Address</dt>
        <dd>
          <code>{collection.contract_address}</code>
        </dd>
        <dt>Symbol</dt>
        <dd>
          <ChainText text={collection.symbol} fallback="—" />
        </dd>
        <dt>Tokens</dt>
        <dd>{collection.total_supply}</dd>
        {displayText(collection.description) ? (
          <>
            <dt>Description</dt>
            <dd className="prose-text">
              <ChainText text={collection.description} fallback={null} />
            </dd>
          </>
        ) : null}
      </dl>
    </section>
  )
}

function TokenDetails({ token }: { token: TokenData }) {
  const image = imageSource(token)
  const external = webUrl(token.external_url)
  const animation = webUrl(token.animation_url)
  return (
    <section className="panel token-section" aria-labelledby="token-heading">
      <h2 id="token-heading">
        <ChainText text={token.name} fallback={`Token ${token.token_id}`} />
      </h2>
      <div className="token-layout">
        <div className="token-image">
          {image ? (
            // Only the service's copy or a data: URI: the page loads nothing from another host.
            // biome-ignore lint/performance/noImgElement: artwork of any size, not a Next.js asset
            <img src={image} alt={displayText(token.name, ALT_NAME) ?? `Token ${token.token_id}`} />
          ) : (
            <p className="muted small">
              {token.image_url ? 'The service has not stored this image.' : 'The metadata names no image.'}
            </p>
          )}
        </div>
        <dl className="facts">
          <dt>Token id</dt>
          <dd>
            <code>{token.token_id}</code>
          </dd>
          <dt>Metadata status</dt>
          <dd>
            <span className="badge" data-testid="metadata-status">
              {token.metadata_status ?? 'unknown'}
            </span>
          </dd>
          <dt>Metadata updated</dt>
          <dd data-testid="metadata-updated">{when(token.metadata_updated_at)}</dd>
          <dt>Description</dt>
          <dd className="prose-text" data-testid="token-description">
            <ChainText text={token.description} fallback="—" />
          </dd>
          <dt>Image URL</dt>
          <dd>{token.image_url ? <code>{token.image_url}</code> : '—'}</dd>
          <dt>Animation URL</dt>
          <dd>
            {token.animation_url ? (
              animation ? (
                <a href={animation} rel="noopener noreferrer nofollow" target="_blank">
                  <code>{token.animation_url}</code>
                </a>
              ) : (
                <code>{token.animation_url}</code>
              )
            ) : (
              '—'
            )}
          </dd>
          <dt>External URL</dt>
          <dd>
            {token.external_url ? (
              external ? (
                <a
                  href={external}
                  rel="noopener noreferrer nofollow"
                  target="_blank"
                  data-testid="external-url"
                >
                  <code>{token.external_url}</code>
                </a>
              ) : (
                <code>{token.external_url}</code>
              )
            ) : (
              '—'
            )}
          </dd>
          <dt>Background colour</dt>
          <dd>
            {token.background_color ? (
              <>
                <span
                  className="swatch"
                  aria-hidden="true"
                  style={{ backgroundColor: `#${token.background_color}` }}
                />{' '}
                <code>#{token.background_color}</code>
              </>
            ) : (
              '—'
            )}
          </dd>
        </dl>
      </div>
      <h3>Attributes</h3>
      {token.attributes && token.attributes.length > 0 ? (
        <table className="data-table responsive attributes">
          <caption className="visually-hidden">Attributes of the token</caption>
          <thead>
            <tr>
              <th scope="col">Trait</th>
              <th scope="col">Value</th>
              <th scope="col">Display</th>
            </tr>
          </thead>
          <tbody>
            {token.attributes.map((a, i) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: a document may repeat a trait with its value
              <tr key={i}>
                <td data-label="Trait">
                  <ChainText text={a.trait_type} fallback="—" />
                </td>
                <td data-label="Value">
                  <ChainText text={String(a.value)} fallback="—" />
                </td>
                <td data-label="Display">
                  <ChainText text={a.display_type} fallback="—" />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p className="muted">No attributes.</p>
      )}
    </section>
  )
}

/**
 * The portal's token view (docs/portal.md, "Token view"): a collection (and
 * a token of it) as /v1 serves them, read with the tab's demo token, and the
 * refresh procedures.
 */
export function TokenView() {
  const ids = { address: useId(), tokenId: useId() }
  const now = useNow(1000)
  const demo = useDemoToken(now)
  const { result, busy, run } = useTokenLookup(demo.valid ? demo.token : null)
  const [address, setAddress] = useState('')
  const [tokenId, setTokenId] = useState('')
  const [errors, setErrors] = useState<{ address?: string; tokenId?: string }>({})
  const [wanted, setWanted] = useState<Lookup | null>(null)
  const reloads = useRef<number[]>([])
  const addressRef = useRef<HTMLInputElement>(null)
  const tokenRef = useRef<HTMLInputElement>(null)

  // A lookup waits for a valid demo token (asked for when there is none).
  useEffect(() => {
    if (!wanted) return
    if (!demo.valid) {
      if (!demo.busy && !demo.error) void demo.fetchToken()
      return
    }
    setWanted(null)
    void run(wanted)
  }, [wanted, demo.valid, demo.busy, demo.error, demo.fetchToken, run])

  useEffect(
    () => () => {
      for (const t of reloads.current) clearTimeout(t)
    },
    [],
  )

  const refresh = useRefresh(() => {
    // The indexer takes a refreshed token within seconds: read the view again twice.
    const lookup = result?.lookup
    if (!lookup) return
    for (const t of reloads.current) clearTimeout(t)
    reloads.current = [2_000, 6_000].map((ms) => window.setTimeout(() => setWanted(lookup), ms))
  })

  function submit(e: FormEvent) {
    e.preventDefault()
    const a = address.trim()
    const t = tokenId.trim()
    const next: typeof errors = {}
    if (!ADDRESS.test(a)) next.address = 'Enter a contract address: 0x and 40 hex digits.'
    if (t !== '' && !TOKEN_ID.test(t)) next.tokenId = 'Enter a token id in decimal digits, or leave it empty.'
    setErrors(next)
    if (next.address) return addressRef.current?.focus()
    if (next.tokenId) return tokenRef.current?.focus()
    setWanted({ address: a.toLowerCase(), tokenId: t === '' ? null : t.replace(/^0+(?=\d)/, '') })
  }

  const shown = result?.lookup
  return (
    <>
      <div className="page-head">
        <div>
          <h1>Tokens</h1>
          <p className="muted">
            Look up a collection or one of its tokens as the API serves it, and ask for its metadata to be
            read again.
          </p>
        </div>
      </div>
      <form className="form panel token-lookup" onSubmit={submit} noValidate>
        <div className="field">
          <label htmlFor={ids.address}>Collection address</label>
          <input
            id={ids.address}
            ref={addressRef}
            name="address"
            value={address}
            onChange={(e) => setAddress(e.target.value)}
            autoComplete="off"
            spellCheck={false}
            placeholder="0x…"
            aria-invalid={errors.address ? true : undefined}
            aria-describedby={`${ids.address}-help${errors.address ? ` ${ids.address}-error` : ''}`}
          />
          <p id={`${ids.address}-help`} className="help">
            The contract of the collection.
          </p>
          {errors.address ? (
            <p id={`${ids.address}-error`} className="field-error">
              {errors.address}
            </p>
          ) : null}
        </div>
        <div className="field">
          <label htmlFor={ids.tokenId}>Token id (optional)</label>
          <input
            id={ids.tokenId}
            ref={tokenRef}
            name="token_id"
            value={tokenId}
            onChange={(e) => setTokenId(e.target.value)}
            inputMode="numeric"
            autoComplete="off"
            aria-invalid={errors.tokenId ? true : undefined}
            aria-describedby={`${ids.tokenId}-help${errors.tokenId ? ` ${ids.tokenId}-error` : ''}`}
          />
          <p id={`${ids.tokenId}-help`} className="help">
            Empty: the collection alone.
          </p>
          {errors.tokenId ? (
            <p id={`${ids.tokenId}-error`} className="field-error">
              {errors.tokenId}
            </p>
          ) : null}
        </div>
        <div className="form-actions">
          <button type="submit" className="button" disabled={busy}>
            {busy ? 'Looking up…' : 'Look up'}
          </button>
        </div>
      </form>
      <div role="status" aria-live="polite" className="token-status">
        {demo.error ? <p className="alert error">{demo.error}</p> : null}
        {busy ? <p className="muted">Reading from the API…</p> : null}
        {refresh.outcome ? (
          <OutcomeLine target={refresh.outcome.target} result={refresh.outcome.result} now={now} />
        ) : null}
      </div>
      {result && shown ? (
        <>
          {result.problem ? (
            <p className="alert error" role="alert">
              {result.problem}
            </p>
          ) : null}
          {!result.collection && !result.problem ? (
            <p className="alert warn">The collection {shown.address} is not indexed.</p>
          ) : null}
          {result.collection ? (
            <div className="refresh-actions">
              {shown.tokenId !== null && result.token ? (
                <button
                  type="button"
                  className="button"
                  disabled={refresh.pending}
                  onClick={() => refresh.token.mutate({ address: shown.address, token_id: shown.tokenId! })}
                >
                  Refresh token
                </button>
              ) : null}
              <button
                type="button"
                className="button secondary"
                disabled={refresh.pending}
                onClick={() => refresh.collection.mutate({ address: shown.address })}
              >
                Refresh collection
              </button>
            </div>
          ) : null}
          {result.collection ? <CollectionSummary collection={result.collection} /> : null}
          {shown.tokenId !== null && result.collection && !result.token && !result.problem ? (
            <p className="alert warn">Token {shown.tokenId} of this collection is not indexed.</p>
          ) : null}
          {result.token ? <TokenDetails token={result.token} /> : null}
          {result.token ? (
            <section className="panel token-section" aria-labelledby="document-heading">
              <h2 id="document-heading">Metadata document</h2>
              {result.document ? (
                <>
                  <p className="muted small">
                    As fetched from{' '}
                    <code>
                      <ChainText text={result.document.source_uri} fallback="—" />
                    </code>{' '}
                    at {when(result.document.fetched_at)} (GET /v1/nfts/…/metadata).
                  </p>
                  <JsonView value={result.document.document} />
                </>
              ) : (
                <p className="muted">No document is stored for this token yet.</p>
              )}
            </section>
          ) : null}
        </>
      ) : null}
    </>
  )
}
