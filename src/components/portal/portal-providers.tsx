'use client'

import { QueryClient, QueryClientProvider } from '@tanstack/react-query'
import { type ReactNode, useState } from 'react'
import { WagmiProvider } from 'wagmi'
import { createPortalTrpcClient, TRPCProvider } from './trpc'
import { makeWagmiConfig, type PortalChain } from './wagmi-config'

/** wagmi, React Query and the typed tRPC client, one of each per browser tab. */
export function PortalProviders({ chain, children }: { chain: PortalChain; children: ReactNode }) {
  const [wagmiConfig] = useState(() => makeWagmiConfig(chain))
  const [queryClient] = useState(
    () =>
      new QueryClient({
        defaultOptions: { queries: { staleTime: 5_000, retry: 1, refetchOnWindowFocus: true } },
      }),
  )
  const [trpcClient] = useState(createPortalTrpcClient)
  return (
    <WagmiProvider config={wagmiConfig} reconnectOnMount={false}>
      <QueryClientProvider client={queryClient}>
        <TRPCProvider trpcClient={trpcClient} queryClient={queryClient}>
          {children}
        </TRPCProvider>
      </QueryClientProvider>
    </WagmiProvider>
  )
}
