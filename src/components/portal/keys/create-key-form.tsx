'use client'

import { useId } from 'react'
import { SCOPES } from '@/lib/scopes'
import type { KeyWithSecret } from '../trpc'
import { FormActions } from './form-actions'
import { SCOPE_GRANTS } from './scope-grants'
import { useCreateKeyForm } from './use-create-key-form'

/** ids of a field's help and error texts, for aria-describedby. */
function describedBy(id: string, hasError: boolean): string {
  return `${id}-help${hasError ? ` ${id}-error` : ''}`
}

export function CreateKeyForm({
  onCancel,
  onCreated,
}: {
  onCancel: () => void
  onCreated: (result: KeyWithSecret) => void
}) {
  const id = useId()
  const ids = { name: `${id}-name`, firstScope: `${id}-scope-0`, origins: `${id}-origins` }
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
      <fieldset className="field" aria-describedby={errors.scopes ? `${id}-scopes-error` : undefined}>
        <legend>Scopes</legend>
        <div className="scope-grid">
          {SCOPES.map((scope, i) => (
            <label key={scope} className="check">
              <input
                id={`${id}-scope-${i}`}
                type="checkbox"
                name="scopes"
                value={scope}
                checked={form.scopes.includes(scope)}
                onChange={(e) => form.toggleScope(scope, e.target.checked)}
              />
              <span>
                <code>{scope}</code>
                <span className="help">{SCOPE_GRANTS[scope]}</span>
              </span>
            </label>
          ))}
        </div>
        {errors.scopes ? (
          <p id={`${id}-scopes-error`} className="field-error">
            {errors.scopes}
          </p>
        ) : null}
      </fieldset>
      <div className="field">
        <label htmlFor={ids.origins}>Allowed origins (optional)</label>
        <textarea
          id={ids.origins}
          name="origins"
          rows={3}
          value={form.origins}
          onChange={(e) => form.setOrigins(e.target.value)}
          placeholder="https://app.example.com"
          aria-invalid={errors.origins ? true : undefined}
          aria-describedby={describedBy(ids.origins, Boolean(errors.origins))}
        />
        <p id={`${ids.origins}-help`} className="help">
          One per line. Leave empty for a server-side key: any request that carries an <code>Origin</code>{' '}
          header not listed here is refused with 403.
        </p>
        {errors.origins ? (
          <p id={`${ids.origins}-error`} className="field-error">
            {errors.origins}
          </p>
        ) : null}
      </div>
      <FormActions mutation={form.create} onCancel={onCancel} label="Create key" busyLabel="Creating…" />
    </form>
  )
}
