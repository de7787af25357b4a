/**
 * A viem transport over an Rpc (./client.ts): viem's actions (a contract
 * read, signature verification) go to RPC_URL's endpoints with the same
 * health ranking, failover and retries as the indexer's own requests.
 * docs/auth.md, "Signature verification".
 */
import { custom, type Transport } from 'viem'
import type { Rpc } from './client'

export function rpcTransport(rpc: Rpc): Transport {
  return custom(
    { request: ({ method, params }) => rpc.request(method, Array.isArray(params) ? params : []) },
    // The Rpc retries, on another endpoint when one can answer: viem does not again.
    { retryCount: 0 },
  )
}
