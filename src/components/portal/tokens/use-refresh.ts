'use client'

import { useMutation, useQueryClient } from '@tanstack/react-query'
import { TRPCClientError } from '@trpc/client'
import { useState } from 'react'
import { errorMessage, useTRPC } from '@/components/portal/trpc'

export type RefreshOutcome =
  | { kind: 'accepted'; at: string; nextAllowedAt: string }
  | { kind: 'limited'; message: string; retryAt: number }
  | { kind: 'failed'; message: string }

/** Seconds to wait from a limited refresh (the procedure's retryAfter, as in Retry-After). */
function retryAfterOf(err: unknown): number | null {
  if (!(err instanceof TRPCClientError)) return null
  const data = err.data as { code?: string; retryAfter?: unknown } | undefined
  if (data?.code !== 'TOO_MANY_REQUESTS') return null
  return typeof data.retryAfter === 'number' ? data.retryAfter : 60
}

/**
 * The two refresh procedures (src/server/api/portal/refresh), with the outcome
 * of the last one: accepted, limited (with when to try again) or failed.
 * An accepted refresh adds an event to the audit trail: its pages are re-read.
 */
export function useRefresh(onAccepted: () => void) {
  const trpc = useTRPC()
  const queryClient = useQueryClient()
  const [outcome, setOutcome] = useState<{ target: 'token' | 'collection'; result: RefreshOutcome } | null>(
    null,
  )
  const handlers = (target: 'token' | 'collection') => ({
    onSuccess: (data: { requested_at: string; next_allowed_at: string }) => {
      setOutcome({
        target,
        result: { kind: 'accepted', at: data.requested_at, nextAllowedAt: data.next_allowed_at },
      })
      void queryClient.invalidateQueries(trpc.keys.auditEvents.pathFilter())
      onAccepted()
    },
    onError: (err: unknown) => {
      const wait = retryAfterOf(err)
      setOutcome({
        target,
        result:
          wait === null
            ? { kind: 'failed', message: errorMessage(err) }
            : { kind: 'limited', message: errorMessage(err), retryAt: Date.now() + wait * 1000 },
      })
    },
  })
  const token = useMutation(trpc.refresh.token.mutationOptions(handlers('token')))
  const collection = useMutation(trpc.refresh.collection.mutationOptions(handlers('collection')))
  return { token, collection, outcome, pending: token.isPending || collection.isPending }
}
