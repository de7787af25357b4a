import { describe, expect, it } from 'vitest'
import { DEV_WALLET_ID } from '@/components/portal/sign-in/dev-wallet'
import { makeWagmiConfig } from '@/components/portal/wagmi-config'
import { devWalletOffered } from './dev-wallet'

describe('the development wallet', () => {
  it('is offered on the embedded devnet only', () => {
    expect(devWalletOffered({ CHAIN_ID: 31337, NFT_EMBEDDED_DEVNET: '1' })).toBe(true)
    // Another chain, even when the marker is (wrongly) set.
    expect(devWalletOffered({ CHAIN_ID: 1, NFT_EMBEDDED_DEVNET: '1' })).toBe(false)
    expect(devWalletOffered({ CHAIN_ID: 11155111, NFT_EMBEDDED_DEVNET: '1' })).toBe(false)
    // 31337 behind a configured RPC_URL (a node of one's own): not the embedded devnet.
    expect(devWalletOffered({ CHAIN_ID: 31337, NFT_EMBEDDED_DEVNET: '0' })).toBe(false)
    expect(devWalletOffered({ CHAIN_ID: 31337 })).toBe(false)
  })

  it('is a connector of the portal only when the server offers it', () => {
    const ids = (devWallet: boolean) =>
      makeWagmiConfig({ chainId: devWallet ? 31337 : 1, network: 'x', devWallet }).connectors.map((c) => c.id)
    expect(ids(false)).not.toContain(DEV_WALLET_ID)
    expect(ids(true)).toContain(DEV_WALLET_ID)
  })

  it('signs a message that recovers to anvil’s first account', async () => {
    const config = makeWagmiConfig({ chainId: 31337, network: 'devnet', devWallet: true })
    const connector = config.connectors.find((c) => c.id === DEV_WALLET_ID)!
    const { accounts } = await connector.connect()
    expect(accounts[0]).toBe('0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266')
    const { recoverMessageAddress, toHex } = await import('viem')
    const provider = (await connector.getProvider()) as {
      request(a: { method: string; params: unknown[] }): Promise<`0x${string}`>
    }
    const signature = await provider.request({
      method: 'personal_sign',
      params: [toHex('hello'), accounts[0]],
    })
    expect(await recoverMessageAddress({ message: 'hello', signature })).toBe(accounts[0])
  })
})
