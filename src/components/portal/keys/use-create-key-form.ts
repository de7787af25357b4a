'use client'

import { type FormEvent, useState } from 'react'
import { SCOPES, type Scope } from '@/lib/scopes'
import type { KeyWithSecret } from '../trpc'
import { parseOrigins } from './parse-origins'
import { useCreateKey } from './use-api-keys'

export interface CreateKeyErrors {
  name?: string
  scopes?: string
  origins?: string
}

/** Checks the form as the procedure would; the messages say how to fix each field. */
function validate(name: string, scopes: Scope[], originsError: string | undefined): CreateKeyErrors {
  return {
    ...(name.trim() === '' ? { name: 'Give the key a name, e.g. “production backend”.' } : {}),
    ...(name.trim().length > 64 ? { name: 'At most 64 characters.' } : {}),
    ...(scopes.length === 0 ? { scopes: 'Choose at least one scope.' } : {}),
    ...(originsError ? { origins: originsError } : {}),
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
  const [scopes, setScopes] = useState<Scope[]>([...SCOPES])
  const [origins, setOrigins] = useState('')
  const [errors, setErrors] = useState<CreateKeyErrors>({})
  const create = useCreateKey(onCreated)

  function toggleScope(scope: Scope, checked: boolean) {
    // Kept in the order of SCOPES, whatever order they were ticked in.
    setScopes((current) =>
      checked ? SCOPES.filter((s) => s === scope || current.includes(s)) : current.filter((s) => s !== scope),
    )
  }

  function submit(event: FormEvent) {
    event.preventDefault()
    const parsed = parseOrigins(origins)
    const found = validate(name, scopes, parsed.error)
    setErrors(found)
    if (Object.keys(found).length > 0) {
      const first = found.name ? fieldIds.name : found.scopes ? fieldIds.firstScope : fieldIds.origins
      document.getElementById(first)?.focus()
      return
    }
    create.mutate({ name: name.trim(), scopes, allowed_origins: parsed.origins })
  }

  return { name, setName, scopes, toggleScope, origins, setOrigins, errors, submit, create }
}
