import { AutoRefresh } from '@/components/auto-refresh'
import { IndexerStatusPanel } from '@/components/indexer-status-panel'
import { getIndexerStatus } from '@/server/api/routers/indexer/status.handler'
import { getServices } from '@/server/services'

export const dynamic = 'force-dynamic'

export default async function HomePage() {
  const services = getServices()
  const status = await getIndexerStatus(services, {}).catch(() => null)
  return (
    <>
      <h1>ERC-721 data you can trust, over one REST API</h1>
      <p className="lead">
        Collections, NFTs, current owners, transfers and activity of the <code>{services.config.NETWORK}</code>{' '}
        network, indexed block by block, safe under reorganisations, with honest coverage and confirmations on
        every record.
      </p>
      <div className="cards">
        <a className="card" href="/try">
          <h3>Try it</h3>
          <p>Get a 15-minute demo token and call any endpoint from your browser.</p>
        </a>
        <a className="card" href="/docs">
          <h3>Docs</h3>
          <p>API reference, authentication, pagination, polling and retries.</p>
        </a>
        <a className="card" href="/portal">
          <h3>Portal</h3>
          <p>Sign in with your wallet and manage API keys.</p>
        </a>
      </div>
      {status ? (
        <IndexerStatusPanel status={status} />
      ) : (
        <p role="status" className="muted">
          The index status is unavailable right now.
        </p>
      )}
      <AutoRefresh everyMs={5000} />
    </>
  )
}
