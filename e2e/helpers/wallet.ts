/**
 * A wallet injected into the page as an EIP-1193 provider (window.ethereum,
 * and announced through EIP-6963), bridged to the test process with
 * page.exposeFunction: every signature is made here, by viem, with a real
 * private key. For a smart-contract wallet, `address` is the contract and
 * the key is its owner's.
 */
import type { Page } from '@playwright/test'
import { type Address, type Hex, type LocalAccount, toHex } from 'viem'

export interface InjectedWallet {
  address: Address
  /** JSON-RPC methods the page called, in order. */
  calls: string[]
}

export const E2E_WALLET_NAME = 'E2E Wallet'

export async function injectWallet(
  page: Page,
  options: { signer: LocalAccount; address?: Address; chainId?: number },
): Promise<InjectedWallet> {
  const address = options.address ?? options.signer.address
  const chainId = options.chainId ?? 31337
  const wallet: InjectedWallet = { address, calls: [] }

  await page.exposeFunction('__e2eWalletRequest', async (method: string, params: unknown[]) => {
    wallet.calls.push(method)
    switch (method) {
      case 'eth_requestAccounts':
      case 'eth_accounts':
        return [address]
      case 'eth_chainId':
        return toHex(chainId)
      case 'net_version':
        return String(chainId)
      case 'wallet_switchEthereumChain':
        return null
      case 'wallet_getPermissions':
      case 'wallet_requestPermissions':
        return [{ parentCapability: 'eth_accounts' }]
      case 'personal_sign': {
        const [data, account] = params as [Hex, Address]
        if (account.toLowerCase() !== address.toLowerCase()) throw new Error(`unknown account ${account}`)
        return options.signer.signMessage({ message: { raw: data } })
      }
      default:
        throw new Error(`E2E wallet does not support ${method}`)
    }
  })

  await page.addInitScript((name: string) => {
    type Listener = (...args: unknown[]) => void
    const listeners = new Map<string, Set<Listener>>()
    const bridge = (window as unknown as { __e2eWalletRequest(m: string, p: unknown[]): Promise<unknown> })
      .__e2eWalletRequest
    const provider = {
      isE2EWallet: true,
      async request({ method, params }: { method: string; params?: unknown[] }) {
        try {
          return await bridge(method, params ?? [])
        } catch (err) {
          const error = new Error(err instanceof Error ? err.message : String(err)) as Error & {
            code: number
          }
          error.code = 4200
          throw error
        }
      },
      on(event: string, fn: Listener) {
        if (!listeners.has(event)) listeners.set(event, new Set())
        listeners.get(event)!.add(fn)
        return provider
      },
      removeListener(event: string, fn: Listener) {
        listeners.get(event)?.delete(fn)
        return provider
      },
    }
    ;(window as unknown as { ethereum: unknown }).ethereum = provider
    const info = {
      uuid: '6f0b4b8e-3f3c-4f53-9a4a-2f1f3c1b9e01',
      name,
      icon: 'data:image/svg+xml,%3Csvg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 8 8"%3E%3Crect width="8" height="8" fill="%234f6ef0"/%3E%3C/svg%3E',
      rdns: 'org.example.e2e-wallet',
    }
    const announce = () =>
      window.dispatchEvent(
        new CustomEvent('eip6963:announceProvider', { detail: Object.freeze({ info, provider }) }),
      )
    window.addEventListener('eip6963:requestProvider', announce)
    announce()
  }, E2E_WALLET_NAME)

  return wallet
}
