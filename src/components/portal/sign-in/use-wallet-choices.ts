'use client'

import { useEffect, useState } from 'react'
import { type Connector, useConnectors } from 'wagmi'
import { DEV_WALLET_ID } from './dev-wallet'

export interface WalletChoices {
  /** false until the page has asked the browser which wallets it has (after hydration). */
  ready: boolean
  /** Wallets found in this browser: each EIP-6963 announcement, else window.ethereum. */
  detected: Connector[]
  /** The development wallet, when the server offers it (embedded devnet only). */
  devWallet: Connector | undefined
}

/**
 * The wallets to offer. The generic injected connector stands for
 * window.ethereum: it is listed only when that exists and no wallet
 * announced itself by name, so a browser without a wallet gets guidance
 * rather than a button that can only fail.
 */
export function useWalletChoices(): WalletChoices {
  const connectors = useConnectors()
  const [ready, setReady] = useState(false)
  const [hasWindowEthereum, setHasWindowEthereum] = useState(false)
  useEffect(() => {
    setHasWindowEthereum(Boolean((window as { ethereum?: unknown }).ethereum))
    setReady(true)
  }, [])
  const announced = connectors.filter((c) => c.type === 'injected' && c.id !== 'injected')
  const generic = connectors.find((c) => c.id === 'injected')
  const detected = announced.length > 0 ? announced : hasWindowEthereum && generic ? [generic] : []
  return { ready, detected, devWallet: connectors.find((c) => c.id === DEV_WALLET_ID) }
}
