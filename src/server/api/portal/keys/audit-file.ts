/**
 * The audit trail as a file: JSON (the events as the portal lists them) or
 * CSV (RFC 4180: CRLF lines, quoted cells), written page by page so that an
 * export's cost is one page of events at a time, whatever the trail holds
 * (docs/portal.md, "Audit filters and export"). A CSV cell that starts with
 * = + - @ (or a tab or carriage return) is what spreadsheets run as a
 * formula, and a user agent or key name is text anyone can choose: such a
 * cell gets a leading apostrophe, so it is shown as text, never evaluated.
 */
import type { AuditEventView } from '@/server/portal-auth/audit'

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

function csvLine(e: AuditEventView): string {
  const cells = CSV_COLUMNS.map((c) => {
    const v = e[c]
    if (v === null) return ''
    return csvCell(typeof v === 'string' ? v : JSON.stringify(v))
  })
  return `${cells.join(',')}\r\n`
}

/** A JSON array item as JSON.stringify(events, null, 2) writes it: indented by two spaces. */
const jsonItem = (e: AuditEventView) => `  ${JSON.stringify(e, null, 2).replaceAll('\n', '\n  ')}`

/** The file's name and type; its body comes from auditExportStream. */
export function auditExportFile(format: AuditExportFormat, now = new Date()) {
  const stamp = now.toISOString().slice(0, 19).replaceAll(':', '-')
  return format === 'csv'
    ? { filename: `audit-${stamp}.csv`, contentType: 'text/csv; charset=utf-8' }
    : { filename: `audit-${stamp}.json`, contentType: 'application/json; charset=utf-8' }
}

export interface AuditPage {
  items: AuditEventView[]
  next_cursor: string | null
}

/**
 * The export's bytes, one page of events per read: `first` is the first
 * page (read before the response starts, so a failure still gets its
 * status), `nextPage` reads the page after a cursor. `finished` runs once,
 * when the last page is written, the reader cancels, or a read fails (with
 * the failure: the response has started, so only the log can tell why).
 */
export function auditExportStream(
  format: AuditExportFormat,
  first: AuditPage,
  nextPage: (cursor: string) => Promise<AuditPage>,
  finished: (failure?: unknown) => void,
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder()
  let page: AuditPage | undefined = first
  let cursor = ''
  let started = false
  let written = 0
  let done = false
  const finish = (failure?: unknown) => {
    if (done) return
    done = true
    finished(failure)
  }
  const encode = (p: AuditPage): string => {
    let text = started ? '' : format === 'csv' ? `${CSV_COLUMNS.join(',')}\r\n` : '['
    started = true
    for (const e of p.items) {
      text += format === 'csv' ? csvLine(e) : `${written === 0 ? '\n' : ',\n'}${jsonItem(e)}`
      written++
    }
    if (p.next_cursor === null && format === 'json') text += written === 0 ? ']\n' : '\n]\n'
    return text
  }
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          const current: AuditPage = page ?? (await nextPage(cursor))
          page = undefined
          controller.enqueue(encoder.encode(encode(current)))
          if (current.next_cursor === null) {
            controller.close()
            finish()
          } else cursor = current.next_cursor
        } catch (err) {
          controller.error(err)
          finish(err)
        }
      },
      cancel: () => finish(),
    },
    // Read a page only when the previous one has been taken: memory holds one page.
    { highWaterMark: 0 },
  )
}
