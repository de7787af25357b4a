'use client'

import { useCallback, useRef } from 'react'

/**
 * fetch() with the demo token, one request at a time and paced to stay inside
 * the token's requests-per-second limit instead of spending a 429. The gap is
 * counted from the previous answer, not the previous send: the server counted
 * that request at some moment before its answer arrived, however long it took.
 */
export function usePacedFetch(token: string | undefined, requestsPerSecond: number) {
  const lastAnsweredAt = useRef(0)
  const queue = useRef<Promise<unknown>>(Promise.resolve())
  return useCallback(
    (url: string, method: 'GET' | 'HEAD' = 'GET'): Promise<Response> => {
      const run = async () => {
        const gap = 1000 / Math.max(1, requestsPerSecond) + 50
        const wait = lastAnsweredAt.current + gap - Date.now()
        if (wait > 0) await new Promise((r) => setTimeout(r, wait))
        try {
          const res = await fetch(url, {
            method,
            headers: { Authorization: `Bearer ${token}` },
            cache: 'no-store',
          })
          // The answer is complete once its body is: read it here, hand out a copy.
          const body = method === 'HEAD' ? null : await res.arrayBuffer()
          return new Response(body, { status: res.status, headers: res.headers })
        } finally {
          lastAnsweredAt.current = Date.now()
        }
      }
      const result = queue.current.then(run, run)
      queue.current = result.catch(() => undefined)
      return result
    },
    [token, requestsPerSecond],
  )
}

export type PacedFetch = ReturnType<typeof usePacedFetch>
