import type { Hex } from 'viem'
import type { Rpc } from '../rpc/client'
import { isTransientRpcError } from '../rpc/client'

export interface DeployInfo {
  deployBlock: bigint | null
  creatorAddress: string | null
  deployTxHash: string | null
}

/**
 * Where a contract was deployed: the lowest block at which eth_getCode is
 * non-empty (binary search below the first block it emitted an event in,
 * or below the head when that is unknown),
 * then the creating transaction from that block's receipts, or from
 * trace_block when a factory created it. Needs an archive node; anything the
 * node cannot answer stays null.
 */
export async function findDeployInfo(
  rpc: Rpc,
  address: Hex,
  firstSeenBlock: bigint | null,
): Promise<DeployInfo> {
  const none: DeployInfo = { deployBlock: null, creatorAddress: null, deployTxHash: null }
  const hasCode = async (block: bigint) => {
    const code = await rpc.getCode(address, block)
    return code !== '0x' && code.length > 2
  }
  try {
    // Imported history may not know its blocks (0): then search below the head.
    const upper = firstSeenBlock && firstSeenBlock > 0n ? firstSeenBlock : await rpc.blockNumber()
    if (!(await hasCode(upper))) return none
    let lo = 0n
    let hi = upper
    while (lo < hi) {
      const mid = (lo + hi) / 2n
      if (await hasCode(mid)) hi = mid
      else lo = mid + 1n
    }
    const creation = await findCreation(rpc, address, lo)
    return { deployBlock: lo, ...creation }
  } catch (err) {
    if (isTransientRpcError(err)) throw err
    return none
  }
}

async function findCreation(rpc: Rpc, address: Hex, block: bigint) {
  const target = address.toLowerCase()
  const tag = `0x${block.toString(16)}`
  try {
    const receipts = await rpc.request<
      Array<{ contractAddress: Hex | null; from: Hex; transactionHash: Hex }>
    >('eth_getBlockReceipts', [tag])
    const direct = receipts?.find((r) => r.contractAddress?.toLowerCase() === target)
    if (direct)
      return { creatorAddress: direct.from.toLowerCase(), deployTxHash: direct.transactionHash.toLowerCase() }
  } catch (err) {
    if (isTransientRpcError(err)) throw err
  }
  try {
    const traces = await rpc.request<ParityTrace[]>('trace_block', [tag])
    const created = traces ? findCommittedCreate(traces, target) : undefined
    if (created) {
      return {
        creatorAddress: created.action.from?.toLowerCase() ?? null,
        deployTxHash: created.transactionHash?.toLowerCase() ?? null,
      }
    }
  } catch (err) {
    if (isTransientRpcError(err)) throw err
  }
  return { creatorAddress: null, deployTxHash: null }
}

/** One entry of trace_block (Parity/OpenEthereum format, also Erigon, Nethermind, reth and anvil). */
interface ParityTrace {
  /** 'create' for CREATE and CREATE2 alike (action.creationMethod tells them apart where present). */
  type: string
  action: { from?: Hex }
  result?: { address?: Hex } | null
  /** Set only on the frame that failed: its subtraces keep their results. */
  error?: string
  traceAddress?: number[]
  transactionHash?: Hex
  transactionPosition?: number
}

/**
 * The creation of `target` that took effect: a create frame whose own frame and
 * ancestors (same transaction, traceAddress a prefix of its own) did not fail. A
 * reverted transaction lists the contracts it created with their addresses, and the
 * same address can then be created for real later in the block (the factory's nonce
 * was rolled back too). The last committed one wins (a contract destroyed in its
 * creating transaction can be created again).
 */
function findCommittedCreate(traces: ParityTrace[], target: string): ParityTrace | undefined {
  const sameTx = (a: ParityTrace, b: ParityTrace) =>
    a.transactionHash !== undefined
      ? a.transactionHash === b.transactionHash
      : a.transactionPosition === b.transactionPosition
  const isAncestor = (outer: number[], inner: number[]) =>
    outer.length < inner.length && outer.every((step, i) => inner[i] === step)
  return traces.findLast(
    (t) =>
      t.type === 'create' &&
      !t.error &&
      t.result?.address?.toLowerCase() === target &&
      !traces.some(
        (other) =>
          other.error &&
          other.traceAddress &&
          t.traceAddress &&
          sameTx(other, t) &&
          isAncestor(other.traceAddress, t.traceAddress),
      ),
  )
}
