'use client'

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { type ApiKeyView, type KeyWithSecret, useTRPC } from '@/components/portal/trpc'

/** The signed-in user's keys, starting from the list the server rendered with the page. */
export function useApiKeys(initialKeys?: ApiKeyView[]) {
  const trpc = useTRPC()
  return useQuery(trpc.keys.list.queryOptions(undefined, initialKeys ? { initialData: initialKeys } : {}))
}

/** After a key changes, both the key list and the audit trail are out of date. */
function useRefreshKeysAndAudit() {
  const trpc = useTRPC()
  const queryClient = useQueryClient()
  return () => void queryClient.invalidateQueries(trpc.keys.pathFilter())
}

export function useCreateKey(onCreated: (result: KeyWithSecret) => void) {
  const trpc = useTRPC()
  const refresh = useRefreshKeysAndAudit()
  return useMutation(
    trpc.keys.create.mutationOptions({
      onSuccess: (result) => {
        refresh()
        onCreated(result)
      },
    }),
  )
}

export function useUpdateKey(onUpdated: (result: { key: ApiKeyView }) => void) {
  const trpc = useTRPC()
  const refresh = useRefreshKeysAndAudit()
  return useMutation(
    trpc.keys.update.mutationOptions({
      onSuccess: (result) => {
        refresh()
        onUpdated(result)
      },
    }),
  )
}

export function useRotateKey(onRotated: (result: KeyWithSecret, graceSeconds: number) => void) {
  const trpc = useTRPC()
  const refresh = useRefreshKeysAndAudit()
  return useMutation(
    trpc.keys.rotate.mutationOptions({
      onSuccess: (result, input) => {
        refresh()
        onRotated(result, input.grace_seconds ?? 0)
      },
    }),
  )
}

export function useRevokeKey(onRevoked: () => void) {
  const trpc = useTRPC()
  const refresh = useRefreshKeysAndAudit()
  return useMutation(
    trpc.keys.revoke.mutationOptions({
      onSuccess: () => {
        refresh()
        onRevoked()
      },
    }),
  )
}
