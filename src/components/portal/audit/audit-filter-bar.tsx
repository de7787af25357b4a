'use client'

import { useId } from 'react'
import type { ApiKeyView } from '@/components/portal/trpc'
import type { AuditFilterForm } from './audit-filters'
import { ACTION_LABELS } from './audit-summary'

/** The audit trail's filters: key, action, first and last day (UTC). */
export function AuditFilterBar({
  value,
  onChange,
  keys,
}: {
  value: AuditFilterForm
  onChange: (next: AuditFilterForm) => void
  keys: ApiKeyView[]
}) {
  const id = useId()
  const set = (field: keyof AuditFilterForm) => (e: { target: { value: string } }) =>
    onChange({ ...value, [field]: e.target.value })
  return (
    <fieldset className="filter-bar">
      <legend className="visually-hidden">Filter events</legend>
      <div className="field">
        <label htmlFor={`${id}-key`}>Key</label>
        <select id={`${id}-key`} value={value.keyId} onChange={set('keyId')}>
          <option value="">All keys</option>
          {keys.map((k) => (
            <option key={k.id} value={k.id}>
              {k.name} ({k.prefix}…)
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor={`${id}-action`}>Action</label>
        <select id={`${id}-action`} value={value.action} onChange={set('action')}>
          <option value="">All actions</option>
          {Object.entries(ACTION_LABELS).map(([action, label]) => (
            <option key={action} value={action}>
              {label}
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor={`${id}-from`}>From (UTC)</label>
        <input id={`${id}-from`} type="date" value={value.fromDate} onChange={set('fromDate')} />
      </div>
      <div className="field">
        <label htmlFor={`${id}-to`}>To (UTC, included)</label>
        <input
          id={`${id}-to`}
          type="date"
          value={value.toDate}
          min={value.fromDate || undefined}
          onChange={set('toDate')}
        />
      </div>
    </fieldset>
  )
}
