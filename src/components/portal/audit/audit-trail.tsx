'use client'

import { errorMessage } from '../trpc'
import { AuditTable } from './audit-table'
import { useAuditPages } from './use-audit-pages'

export function AuditTrail() {
  const { events, page, canGoNewer, canGoOlder, newer, older } = useAuditPages()
  return (
    <>
      <div className="page-head">
        <div>
          <h1>Audit trail</h1>
          <p className="muted">
            Every sign-in and key change of your account, newest first, with where it came from.
          </p>
        </div>
      </div>
      {events.isPending ? (
        <p className="muted" role="status">
          Loading events…
        </p>
      ) : events.isError ? (
        <p className="alert error" role="alert">
          {errorMessage(events.error)}
        </p>
      ) : events.data.items.length === 0 ? (
        <p className="muted">No events yet.</p>
      ) : (
        <AuditTable items={events.data.items} page={page} busy={events.isFetching} />
      )}
      <nav className="pager" aria-label="Audit trail pages">
        <button type="button" className="button secondary small" disabled={!canGoNewer} onClick={newer}>
          Newer
        </button>
        <span className="muted small">Page {page}</span>
        <button type="button" className="button secondary small" disabled={!canGoOlder} onClick={older}>
          Older
        </button>
      </nav>
    </>
  )
}
