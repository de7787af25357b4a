import { AutoRefresh } from '@/components/auto-refresh'
import { ActivityFeed } from '@/components/explorer/activity-feed'
import { IndexerStatusPanel } from '@/components/indexer-status-panel'
import { getIndexerStatus } from '@/server/api/v1/indexer/status.handler'
import { getServices } from '@/server/services/next-services'

export const dynamic = 'force-dynamic'

export default async function HomePage() {
  const services = getServices()
  const status = await getIndexerStatus(services, {}).catch(() => null)
  const base = services.config.PUBLIC_URL
  return (
    <>
      <section className="hero">
        <p className="eyebrow">NFT Data API · {services.config.NETWORK}</p>
        <h1>ERC-721 data you can trust, over one REST API</h1>
        <p className="lead">
          Collections, NFTs, current owners, transfers and activity of the{' '}
          <code>{services.config.NETWORK}</code> network, indexed block by block, safe under reorganisations,
          with honest coverage and confirmations on every record.
        </p>
        <div className="hero-actions">
          <a className="button" href="/try">
            Try it now — no sign-up
          </a>
          <a className="button secondary" href="/explore">
            Explore the NFTs
          </a>
          <a className="button secondary" href="/docs">
            Read the docs
          </a>
          <a className="button secondary" href="/portal">
            Get an API key
          </a>
        </div>
      </section>

      <figure className="example">
        <figcaption className="muted small">Your first request: the five newest mints</figcaption>
        <pre>
          <code>{`curl -H "Authorization: Bearer $NFT_API_KEY" \\
     "${base}/v1/activity?limit=5&event_type=mint"`}</code>
        </pre>
      </figure>

      <div className="cards">
        <a className="card" href="/try">
          <h3>Try it</h3>
          <p>Get a 15-minute demo token and call any endpoint from your browser, page by page.</p>
        </a>
        <a className="card" href="/explore">
          <h3>Explore</h3>
          <p>Browse collections, tokens, wallets and live activity, built on the public API alone.</p>
        </a>
        <a className="card" href="/docs">
          <h3>Docs</h3>
          <p>API reference, authentication, scopes, pagination, polling, retries and the artwork rule.</p>
        </a>
        <a className="card" href="/portal">
          <h3>Portal</h3>
          <p>Sign in with your wallet, create scoped keys, rotate or revoke them, read the audit trail.</p>
        </a>
      </div>

      <h2>What you get</h2>
      <ul className="features">
        <li>
          <strong>Canonical history only</strong>
          <span className="muted">
            Rows of orphaned blocks disappear in the same transaction as the reorg.
          </span>
        </li>
        <li>
          <strong>Cursor pagination</strong>
          <span className="muted">
            Copy next_page_params; pages never repeat or skip, even as rows arrive.
          </span>
        </li>
        <li>
          <strong>Freshness you can see</strong>
          <span className="muted">Coverage on every page, confirmations on every transfer.</span>
        </li>
        <li>
          <strong>Self-hosted media</strong>
          <span className="muted">
            media_url serves stored original bytes; image_url stays the metadata’s.
          </span>
        </li>
      </ul>

      <div className="home-mints">
        <div>
          {status ? (
            <IndexerStatusPanel status={status} confirmations={services.config.CONFIRMATIONS} />
          ) : (
            <p role="status" className="alert warn">
              The index status is unavailable right now.
            </p>
          )}
        </div>
        <div className="panel" data-testid="newest-mints">
          <ActivityFeed heading="Newest mints" eventType="mint" limit={6} stream={false} />
          <p className="small flush">
            <a href="/explore/activity">All live activity</a> · <a href="/explore">Explore collections</a>
          </p>
        </div>
      </div>
      <AutoRefresh everyMs={5000} />
    </>
  )
}
