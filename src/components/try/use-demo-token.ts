'use client'

import { useEffect, useState } from 'react'
import { retryAfterSeconds } from './format'
import type { DemoToken } from './types'

const STORAGE_KEY = 'nft-api-demo-token'

/** The tab's token from sessionStorage, if it has not expired. */
function loadToken(): DemoToken | null {
  try {
    const raw = sessionStorage.getItem(STORAGE_KEY)
    const token = raw ? (JSON.parse(raw) as DemoToken) : null
    return token && new Date(token.expires_at).getTime() > Date.now() ? token : null
  } catch {
    return null
  }
}

/** The demo token of this tab: kept in sessionStorage, renewed on request. */
export function useDemoToken(now: number) {
  const [token, setToken] = useState<DemoToken | null>(null)
  const [error, setError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  useEffect(() => setToken(loadToken()), [])

  async function fetchToken() {
    setBusy(true)
    setError(null)
    try {
      const res = await fetch('/v1/demo-token', { method: 'POST', cache: 'no-store' })
      // A proxy's HTML error page is no JSON: then the status says what happened.
      const body = (await res.json().catch(() => ({}))) as {
        data?: DemoToken
        error?: { code: string; message: string }
      }
      if (!res.ok || !body.data) {
        const wait = retryAfterSeconds([...res.headers.entries()])
        throw new Error(
          res.status === 429
            ? `Demo tokens are limited to 5 per minute per address. Try again in ${wait ?? 60} s.`
            : (body.error?.message ?? `The token endpoint answered ${res.status}.`),
        )
      }
      setToken(body.data)
      sessionStorage.setItem(STORAGE_KEY, JSON.stringify(body.data))
    } catch (err) {
      setError(err instanceof Error ? err.message : 'Could not get a demo token.')
    } finally {
      setBusy(false)
    }
  }

  const expiresIn = token ? new Date(token.expires_at).getTime() - now : 0
  return { token, valid: token !== null && expiresIn > 0, expiresIn, error, busy, fetchToken }
}
