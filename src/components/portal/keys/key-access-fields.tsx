'use client'

import { SCOPES } from '@/lib/scopes'
import { SCOPE_GRANTS } from './scope-grants'
import type { KeyAccess, KeyAccessErrors } from './use-key-access'

/** ids of a field's help and error texts, for aria-describedby. */
export function describedBy(id: string, hasError: boolean): string {
  return `${id}-help${hasError ? ` ${id}-error` : ''}`
}

/** The ids the access fields give their inputs (`${id}-scope-0`, `${id}-origins`): a refused submit focuses one. */
export function accessFieldIds(id: string) {
  return { firstScope: `${id}-scope-0`, origins: `${id}-origins` }
}

/** Scopes (checkboxes) and allowed origins (textarea) of a key: the create and edit forms' common fields. */
export function KeyAccessFields({
  id,
  access,
  errors,
}: {
  id: string
  access: KeyAccess
  errors: KeyAccessErrors
}) {
  const ids = accessFieldIds(id)
  return (
    <>
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
                checked={access.scopes.includes(scope)}
                onChange={(e) => access.toggleScope(scope, e.target.checked)}
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
          value={access.origins}
          onChange={(e) => access.setOrigins(e.target.value)}
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
    </>
  )
}
