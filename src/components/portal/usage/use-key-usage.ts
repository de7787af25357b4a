'use client'

import { useQuery } from '@tanstack/react-query'
import { useTRPC } from '@/components/portal/trpc'

/** Counts reach the database every 10 s: the usage is fetched again every 15 s while shown. */
export function useKeyUsage(keyId: string | undefined) {
  const trpc = useTRPC()
  return useQuery({
    ...trpc.keys.usage.queryOptions({ id: keyId ?? '1' }),
    enabled: keyId !== undefined,
    refetchInterval: 15_000,
  })
}
