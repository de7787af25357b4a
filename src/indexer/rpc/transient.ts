import { errorChain } from '../errors'
import { RpcRequestError } from './transport'

/**
 * Errors that say nothing about the request itself: worth retrying unchanged.
 * Every fault of the provider's transport is (rpc/transport.ts); of JSON-RPC
 * errors, limits (-32005, 429), internal errors (-32603) and blocks a node
 * behind the others does not have yet ("header not found", "unknown block").
 */
export function isTransientRpcError(err: unknown): boolean {
  for (const e of errorChain(err)) {
    if (e instanceof RpcRequestError) {
      // The same request would get the same answer: only a smaller one helps (rpc/get-logs.ts).
      if (e.kind === 'too_large') return false
      if (e.kind !== 'rpc') return true
      if (e.code === -32005 || e.code === -32603 || e.code === 429) return true
      return TRANSIENT_MESSAGE.test(e.message) || NOT_YET_MESSAGE.test(e.message)
    }
  }
  return false
}

/** The node's answer for a block it has not seen yet (geth, erigon, reth and their providers). */
const NOT_YET_MESSAGE = /header not found|unknown block|block not found/i

const TRANSIENT_MESSAGE = /rate limit|too many requests|try again|temporarily unavailable|internal error/i

/** A node that does not have the block yet (behind by a block or two). */
export const notYet = (err: unknown) =>
  err instanceof RpcRequestError && err.kind === 'rpc' && NOT_YET_MESSAGE.test(err.message)
