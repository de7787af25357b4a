import type { IndexerStatus } from '@/server/api/routers/indexer/status.schema'

/** Head, confirmed block, lag and coverage of the index, as the status endpoint reports them. */
export function IndexerStatusPanel({ status }: { status: IndexerStatus }) {
  const lag = BigInt(status.last_seen_block) - BigInt(status.last_confirmed_block)
  return (
    <section aria-labelledby="status-heading">
      <h2 id="status-heading">
        Live index status <span className={`badge ${status.coverage_status}`}>{status.coverage_status}</span>
      </h2>
      <dl className="stats">
        <div className="stat">
          <dt>Network</dt>
          <dd>{status.network}</dd>
        </div>
        <div className="stat">
          <dt>Chain head (last seen)</dt>
          <dd data-testid="last-seen-block">{status.last_seen_block}</dd>
        </div>
        <div className="stat">
          <dt>Last confirmed block</dt>
          <dd data-testid="last-confirmed-block">{status.last_confirmed_block}</dd>
        </div>
        <div className="stat">
          <dt>Confirmed lag</dt>
          <dd>{lag.toString()} blocks</dd>
        </div>
        <div className="stat">
          <dt>Coverage from block</dt>
          <dd>{status.coverage_start_block ?? '—'}</dd>
        </div>
      </dl>
      <p className="muted">Updated {status.updated_at}</p>
    </section>
  )
}
