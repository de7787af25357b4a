/**
 * Accounts whose keys are public: anvil's (and Hardhat's) ten default
 * accounts, of the mnemonic "test test … junk". The first is the development
 * wallet's (src/components/portal/sign-in/dev-wallet.ts). On the embedded
 * devnet anyone may sign in as them, which is the point; anywhere else anyone
 * could too, so they are refused there: no sign-in, no session, and the keys
 * they created answer 401 — also when a devnet's database is later pointed at
 * a real chain. docs/auth.md, "Devnet accounts".
 */
import { devWalletOffered } from '@/app/portal/dev-wallet'
import type { Config } from '@/config/env'

/** Lowercase, as the service stores addresses (src/server/credentials/devnet-accounts.test.ts derives them). */
export const DEVNET_ACCOUNTS: ReadonlySet<string> = new Set([
  '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266',
  '0x70997970c51812dc3a010c7d01b50e0d17dc79c8',
  '0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc',
  '0x90f79bf6eb2c4f870365e785982e1f101e93b906',
  '0x15d34aaf54267db7d7c367839aaf71a00a2c6a65',
  '0x9965507d1a55bcc2695c58ba16fb37d819b0a4dc',
  '0x976ea74026e726554db657fa54763abd0c3a0aa9',
  '0x14dc79964da2c08b23698b3d3cc7ca32193d9955',
  '0x23618e81e3f5cdf7f54c3d65f7fbc0abf5b21e8f',
  '0xa0ee7a142d267c1f36714e4a8f75612f20a79720',
])

const NONE: ReadonlySet<string> = new Set()

/** The accounts refused by this process: the devnet accounts, except on the embedded devnet. */
export function refusedAccounts(
  config: Pick<Config, 'CHAIN_ID' | 'NFT_EMBEDDED_DEVNET'>,
): ReadonlySet<string> {
  return devWalletOffered(config) ? NONE : DEVNET_ACCOUNTS
}
