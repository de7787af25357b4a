import { errorChain } from '../errors'
import { RpcRequestError } from './transport'

/**
 * Errors that say nothing about the request itself: worth retrying unchanged.
 * Every fault of the provider's transport is (rpc/transport.ts); of JSON-RPC
 * errors, limits (-32005, 429), internal errors (-32603) and blocks a node
 * behind the others does not have yet ("header not found", "unknown block").
 * A call that ran and failed (isExecutionFailure) is not, whatever its code.
 */
export function isTransientRpcError(err: unknown): boolean {
  for (const e of errorChain(err)) {
    if (e instanceof RpcRequestError) {
      // The same request would get the same answer: only a smaller one helps (rpc/get-logs.ts).
      if (e.kind === 'too_large') return false
      if (e.kind !== 'rpc') return true
      // Before the code test: revm-based nodes (anvil, reth) answer a halt with -32603.
      if (isExecutionFailure(e)) return false
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

/**
 * The call ran and failed: a revert, or a halt without one (an INVALID opcode, a bad jump, out of
 * gas: how contracts compiled before Solidity 0.4.10 answer an unknown function). Nodes word it
 * differently; none of it is worth asking again.
 */
const EXECUTION_FAILURE =
  /revert|invalid opcode|out of gas|outofgas|execution error|evm error|invalid ?(fe)?opcode|invalid ?jump|opcode ?not ?found|stack ?(underflow|overflow)/i

export function isExecutionFailure(err: unknown): boolean {
  for (const e of errorChain(err)) {
    const code = (e as { code?: unknown }).code
    if (code === 3 || EXECUTION_FAILURE.test(e.message)) return true
  }
  return false
}
