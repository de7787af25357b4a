/**
 * A verified batch of transfers for tests that write history through the
 * indexer's commit (src/indexer/store/commit.ts) without a chain: blocks
 * `from`..`to`, the last one recorded with a hash made from its number
 * (or `hash`), confirmed up to two blocks below it.
 */
import type { Hex } from 'viem'
import type { TransferEvent } from '@/indexer/events/types'
import type { IngestBatch } from '@/indexer/store/commit'

export function verifiedBatch(from: bigint, to: bigint, transfers: TransferEvent[], hash?: Hex): IngestBatch {
  return {
    fromBlock: from,
    toBlock: to,
    transfers,
    metadataUpdates: [],
    verified: true,
    blocks: [
      {
        number: to,
        hash: hash ?? `0x${to.toString(16).padStart(64, '0')}`,
        parentHash: '0x00',
        timestamp: 1n,
      },
    ],
    lastSeenBlock: to,
    chainConfirmedBlock: to - 2n,
  }
}
