import type { Metadata } from 'next'
import { ApiReference } from '@/components/docs/api-reference'
import { ClientSection } from '@/components/docs/client-section'
import { LicenceSection } from '@/components/docs/licence-section'
import { ErrorsSection, LimitsSection, ScopesSection } from '@/components/docs/reference-tables'
import { LICENCE_SECTION_ID } from '@/lib/licence'
import { getServices } from '@/server/services/next-services'

export const dynamic = 'force-dynamic'

export const metadata: Metadata = { title: 'Docs' }

const SECTIONS = [
  ['quick-start', 'Quick start'],
  ['authentication', 'Authentication'],
  ['scopes', 'Scopes'],
  ['pagination', 'Pagination'],
  ['polling', 'Polling for new events'],
  ['webhooks', 'Webhooks'],
  ['errors', 'Errors and retries'],
  ['limits', 'Rate limits'],
  ['artwork', 'Artwork'],
  ['coverage', 'Coverage and confirmations'],
  ['erc1155', 'ERC-1155'],
  ['ownership', 'Ownership views'],
  ['client', 'TypeScript client'],
  [LICENCE_SECTION_ID, 'Licence'],
  ['reference', 'API reference'],
] as const

export default function DocsPage() {
  const { config } = getServices()
  const base = config.PUBLIC_URL
  const network = config.NETWORK
  return (
    <div className="docs">
      <nav className="docs-toc" aria-label="On this page">
        <ol>
          {SECTIONS.map(([id, label]) => (
            <li key={id}>
              <a href={`#${id}`}>{label}</a>
            </li>
          ))}
        </ol>
      </nav>
      <article className="docs-body">
        <h1 id="guide">Docs</h1>
        <p className="lead">
          A read-only REST API over the indexed ERC-721 data of the <code>{network}</code> network. Base
          address <code>{base}/v1</code>; every response is JSON; timestamps are UTC RFC 3339; addresses are
          lowercase hex; token ids, block numbers and counters are decimal strings.
        </p>

        <section id="quick-start" aria-labelledby="h-quick-start">
          <h2 id="h-quick-start">Quick start</h2>
          <ol>
            <li>
              Sign in to the <a href="/portal">portal</a> with your wallet and create a key with the scopes
              you need. Copy the secret: it is shown once.
            </li>
            <li>Call the API from your server:</li>
          </ol>
          <pre>
            <code>{`curl -H "Authorization: Bearer $NFT_API_KEY" \\
     "${base}/v1/collections?limit=5"`}</code>
          </pre>
          <p>
            No key yet? The <a href="/try">try-it page</a> gets a 15-minute demo token and calls any endpoint
            from your browser.
          </p>
        </section>

        <section id="authentication" aria-labelledby="h-authentication">
          <h2 id="h-authentication">Authentication</h2>
          <p>
            Every request except <code>POST /v1/demo-token</code> carries{' '}
            <code>Authorization: Bearer &lt;key&gt;</code>, where the value is a portal key or a demo token.
          </p>
          <ul>
            <li>
              <strong>Portal keys</strong> are server-side secrets. Keep them in your server’s secret store —
              never in a browser bundle, a repository or a URL query string. Only a hash is stored, so a lost
              secret cannot be shown again: rotate the key instead.
            </li>
            <li>
              <strong>Rotation</strong> issues a new secret. You choose when the old one stops working: at
              once (if it may have leaked) or after a grace period of up to 7 days, so you can deploy the new
              secret without downtime. <strong>Revocation</strong> refuses the key within a second,
              everywhere. Both appear in your <a href="/portal/audit">audit trail</a>.
            </li>
            <li>
              <strong>Allowed origins.</strong> A request that carries an <code>Origin</code> header (a
              browser) is refused with 403 unless that origin is in the key’s allowlist, which is empty by
              default.
            </li>
            <li>
              <strong>Demo tokens</strong> (<code>POST {base}/v1/demo-token</code>, no credential) carry all
              six read scopes, expire after 15 minutes and have the demo limits. They are for trying
              endpoints, not for application traffic.
            </li>
          </ul>
          <p>
            A missing, malformed, expired or revoked credential answers <code>401</code>; a credential without
            the needed scope, or an origin that is not allowed, answers <code>403</code>.
          </p>
        </section>

        <ScopesSection />

        <section id="pagination" aria-labelledby="h-pagination">
          <h2 id="h-pagination">Pagination</h2>
          <p>
            Lists use cursors, not page numbers. Every list answers{' '}
            <code>{'{ data, pagination: { limit, has_more, next_page_params }, coverage }'}</code>. To get the
            next page, <strong>copy every key and value of </strong>
            <code>next_page_params</code> into the next request and keep all your other filters unchanged.
            Treat the values as opaque; stop when <code>has_more</code> is false (then{' '}
            <code>next_page_params</code> is absent). A cursor from one endpoint is not valid on another.{' '}
            <code>limit</code> is 1 to 100, default 20.
          </p>
          <pre>
            <code>{`async function* pages(path, params = {}) {
  for (;;) {
    const url = new URL(path, '${base}')
    for (const [k, v] of Object.entries(params))
      for (const one of [v].flat()) url.searchParams.append(k, String(one))   // repeatable: collection, trait
    const res = await fetch(url, { headers: { Authorization: \`Bearer \${process.env.NFT_API_KEY}\` } })
    if (!res.ok) throw new Error(\`\${res.status}\`)
    const page = await res.json()
    yield page.data
    if (!page.pagination.has_more) return
    params = { ...params, ...page.pagination.next_page_params }   // copy, never build
  }
}`}</code>
          </pre>
        </section>

        <section id="polling" aria-labelledby="h-polling">
          <h2 id="h-polling">Polling for new events</h2>
          <p>
            To follow new transfers by polling (or see <a href="#webhooks">Webhooks</a>), request the{' '}
            <strong>first page</strong> of <code>/v1/activity</code> (or a transfer list) at an interval close
            to the chain’s block time — every 12 seconds suits most chains — and deduplicate locally on{' '}
            <code>transaction_hash</code> + <code>log_index</code> + <code>batch_index</code>, the identity of
            an event (one ERC-2309 range or ERC-1155 batch log carries several). Reach older history with{' '}
            <code>next_page_params</code>.
          </p>
          <pre>
            <code>{`const seen = new Set()
setInterval(async () => {
  const res = await fetch('${base}/v1/activity?limit=100', { headers: { Authorization: \`Bearer \${key}\` } })
  if (!res.ok) return                       // 429/503: back off, see below
  for (const e of (await res.json()).data.reverse()) {
    const id = \`\${e.transaction_hash}:\${e.log_index}:\${e.batch_index}\`
    if (seen.has(id)) continue
    seen.add(id)
    handle(e)                               // oldest first
  }
}, 12_000)`}</code>
          </pre>
          <p>
            Only canonical rows are returned: if a chain reorganisation orphans a block, its transfers
            disappear from the lists. Act on an event once its <code>confirmations</code> reach the depth you
            trust.
          </p>
          <h3 id="live-stream">Live stream (extension)</h3>
          <p>
            Instead of polling, open <code>GET /v1/activity/stream</code> (scope <code>read:activity</code>,
            same filters as the feed, plus <code>min_confirmations</code>): Server-Sent Events, one per
            change,
            <code>activity.added</code> or <code>activity.removed</code> (a reorganisation took a sent event
            away). Resume after a break with the last event id as <code>Last-Event-ID</code>: nothing is lost
            or repeated within 24 hours. At most 5 streams per key (1 per demo token). The TypeScript client’s{' '}
            <code>follow()</code> uses it and falls back to polling.
          </p>
          <pre>
            <code>{`const res = await fetch('${base}/v1/activity/stream?min_confirmations=2', {
  headers: { Authorization: \`Bearer \${key}\`, 'Last-Event-ID': lastId },
})
// text/event-stream: "id: 48213\nevent: activity.added\ndata: {...}\n\n"`}</code>
          </pre>
        </section>

        <section id="webhooks" aria-labelledby="h-webhooks">
          <h2 id="h-webhooks">Webhooks</h2>
          <p>
            Instead of polling, create webhook endpoints for a key in the portal (Webhooks): an https URL, an
            optional collection and event type, how many confirmations to wait for, and the token standard
            (ERC-721 by default; choose ERC-1155 or both to receive those events, each with its{' '}
            <code>amount</code>). Each new transfer is POSTed as JSON (<code>activity.added</code>), and a
            transfer that a reorganisation removes after it was sent as <code>activity.removed</code> — the{' '}
            <code>ActivityPushEvent</code> of the reference below, under “Webhooks”. Requests are signed the
            Standard Webhooks way with the endpoint’s <code>whsec_…</code> secret, shown once: verify every
            request, answer 2xx within 10 seconds, and deduplicate by <code>webhook-id</code> (delivery is at
            least once, in no guaranteed order; order by <code>id</code>). Failed deliveries are retried with
            backoff for more than a day; an endpoint that fails for a whole day is disabled, and the portal
            shows why. Requests to one endpoint run side by side: up to 20 at once per server process once it
            has answered 2xx, and 2 at once while it is new or its last request failed, so a receiver that
            answers quickly gets a backlog fast and one that hangs is not flooded.
          </p>
          <pre>
            <code>{`import { verifyWebhook } from '@nft-data-service/client'

// Node: the raw body, exactly as received
const event = verifyWebhook(rawBody, req.headers, process.env.WEBHOOK_SECRET)
if (!alreadyHandled(event.id)) handle(event)   // event.type: 'activity.added' | 'activity.removed'`}</code>
          </pre>
        </section>

        <ErrorsSection />

        <LimitsSection />

        <section id="artwork" aria-labelledby="h-artwork">
          <h2 id="h-artwork">Artwork</h2>
          <p>
            Show <code>media_url</code> when present, otherwise <code>image_url</code>. <code>media_url</code>{' '}
            points to the service’s own stored copy of the original bytes (<code>GET /v1/media?url=…</code>,
            no credential, so it works in <code>&lt;img&gt;</code> and <code>&lt;video&gt;</code>);{' '}
            <code>image_url</code> is the metadata’s own location (often <code>ipfs://</code>) and depends on
            outside availability. A <code>media_type</code> starting with <code>video/</code> is a video.
          </p>
          <pre>
            <code>{`const src = nft.media_url ?? nft.image_url   // the artwork rule
const isVideo = nft.media_type?.startsWith('video/')`}</code>
          </pre>
          <p>
            With <code>include_metadata=true</code>, an NFT also carries <code>thumbnails</code> — the stored
            image at 64, 256 and 512 pixels wide (<code>media_url</code> plus <code>&amp;width=</code>; never
            wider than the image; SVG rendered as PNG) — and, when the <code>animation_url</code> bytes are
            stored, <code>animation_media_url</code> and <code>animation_media_type</code> (video, audio,
            HTML, 3D model). Media is served under a sandbox policy: an HTML animation belongs in a sandboxed{' '}
            <code>&lt;iframe&gt;</code>, never inlined into your page.
          </p>
          <pre>
            <code>{`const thumb = nft.thumbnails?.['256'] ?? nft.media_url ?? nft.image_url
const anim = nft.animation_media_url ?? nft.animation_url`}</code>
          </pre>
          <p>
            The <a href="/explore">explorer</a> is built this way on the public API alone, with a demo token:
            it shows thumbnails and stored media only, and a placeholder where no copy is stored, since an{' '}
            <code>image_url</code> from chain data can point anywhere.
          </p>
        </section>

        <section id="coverage" aria-labelledby="h-coverage">
          <h2 id="h-coverage">Coverage and confirmations</h2>
          <ul>
            <li>
              Every page reports <code>coverage.status</code> for the query as a whole: <code>complete</code>{' '}
              (the documented window is covered), <code>partial</code> (results are incomplete — for example
              the collection predates the first indexed block, given as <code>start_block</code>, or backfill
              is still running) or <code>unknown</code> (no claim is made).
            </li>
            <li>
              <code>confirmations</code> on a transfer is the number of blocks mined on top of it (0 in the
              head block). It is <code>null</code> when the block is unknown — never read null as zero.
            </li>
            <li>
              <code>GET /v1/indexer/status</code> gives the observed head (<code>last_seen_block</code>), the
              last confirmed block and the coverage; their difference is how far the confirmed index trails
              the head. The <a href="/">home page</a> shows it live.
            </li>
          </ul>
        </section>

        <section id="erc1155" aria-labelledby="h-erc1155">
          <h2 id="h-erc1155">ERC-1155</h2>
          <p>
            ERC-1155 contracts are indexed too, and served only to a request that asks for them with{' '}
            <code>standard</code>: <code>ERC721</code>, <code>ERC1155</code> or <code>all</code>. Without it
            every answer is ERC-721 only, exactly as before, so a client written for ERC-721 never receives a
            record it cannot read (a token with many holders, a transfer of a quantity).
          </p>
          <ul>
            <li>
              Lists that can mix standards take it: <code>GET /v1/collections</code>,{' '}
              <code>GET /v1/owners/{'{address}'}/nfts</code>, <code>GET /v1/activity</code>.
            </li>
            <li>
              An ERC-1155 collection or token answers <code>404 NOT_FOUND</code> on its own endpoints (detail,
              NFTs, transfers, traits, metadata) unless <code>standard=ERC1155</code> or{' '}
              <code>standard=all</code> is given; the message names the parameter.
            </li>
            <li>
              With <code>standard</code>, records carry <code>amount</code> (transfers, activity),{' '}
              <code>balance</code> (holdings), <code>contract_type</code>, <code>total_supply</code> and{' '}
              <code>holder_count</code> (NFTs) — for ERC-721 records too (<code>"1"</code>). An ERC-1155
              token’s <code>current_owner</code> is its only holder, or <code>null</code> when its supply is
              spread. Each pair of a batch transfer is its own record: deduplicate on{' '}
              <code>transaction_hash</code>, <code>log_index</code> and <code>batch_index</code>.
            </li>
            <li>
              <code>GET /v1/nfts/{'{address}/{tokenId}'}/owners</code> lists a token’s holders and balances,
              largest first (both standards, no parameter needed).
            </li>
          </ul>
          <pre>
            <code>{`for await (const nft of client.items('/v1/owners/{address}/nfts', {
  path: { address: wallet },
  query: { standard: 'all' },
})) console.log(nft.contract_type, nft.token_id, nft.balance)

for await (const h of client.items('/v1/nfts/{address}/{tokenId}/owners', {
  path: { address: contract, tokenId: '1' },
})) console.log(h.owner, h.balance)`}</code>
          </pre>
        </section>

        <section id="ownership" aria-labelledby="h-ownership">
          <h2 id="h-ownership">Ownership views (extension)</h2>
          <p>
            Who holds what, for both standards without the <code>standard</code> parameter; each list pages
            like the others.
          </p>
          <ul>
            <li>
              <code>GET /v1/collections/{'{address}'}/owners</code>: a collection’s holders, most tokens
              first, then by address, with <code>token_count</code> (ERC-1155: token ids held) and, for
              ERC-1155, <code>balance</code> summed over them.
            </li>
            <li>
              <code>GET /v1/owners/{'{address}'}/collections</code>: the collections a wallet holds tokens of,
              by address, with names, <code>contract_type</code> and counts.
            </li>
            <li>
              <code>GET /v1/owners/{'{address}'}/transfers</code>: a wallet’s transfers in and out, newest
              first (<code>direction=in</code> or <code>out</code> keeps one side).
            </li>
            <li>
              <code>collection=0x…</code> on <code>GET /v1/owners/{'{address}'}/nfts</code>, repeatable up to
              100 collections, keeps only their tokens.
            </li>
            <li>
              <code>at_block</code> on the holders, the holdings and one NFT answers the state after that
              block: a snapshot, served for confirmed blocks (up to <code>X-Confirmed-Block</code>) inside the
              covered window, so its answer never changes. Its pages carry <code>at_block</code> in{' '}
              <code>next_page_params</code>. Metadata is today’s.
            </li>
          </ul>
          <pre>
            <code>{`for await (const h of client.items('/v1/collections/{address}/owners', {
  path: { address: contract },
  query: { at_block: '19000000' },
})) console.log(h.owner, h.token_count)`}</code>
          </pre>
        </section>

        <ClientSection base={base} />

        <LicenceSection network={network} />

        <section id="reference" aria-labelledby="h-reference">
          <h2 id="h-reference">API reference</h2>
          <p className="muted">
            Rendered from <a href="/openapi.json">/openapi.json</a> (OpenAPI 3.1), generated from the same
            procedures that serve the API.
          </p>
          <ApiReference />
        </section>
      </article>
    </div>
  )
}
