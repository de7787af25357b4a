'use client'

import { QueryClient, QueryClientProvider } from '@tanstack/react-query'
import { type ReactNode, useState } from 'react'
import { defineChain } from 'viem'
import { createConfig, injected, unstable_connector, WagmiProvider } from 'wagmi'

/**
 * wagmi for the portal: the injected connector (window.ethereum) plus every
 * wallet that announces itself through EIP-6963. All JSON-RPC goes to the
 * wallet itself (unstable_connector transport): the page never talks to
 * another host. Nothing is persisted; the next-auth session is what counts.
 */
function makeWagmiConfig(chainId: number, network: string) {
  const chain = defineChain({
    id: chainId,
    name: network,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [] } },
  })
  return createConfig({
    chains: [chain],
    connectors: [injected()],
    transports: { [chain.id]: unstable_connector(injected) },
    multiInjectedProviderDiscovery: true,
    storage: null,
  })
}

export function PortalProviders({
  chainId,
  network,
  children,
}: {
  chainId: number
  network: string
  children: ReactNode
}) {
  const [wagmiConfig] = useState(() => makeWagmiConfig(chainId, network))
  const [queryClient] = useState(
    () =>
      new QueryClient({
        defaultOptions: { queries: { staleTime: 5_000, retry: 1, refetchOnWindowFocus: true } },
      }),
  )
  return (
    <WagmiProvider config={wagmiConfig} reconnectOnMount={false}>
      <QueryClientProvider client={queryClient}>{children}</QueryClientProvider>
    </WagmiProvider>
  )
}
