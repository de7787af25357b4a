/**
 * The audit trail as a file: JSON (the events as the portal lists them) or
 * CSV (RFC 4180: CRLF lines, quoted cells). A CSV cell that starts with
 * = + - @ (or a tab or carriage return) is what spreadsheets run as a
 * formula, and a user agent or key name is text anyone can choose: such a
 * cell gets a leading apostrophe, so it is shown as text, never evaluated.
 */
import type { AuditEventView } from './audit'

export type AuditExportFormat = 'csv' | 'json'

const CSV_COLUMNS = [
  'id',
  'created_at',
  'action',
  'wallet_address',
  'key_id',
  'key_prefix',
  'client_ip',
  'user_agent',
  'details',
] as const

/** One CSV cell: formula-neutralized, then quoted when it holds a quote, comma or line break. */
export function csvCell(value: string): string {
  const text = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text
}

export function auditCsv(events: AuditEventView[]): string {
  const lines = [CSV_COLUMNS.join(',')]
  for (const e of events) {
    const cells = CSV_COLUMNS.map((c) => {
      const v = e[c]
      if (v === null) return ''
      return csvCell(typeof v === 'string' ? v : JSON.stringify(v))
    })
    lines.push(cells.join(','))
  }
  return `${lines.join('\r\n')}\r\n`
}

export interface AuditExport {
  filename: string
  content_type: string
  body: string
}

export function auditExport(
  events: AuditEventView[],
  format: AuditExportFormat,
  now = new Date(),
): AuditExport {
  const stamp = now.toISOString().slice(0, 19).replaceAll(':', '-')
  return format === 'csv'
    ? { filename: `audit-${stamp}.csv`, content_type: 'text/csv; charset=utf-8', body: auditCsv(events) }
    : {
        filename: `audit-${stamp}.json`,
        content_type: 'application/json; charset=utf-8',
        body: `${JSON.stringify(events, null, 2)}\n`,
      }
}
