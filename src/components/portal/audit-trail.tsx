'use client'

import { keepPreviousData, useQuery } from '@tanstack/react-query'
import { useState } from 'react'
import { RelativeTime } from '@/components/ui/time'
import { type AuditEventView, errorMessage, portalApi } from './api'

export const AUDIT_PAGE_SIZE = 20

const ACTIONS: Record<string, string> = {
  sign_in: 'Signed in',
  key_created: 'Key created',
  key_rotated: 'Key rotated',
  key_revoked: 'Key revoked',
}

function summary(event: AuditEventView): string | null {
  const d = event.details as Record<string, unknown> | null
  if (!d || typeof d !== 'object') return null
  if (event.action === 'key_created' && typeof d.name === 'string') return `“${d.name}”`
  if (event.action === 'key_rotated' && typeof d.grace_seconds === 'number') {
    return d.grace_seconds === 0
      ? 'old secret ended at once'
      : `old secret kept ${formatSeconds(d.grace_seconds)}`
  }
  if (event.action === 'sign_in' && typeof d.wallet === 'string') return d.wallet
  return null
}

function formatSeconds(s: number): string {
  if (s % 86400 === 0) return `${s / 86400} day${s === 86400 ? '' : 's'}`
  if (s % 3600 === 0) return `${s / 3600} hour${s === 3600 ? '' : 's'}`
  return `${s} s`
}

export function AuditTrail() {
  // Cursors of the pages seen so far: [undefined, page-2 cursor, page-3 cursor, …].
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined])
  const page = cursors.length
  const cursor = cursors[cursors.length - 1]
  const events = useQuery({
    queryKey: ['portal', 'audit', cursor ?? 'first'],
    queryFn: () => portalApi.listAudit(AUDIT_PAGE_SIZE, cursor),
    placeholderData: keepPreviousData,
  })

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
        <div className="table-wrap">
          <table className="data-table responsive" aria-busy={events.isFetching}>
            <caption className="visually-hidden">Audit events, page {page}</caption>
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Action</th>
                <th scope="col">Key</th>
                <th scope="col">IP address</th>
                <th scope="col">User agent</th>
              </tr>
            </thead>
            <tbody>
              {events.data.items.map((event) => (
                <tr key={event.id} data-testid="audit-row" data-action={event.action}>
                  <td data-label="Time">
                    <RelativeTime iso={event.created_at} />
                  </td>
                  <th scope="row" data-label="Action">
                    <span className={`badge action-${event.action}`}>
                      {ACTIONS[event.action] ?? event.action}
                    </span>
                    {summary(event) ? <span className="small muted block">{summary(event)}</span> : null}
                  </th>
                  <td data-label="Key">
                    {event.key_prefix ? <code>{event.key_prefix}…</code> : <span className="muted">—</span>}
                  </td>
                  <td data-label="IP address">
                    <code>{event.client_ip ?? '—'}</code>
                  </td>
                  <td data-label="User agent" className="ua" title={event.user_agent ?? undefined}>
                    {event.user_agent ?? <span className="muted">—</span>}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <nav className="pager" aria-label="Audit trail pages">
        <button
          type="button"
          className="button secondary small"
          disabled={page === 1}
          onClick={() => setCursors((c) => c.slice(0, -1))}
        >
          Newer
        </button>
        <span className="muted small">Page {page}</span>
        <button
          type="button"
          className="button secondary small"
          disabled={!events.data?.next_cursor || events.isFetching}
          onClick={() => {
            const next = events.data?.next_cursor
            if (next) setCursors((c) => [...c, next])
          }}
        >
          Older
        </button>
      </nav>
    </>
  )
}
