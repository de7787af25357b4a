'use client'

import { useId } from 'react'
import type { KeyWithSecret } from '@/components/portal/trpc'
import { FormActions } from './form-actions'
import { accessFieldIds, describedBy, KeyAccessFields } from './key-access-fields'
import { useCreateKeyForm } from './use-create-key-form'

export function CreateKeyForm({
  onCancel,
  onCreated,
}: {
  onCancel: () => void
  onCreated: (result: KeyWithSecret) => void
}) {
  const id = useId()
  const ids = { name: `${id}-name`, ...accessFieldIds(id) }
  const form = useCreateKeyForm(ids, onCreated)
  const { errors } = form

  return (
    <form onSubmit={form.submit} noValidate className="form">
      <div className="field">
        <label htmlFor={ids.name}>Name</label>
        <input
          id={ids.name}
          name="name"
          value={form.name}
          onChange={(e) => form.setName(e.target.value)}
          maxLength={64}
          autoComplete="off"
          aria-invalid={errors.name ? true : undefined}
          aria-describedby={describedBy(ids.name, Boolean(errors.name))}
          data-autofocus
        />
        <p id={`${ids.name}-help`} className="help">
          Only you see it: name keys after where they run.
        </p>
        {errors.name ? (
          <p id={`${ids.name}-error`} className="field-error">
            {errors.name}
          </p>
        ) : null}
      </div>
      <KeyAccessFields id={id} access={form.access} errors={errors} />
      <FormActions mutation={form.create} onCancel={onCancel} label="Create key" busyLabel="Creating…" />
    </form>
  )
}
