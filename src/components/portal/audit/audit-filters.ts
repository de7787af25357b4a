import type { AuditFilterInput } from '@/components/portal/trpc'

/** The audit trail's filter form as typed (dates as YYYY-MM-DD, '' for "any"). */
export interface AuditFilterForm {
  keyId: string
  action: string
  fromDate: string
  toDate: string
}

export const NO_AUDIT_FILTERS: AuditFilterForm = { keyId: '', action: '', fromDate: '', toDate: '' }

const DAY_MS = 86_400_000

/**
 * The procedures' filter input: the days are whole UTC days, both included
 * (the procedure's `to` is exclusive: the day after the chosen last day).
 */
export function auditFilterInput(form: AuditFilterForm): AuditFilterInput {
  const from = dayStart(form.fromDate)
  const to = dayStart(form.toDate)
  return {
    ...(form.keyId ? { key_id: form.keyId } : {}),
    ...(form.action ? { action: form.action as NonNullable<AuditFilterInput['action']> } : {}),
    ...(from !== undefined ? { from: new Date(from).toISOString() } : {}),
    ...(to !== undefined ? { to: new Date(to + DAY_MS).toISOString() } : {}),
  }
}

/**
 * The start of a YYYY-MM-DD day in UTC; undefined for '' and for what a date
 * field can hold while it is typed but is no day (a five-digit year), which
 * filters nothing until it is one.
 */
export function dayStart(date: string): number | undefined {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(date)) return undefined
  const start = Date.parse(`${date}T00:00:00Z`)
  return Number.isNaN(start) ? undefined : start
}
