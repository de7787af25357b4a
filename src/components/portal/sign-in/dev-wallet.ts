/**
 * The development wallet: a wagmi connector that signs in the page itself
 * with anvil's first dev account, so a fresh `npm start` lets anyone try the
 * portal without a wallet extension. The key is anvil's well-known default
 * (mnemonic "test test … junk"): public knowledge, funded on every anvil
 * devnet and worthless anywhere else. The portal offers this connector only
 * when the server says the chain is its embedded devnet (docs/portal.md).
 */
import { custom, type EIP1193RequestFn, fromHex, type Hex, numberToHex } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { createConnector } from 'wagmi'

const ANVIL_FIRST_KEY: Hex = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80'

export const DEV_WALLET_ID = 'devnet-dev-wallet'
export const DEV_WALLET_NAME = 'Development wallet'

/** Everything is answered in the page: nothing goes to a node or another host. */
export function devWallet() {
  const account = privateKeyToAccount(ANVIL_FIRST_KEY)
  let connected = false

  return createConnector((config) => {
    let chainId = config.chains[0].id
    const request = (async ({ method, params }: { method: string; params?: unknown }) => {
      switch (method) {
        case 'eth_chainId':
          return numberToHex(chainId)
        case 'eth_accounts':
          return connected ? [account.address] : []
        case 'eth_requestAccounts':
          connected = true
          return [account.address]
        case 'wallet_switchEthereumChain': {
          const [{ chainId: wanted }] = params as [{ chainId: Hex }]
          chainId = fromHex(wanted, 'number')
          return null
        }
        case 'personal_sign': {
          const [data, from] = params as [Hex, Hex]
          if (from.toLowerCase() !== account.address.toLowerCase()) {
            throw new Error(`The development wallet holds no key for ${from}.`)
          }
          return account.signMessage({ message: { raw: data } })
        }
        default:
          throw new Error(`The development wallet does not support ${method}.`)
      }
    }) as EIP1193RequestFn
    const provider = custom({ request })({ retryCount: 0 })

    return {
      id: DEV_WALLET_ID,
      name: DEV_WALLET_NAME,
      type: 'devWallet',
      async connect() {
        await provider.request({ method: 'eth_requestAccounts' })
        return { accounts: [account.address] as never, chainId }
      },
      async disconnect() {
        connected = false
      },
      async getAccounts() {
        return connected ? [account.address] : []
      },
      async getChainId() {
        return chainId
      },
      async getProvider() {
        return provider
      },
      async isAuthorized() {
        return false
      },
      async switchChain({ chainId: wanted }) {
        const chain = config.chains.find((c) => c.id === wanted)
        if (!chain) throw new Error(`The development wallet knows no chain ${wanted}.`)
        chainId = wanted
        return chain
      },
      onAccountsChanged() {},
      onChainChanged() {},
      onDisconnect() {
        connected = false
      },
    }
  })
}
