import type { AuditEventView } from '@/components/portal/trpc'
import { RelativeTime } from '@/components/ui/time'
import { ACTION_LABELS, auditSummary } from './audit-summary'

export function AuditTable({ items, page, busy }: { items: AuditEventView[]; page: number; busy: boolean }) {
  return (
    <div className="table-wrap">
      <table className="data-table responsive" aria-busy={busy}>
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
          {items.map((event) => {
            const summary = auditSummary(event)
            return (
              <tr key={event.id} data-testid="audit-row" data-action={event.action}>
                <td data-label="Time">
                  <RelativeTime iso={event.created_at} />
                </td>
                <th scope="row" data-label="Action">
                  <span className={`badge action-${event.action}`}>
                    {ACTION_LABELS[event.action] ?? event.action}
                  </span>
                  {summary ? <span className="small muted block">{summary}</span> : null}
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
            )
          })}
        </tbody>
      </table>
    </div>
  )
}
