import type { RawLog } from '../chain'
import {
  type DecodedLog,
  dataWords,
  logPosition,
  type PendingTransfer,
  pendingTransfer,
  wordToAddress,
  wordToUint,
} from './types'

/**
 * Largest ERC-2309 range expanded into rows. OpenZeppelin caps a batch at
 * 5,000; a bigger range is almost certainly hostile and would exhaust memory.
 */
export const MAX_CONSECUTIVE_RANGE = 250_000n

/**
 * ERC-2309 ConsecutiveTransfer(uint256 indexed fromTokenId, uint256 toTokenId,
 * address indexed fromAddress, address indexed toAddress): one event per token,
 * batch_index = offset from fromTokenId.
 */
export function decodeConsecutiveTransfer(log: RawLog): DecodedLog | null {
  if (log.topics.length !== 4 || log.data.length !== 2 + 64) return null
  const fromTokenId = wordToUint(log.topics[1]!)
  const from = wordToAddress(log.topics[2]!)
  const to = wordToAddress(log.topics[3]!)
  const toTokenId = wordToUint(dataWords(log.data)[0]!)
  if (fromTokenId === null || toTokenId === null || from === null || to === null) return null
  if (toTokenId < fromTokenId || toTokenId - fromTokenId >= MAX_CONSECUTIVE_RANGE) return null
  const position = logPosition(log)
  const count = Number(toTokenId - fromTokenId) + 1
  const events = new Array<PendingTransfer>(count)
  for (let offset = 0; offset < count; offset++) {
    events[offset] = pendingTransfer(position, from, to, fromTokenId + BigInt(offset), offset, 'ERC721')
  }
  return { kind: 'transfers', events }
}
