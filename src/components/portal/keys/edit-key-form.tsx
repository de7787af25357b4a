'use client'

import { type FormEvent, useId, useState } from 'react'
import type { ApiKeyView } from '@/components/portal/trpc'
import { FormActions } from './form-actions'
import { accessFieldIds, KeyAccessFields } from './key-access-fields'
import { useUpdateKey } from './use-api-keys'
import { type KeyAccessErrors, useKeyAccess } from './use-key-access'

/** Changes a key's scopes and allowed origins; the secret stays the same. */
export function EditKeyForm({
  apiKey,
  onCancel,
  onUpdated,
}: {
  apiKey: ApiKeyView
  onCancel: () => void
  onUpdated: (key: ApiKeyView) => void
}) {
  const id = useId()
  const ids = accessFieldIds(id)
  const access = useKeyAccess({ scopes: apiKey.scopes, origins: apiKey.allowed_origins })
  const [errors, setErrors] = useState<KeyAccessErrors>({})
  const update = useUpdateKey((result) => onUpdated(result.key))

  function submit(event: FormEvent) {
    event.preventDefault()
    const checked = access.check()
    setErrors(checked.errors)
    if (checked.errors.scopes || checked.errors.origins) {
      document.getElementById(checked.errors.scopes ? ids.firstScope : ids.origins)?.focus()
      return
    }
    update.mutate({ id: apiKey.id, scopes: access.scopes, allowed_origins: checked.allowedOrigins })
  }

  return (
    <form onSubmit={submit} noValidate className="form">
      <p className="help">Changes apply to every secret of the key within a second.</p>
      <KeyAccessFields id={id} access={access} errors={errors} />
      <FormActions mutation={update} onCancel={onCancel} label="Save changes" busyLabel="Saving…" />
    </form>
  )
}
