'use client'

import { useRef, useState } from 'react'
import { buildUrl, type EndpointSpec, type ParamValues } from './endpoints'
import { retryAfterSeconds } from './format'
import type { ApiResponse } from './types'
import type { PacedFetch } from './use-paced-fetch'

/** Parses a body as JSON when it is JSON; null otherwise. */
function parseJson(text: string): unknown {
  try {
    return text ? JSON.parse(text) : null
  } catch {
    return null
  }
}

/**
 * Sends one request of the form and keeps its answer; after a 429 or 503 it
 * records when Retry-After allows the next one. Focus moves to the answer.
 */
export function useApiRequest(pacedFetch: PacedFetch) {
  const [sending, setSending] = useState(false)
  const [response, setResponse] = useState<ApiResponse | null>(null)
  const [error, setError] = useState<string | null>(null)
  const [retryAt, setRetryAt] = useState<number | null>(null)
  const responseRef = useRef<HTMLElement>(null)

  async function send(target: EndpointSpec, params: ParamValues, page: number | null) {
    setSending(true)
    setError(null)
    const url = buildUrl(target, params)
    const started = performance.now()
    try {
      const res = await pacedFetch(url, target.method)
      const text = target.method === 'HEAD' ? '' : await res.text()
      const headers = [...res.headers.entries()]
      setResponse({
        method: target.method,
        url,
        status: res.status,
        ms: Math.round(performance.now() - started),
        headers,
        body: parseJson(text),
        text,
        page,
        params,
      })
      const limited = res.status === 429 || res.status === 503
      setRetryAt(limited ? Date.now() + (retryAfterSeconds(headers) ?? 1) * 1000 : null)
      requestAnimationFrame(() => responseRef.current?.focus())
    } catch {
      setError('The request did not complete: the service may be unreachable. Try again.')
    } finally {
      setSending(false)
    }
  }

  function clear() {
    setResponse(null)
    setError(null)
  }

  return { send, sending, response, error, retryAt, responseRef, clear }
}
