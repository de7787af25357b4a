/** The audit trail's date filters: whole UTC days, and no crash on what a date field holds mid-typing. */
import { describe, expect, it } from 'vitest'
import { auditFilterInput, NO_AUDIT_FILTERS } from './audit-filters'

describe('auditFilterInput', () => {
  it('turns the chosen days into [from, day after to)', () => {
    expect(auditFilterInput({ ...NO_AUDIT_FILTERS, fromDate: '2026-01-01', toDate: '2026-01-31' })).toEqual({
      from: '2026-01-01T00:00:00.000Z',
      to: '2026-02-01T00:00:00.000Z',
    })
  })

  it('ignores a date that is no day yet (a fifth year digit typed) instead of throwing', () => {
    for (const date of ['20261-01-01', '2026-13-01', '2026-1-1'])
      expect(auditFilterInput({ ...NO_AUDIT_FILTERS, fromDate: date, toDate: date })).toEqual({})
  })
})
