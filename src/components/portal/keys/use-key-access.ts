'use client'

import { useState } from 'react'
import { SCOPES, type Scope } from '@/lib/scopes'
import { parseOrigins } from './parse-origins'

export interface KeyAccessErrors {
  scopes?: string
  origins?: string
}

/**
 * What a key may do, as the create and edit forms hold it: its scopes (in
 * SCOPES order) and the origins textarea. check() validates both as the
 * procedures would and returns the parsed origins.
 */
export function useKeyAccess(initial: { scopes: readonly Scope[]; origins: readonly string[] }) {
  const [scopes, setScopes] = useState<Scope[]>([...initial.scopes])
  const [origins, setOrigins] = useState(initial.origins.join('\n'))

  function toggleScope(scope: Scope, checked: boolean) {
    // Kept in the order of SCOPES, whatever order they were ticked in.
    setScopes((current) =>
      checked ? SCOPES.filter((s) => s === scope || current.includes(s)) : current.filter((s) => s !== scope),
    )
  }

  function check(): { errors: KeyAccessErrors; allowedOrigins: string[] } {
    const parsed = parseOrigins(origins)
    return {
      errors: {
        ...(scopes.length === 0 ? { scopes: 'Choose at least one scope.' } : {}),
        ...(parsed.error ? { origins: parsed.error } : {}),
      },
      allowedOrigins: parsed.origins,
    }
  }

  return { scopes, toggleScope, origins, setOrigins, check }
}

export type KeyAccess = ReturnType<typeof useKeyAccess>
