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
    const traces = await rpc.request<
      Array<{
        type: string
        action: { from?: Hex }
        result?: { address?: Hex } | null
        transactionHash?: Hex
      }>
    >('trace_block', [tag])
    const created = traces?.find((t) => t.type === 'create' && t.result?.address?.toLowerCase() === target)
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
