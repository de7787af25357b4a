/**
 * The chain client that verifies sign-in signatures (./siwe.ts): viem's
 * public client over every endpoint of RPC_URL, with the indexer's health
 * ranking, failover and retries (docs/auth.md, "Signature verification").
 */
import { createPublicClient } from 'viem'
import type { Config } from '@/config/env'
import type { Logger } from '@/config/logger'
import { createRpc, splitRpcUrls } from '@/indexer/rpc/client'
import { rpcTransport } from '@/indexer/rpc/viem-transport'
import { type SiweChainClient, SiweError } from './siwe'

let chainClient: { url: string; client: SiweChainClient } | undefined

/** The process's client on the indexed chain (one per RPC_URL value). */
export function siweChainClient(config: Pick<Config, 'RPC_URL'>, logger: Logger): SiweChainClient {
  const url = config.RPC_URL
  if (!url) throw new SiweError('CHAIN_UNAVAILABLE', 'RPC_URL is not set')
  if (chainClient?.url !== url) {
    // A person waits for the answer: a short time-out, and each endpoint asked about once.
    const rpc = createRpc({
      url,
      logger: logger.child({ component: 'siwe-rpc' }),
      timeoutMs: 10_000,
      retries: splitRpcUrls(url).length,
    })
    chainClient = { url, client: createPublicClient({ transport: rpcTransport(rpc) }) }
  }
  return chainClient.client
}
