'use client'

import { type FormEvent, useState } from 'react'
import type { KeyWithSecret } from '@/components/portal/trpc'
import { SCOPES } from '@/lib/scopes'
import { useCreateKey } from './use-api-keys'
import { type KeyAccessErrors, useKeyAccess } from './use-key-access'

export interface CreateKeyErrors extends KeyAccessErrors {
  name?: string
}

/** Checks the name as the procedure would; the messages say how to fix it. */
function validateName(name: string): CreateKeyErrors {
  return {
    ...(name.trim() === '' ? { name: 'Give the key a name, e.g. “production backend”.' } : {}),
    ...(name.trim().length > 64 ? { name: 'At most 64 characters.' } : {}),
  }
}

/**
 * The create-key form's state: name, scopes (all by default), origins text,
 * the errors of the last submit, and the mutation. `fieldIds` names the
 * inputs so that a refused submit can focus the first field in error.
 */
export function useCreateKeyForm(
  fieldIds: { name: string; firstScope: string; origins: string },
  onCreated: (result: KeyWithSecret) => void,
) {
  const [name, setName] = useState('')
  const access = useKeyAccess({ scopes: SCOPES, origins: [] })
  const [errors, setErrors] = useState<CreateKeyErrors>({})
  const create = useCreateKey(onCreated)

  function submit(event: FormEvent) {
    event.preventDefault()
    const checked = access.check()
    const found = { ...validateName(name), ...checked.errors }
    setErrors(found)
    if (Object.keys(found).length > 0) {
      const first = found.name ? fieldIds.name : found.scopes ? fieldIds.firstScope : fieldIds.origins
      document.getElementById(first)?.focus()
      return
    }
    create.mutate({ name: name.trim(), scopes: access.scopes, allowed_origins: checked.allowedOrigins })
  }

  return { name, setName, access, errors, submit, create }
}
