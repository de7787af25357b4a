'use client'

import { useEffect, useState } from 'react'
import { issueDemoToken, loadDemoToken } from '@/components/demo-token'
import type { DemoToken } from './types'

/** The demo token of this tab (src/components/demo-token.ts): kept in sessionStorage, renewed on request. */
export function useDemoToken(now: number) {
  const [token, setToken] = useState<DemoToken | null>(null)
  const [error, setError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  useEffect(() => setToken(loadDemoToken()), [])

  async function fetchToken() {
    setBusy(true)
    setError(null)
    try {
      setToken(await issueDemoToken())
    } catch (err) {
      setError(err instanceof Error ? err.message : 'Could not get a demo token.')
    } finally {
      setBusy(false)
    }
  }

  const expiresIn = token ? new Date(token.expires_at).getTime() - now : 0
  return { token, valid: token !== null && expiresIn > 0, expiresIn, error, busy, fetchToken }
}
