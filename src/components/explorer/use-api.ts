'use client'

import { type DependencyList, useEffect, useState } from 'react'
import { NftDataApiError } from '@/client'

export type Loaded<T> =
  | { state: 'loading'; data?: undefined; error?: undefined }
  | { state: 'ok'; data: T; error?: undefined }
  | { state: 'error'; data?: undefined; error: { message: string; status: number; code: string } }

/** Describes a failed request for the page: the API's own message, or why there was none. */
export function describeError(err: unknown): { message: string; status: number; code: string } {
  if (err instanceof NftDataApiError)
    return {
      message: `${err.envelope.error.message}${err.requestId ? ` (request ${err.requestId})` : ''}`,
      status: err.status,
      code: err.code,
    }
  return { message: err instanceof Error ? err.message : String(err), status: 0, code: 'ERROR' }
}

/**
 * Runs `load` (a typed-client call) when the dependencies change; aborted when they change
 * again or the component goes away, so a slow answer never overwrites a newer one.
 */
export function useApi<T>(load: (signal: AbortSignal) => Promise<T>, deps: DependencyList): Loaded<T> {
  const [result, setResult] = useState<Loaded<T>>({ state: 'loading' })
  useEffect(() => {
    const controller = new AbortController()
    setResult({ state: 'loading' })
    load(controller.signal).then(
      (data) => {
        if (!controller.signal.aborted) setResult({ state: 'ok', data })
      },
      (err) => {
        if (!controller.signal.aborted) setResult({ state: 'error', error: describeError(err) })
      },
    )
    return () => controller.abort()
    // biome-ignore lint/correctness/useExhaustiveDependencies: the caller names what `load` depends on.
  }, deps)
  return result
}
