import type { IndexerStatus } from '@/server/api/v1/indexer/status.schema'
import { RelativeTime } from './ui/time'

const COVERAGE: Record<IndexerStatus['coverage_status'], string> = {
  complete: 'Every block of the documented window is indexed.',
  partial: 'Some blocks of the window are not indexed yet: results can be incomplete.',
  unknown: 'No claim of completeness is made yet.',
}

/** Head, confirmed block, lag and coverage of the index, as the status endpoint reports them. */
export function IndexerStatusPanel({
  status,
  confirmations,
}: {
  status: IndexerStatus
  confirmations?: number
}) {
  const confirmedLag = BigInt(status.last_seen_block) - BigInt(status.last_confirmed_block)
  return (
    <section aria-labelledby="status-heading" className="status-section">
      <h2 id="status-heading">
        Live index status <span className={`badge ${status.coverage_status}`}>{status.coverage_status}</span>
      </h2>
      <p className="muted">{COVERAGE[status.coverage_status]}</p>
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
          <dt>Confirmation lag</dt>
          <dd>
            {confirmedLag.toString()} block{confirmedLag === 1n ? '' : 's'}
          </dd>
        </div>
        <div className="stat">
          <dt>Not yet ingested</dt>
          <dd>
            {status.lag_blocks} block{status.lag_blocks === '1' ? '' : 's'}
          </dd>
        </div>
        <div className="stat">
          <dt>Coverage from block</dt>
          <dd>{status.coverage_start_block ?? '—'}</dd>
        </div>
      </dl>
      <p className="muted small">
        Updated <RelativeTime iso={status.updated_at} />.
        {confirmations !== undefined
          ? ` A block counts as confirmed ${confirmations} blocks below the head; every transfer carries its own confirmations count.`
          : ''}
      </p>
    </section>
  )
}
