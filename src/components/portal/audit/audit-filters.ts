import type { AuditFilterInput } from '../trpc'

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
  const day = (d: string) => Date.parse(`${d}T00:00:00Z`)
  return {
    ...(form.keyId ? { key_id: form.keyId } : {}),
    ...(form.action ? { action: form.action as NonNullable<AuditFilterInput['action']> } : {}),
    ...(form.fromDate ? { from: new Date(day(form.fromDate)).toISOString() } : {}),
    ...(form.toDate ? { to: new Date(day(form.toDate) + DAY_MS).toISOString() } : {}),
  }
}
