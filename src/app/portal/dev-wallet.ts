/**
 * Whether the portal offers the development wallet: only when `npm start`
 * runs its embedded anvil devnet (it marks the processes it starts with
 * NFT_EMBEDDED_DEVNET=1, src/start/main.ts) and the indexed chain is that
 * devnet's 31337. The web process cannot tell from RPC_URL alone: `npm start`
 * hands it the devnet's URL like any other node's.
 */
import type { Config } from '@/config/env'

export const DEVNET_CHAIN_ID = 31337

export function devWalletOffered(config: Pick<Config, 'CHAIN_ID' | 'NFT_EMBEDDED_DEVNET'>): boolean {
  return config.NFT_EMBEDDED_DEVNET === '1' && config.CHAIN_ID === DEVNET_CHAIN_ID
}
