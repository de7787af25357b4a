'use client'

import { QueryClient, QueryClientProvider } from '@tanstack/react-query'
import { type ReactNode, useState } from 'react'
import { WagmiProvider } from 'wagmi'
import { createPortalTrpcClient, TRPCProvider } from './trpc'
import { makeWagmiConfig, type PortalChain } from './wagmi-config'

/**
 * wagmi once per browser tab; React Query and the typed tRPC client once per
 * signed-in account (`account`, undefined when signed out), so that what one
 * wallet's pages cached is gone when another signs in in the same tab.
 */
export function PortalProviders({
  chain,
  account,
  children,
}: {
  chain: PortalChain
  account: string | undefined
  children: ReactNode
}) {
  const [wagmiConfig] = useState(() => makeWagmiConfig(chain))
  return (
    <WagmiProvider config={wagmiConfig} reconnectOnMount={false}>
      <AccountQueries key={account ?? 'signed-out'}>{children}</AccountQueries>
    </WagmiProvider>
  )
}

/** A query cache of its own: remounted (so emptied) when the account changes. */
function AccountQueries({ children }: { children: ReactNode }) {
  const [queryClient] = useState(
    () =>
      new QueryClient({
        defaultOptions: { queries: { staleTime: 5_000, retry: 1, refetchOnWindowFocus: true } },
      }),
  )
  const [trpcClient] = useState(createPortalTrpcClient)
  return (
    <QueryClientProvider client={queryClient}>
      <TRPCProvider trpcClient={trpcClient} queryClient={queryClient}>
        {children}
      </TRPCProvider>
    </QueryClientProvider>
  )
}
