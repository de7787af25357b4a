'use client'

import { useQuery } from '@tanstack/react-query'
import { useState } from 'react'
import { errorMessage, useTRPC } from '@/components/portal/trpc'
import { AuditFilterBar } from './audit-filter-bar'
import { type AuditFilterForm, auditFilterInput, NO_AUDIT_FILTERS } from './audit-filters'
import { AuditTable } from './audit-table'
import { useAuditExport } from './use-audit-export'
import { useAuditPages } from './use-audit-pages'

/** An empty page: with filters set, the way back to every event. */
function NoEvents({ filtered, onClear }: { filtered: boolean; onClear: () => void }) {
  if (!filtered) return <p className="muted">No events yet.</p>
  return (
    <p className="muted">
      No events match these filters.{' '}
      <button type="button" className="button secondary small" onClick={onClear}>
        Clear filters
      </button>
    </p>
  )
}

export function AuditTrail() {
  const trpc = useTRPC()
  const keys = useQuery(trpc.keys.list.queryOptions())
  const [form, setForm] = useState<AuditFilterForm>(NO_AUDIT_FILTERS)
  const datesReversed = form.fromDate !== '' && form.toDate !== '' && form.toDate < form.fromDate
  const filter = auditFilterInput(datesReversed ? { ...form, toDate: '' } : form)
  const filtered = Object.values(form).some((value) => value !== '')
  const { events, page, canGoNewer, canGoOlder, newer, older } = useAuditPages(filter)
  const exporter = useAuditExport()
  return (
    <>
      <div className="page-head">
        <div>
          <h1>Audit trail</h1>
          <p className="muted">
            Every sign-in and key change of your account, newest first, with where it came from.
          </p>
        </div>
        <div className="export-actions">
          {(['csv', 'json'] as const).map((format) => (
            <button
              key={format}
              type="button"
              className="button secondary small"
              disabled={exporter.isPending}
              onClick={() => exporter.mutate({ filter, format })}
            >
              Export {format.toUpperCase()}
            </button>
          ))}
        </div>
      </div>
      <AuditFilterBar value={form} onChange={setForm} keys={keys.data ?? []} />
      {datesReversed ? (
        <p className="field-error" role="alert">
          The last day is before the first; it is ignored.
        </p>
      ) : null}
      {exporter.isError ? (
        <p className="alert error" role="alert">
          {errorMessage(exporter.error)}
        </p>
      ) : null}
      <p className="visually-hidden" role="status" aria-live="polite">
        {exporter.isSuccess ? `Downloaded ${exporter.data}.` : ''}
      </p>
      {events.isPending ? (
        <p className="muted" role="status">
          Loading events…
        </p>
      ) : events.isError ? (
        <p className="alert error" role="alert">
          {errorMessage(events.error)}
        </p>
      ) : events.data.items.length === 0 ? (
        <NoEvents filtered={filtered} onClear={() => setForm(NO_AUDIT_FILTERS)} />
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
