/**
 * wagmi for the portal: the injected connector (window.ethereum) plus every
 * wallet that announces itself through EIP-6963, and — on the embedded devnet
 * only — the development wallet. All JSON-RPC goes to the wallet itself
 * (unstable_connector transport): the page never talks to another host.
 * Nothing is persisted; the next-auth session is what counts.
 */
import { defineChain } from 'viem'
import { createConfig, injected, unstable_connector } from 'wagmi'
import { devWallet } from './sign-in/dev-wallet'

export interface PortalChain {
  chainId: number
  network: string
  /** Decided by the server (src/app/portal/dev-wallet.ts), never guessed in the browser. */
  devWallet: boolean
}

export function makeWagmiConfig({ chainId, network, devWallet: offerDevWallet }: PortalChain) {
  const chain = defineChain({
    id: chainId,
    name: network,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [] } },
  })
  return createConfig({
    chains: [chain],
    connectors: offerDevWallet ? [injected(), devWallet()] : [injected()],
    transports: { [chain.id]: unstable_connector(injected) },
    multiInjectedProviderDiscovery: true,
    storage: null,
  })
}
