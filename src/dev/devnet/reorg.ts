/**
 * A real chain reorganisation on anvil: the last `depth` blocks are rolled back and replaced by
 * blocks with other transactions, at the same heights and timestamps — so block hashes change,
 * the dropped blocks' transfers disappear and different ones take their place.
 *
 * (anvil_reorg does this in one call but gives the new blocks the common ancestor's timestamp
 * and leaves the chain clock behind; rolling back and mining by hand keeps time realistic.)
 */
import type { Address, Hex } from 'viem'
import type { DevnetClients } from './collections'
import { withMiningPaused } from './mining'

export type ReorgResult = {
  depth: number
  /** The last block both chains share. */
  commonAncestor: bigint
  replaced: { number: bigint; oldHash: Hex; newHash: Hex }[]
}

export type ReorgOptions = {
  depth: number
  /** Funded accounts; a small value transfer between two of them goes into every new block. */
  accounts: Address[]
  /** Interval mining to restore afterwards, in seconds; undefined: the chain was automining. */
  blockTimeSeconds?: number
  /** Sends (without waiting for receipts) extra transactions for new block `index` (0-based). */
  sendReplacementTransactions?: (index: number) => Promise<void>
}

export async function reorgChain(clients: DevnetClients, options: ReorgOptions): Promise<ReorgResult> {
  const { depth } = options
  if (!Number.isInteger(depth) || depth < 1)
    throw new Error(`reorg depth must be a positive integer, got ${depth}`)

  return withMiningPaused(clients, options.blockTimeSeconds, async () => {
    const head = await clients.public.getBlockNumber()
    if (head <= BigInt(depth)) throw new Error(`chain too short (head ${head}) for a reorg of depth ${depth}`)
    const commonAncestor = head - BigInt(depth)
    const oldBlocks = await Promise.all(
      Array.from({ length: depth }, (_, i) =>
        clients.public.getBlock({ blockNumber: commonAncestor + BigInt(i + 1) }),
      ),
    )

    // Transactions still waiting in the pool carry nonces of the old chain; after the rollback
    // they would wait forever behind the dropped ones and block their senders. Like a mempool
    // that lost them, the node forgets them.
    await clients.test.request({ method: 'anvil_dropAllTransactions', params: [] } as never)
    await clients.test.request({ method: 'anvil_rollback', params: [depth] } as never)
    for (let i = 0; i < depth; i++) {
      await options.sendReplacementTransactions?.(i).catch(() => undefined)
      await sendMarkerTransfer(clients, options.accounts)
      // Same timestamp as the block it replaces, like a competing block for the same slot.
      await clients.test.request({
        method: 'evm_mine',
        params: [{ timestamp: Number(oldBlocks[i]!.timestamp), blocks: 1 }],
      } as never)
    }

    const newBlocks = await Promise.all(
      oldBlocks.map((b) => clients.public.getBlock({ blockNumber: b.number })),
    )
    const replaced = oldBlocks.map((old, i) => ({
      number: old.number,
      oldHash: old.hash,
      newHash: newBlocks[i]!.hash,
    }))
    const unchanged = replaced.find((r) => r.oldHash === r.newHash)
    if (unchanged) throw new Error(`reorg left block ${unchanged.number} unchanged`)
    return { depth, commonAncestor, replaced }
  })
}

/** A value transfer with a random amount: the new block can never equal the old one. */
async function sendMarkerTransfer(clients: DevnetClients, accounts: Address[]) {
  const from = accounts[accounts.length - 1]!
  const to = accounts[Math.floor(Math.random() * (accounts.length - 1))]!
  await clients.wallet.sendTransaction({
    account: from,
    to,
    value: BigInt(1 + Math.floor(Math.random() * 1_000_000)),
    chain: null,
  })
}
