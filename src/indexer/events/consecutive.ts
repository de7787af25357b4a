import type { RawLog } from '../chain'
import { CONSECUTIVE_TRANSFER_TOPIC } from './topics'
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
 * Largest ERC-2309 range expanded into rows, and the most rows ERC-2309 logs
 * expand to in one block (docs/indexer.md, "Events"). OpenZeppelin caps a
 * batch at 5,000; more is almost certainly hostile and would exhaust memory.
 */
export const MAX_CONSECUTIVE_RANGE = 250_000n

/**
 * ERC-2309 ConsecutiveTransfer(uint256 indexed fromTokenId, uint256 toTokenId,
 * address indexed fromAddress, address indexed toAddress), or null when the
 * log is malformed or its range refused.
 */
function parseConsecutiveTransfer(log: RawLog) {
  if (log.topics.length !== 4 || log.data.length !== 2 + 64) return null
  const fromTokenId = wordToUint(log.topics[1]!)
  const from = wordToAddress(log.topics[2]!)
  const to = wordToAddress(log.topics[3]!)
  const toTokenId = wordToUint(dataWords(log.data)[0]!)
  if (fromTokenId === null || toTokenId === null || from === null || to === null) return null
  if (toTokenId < fromTokenId || toTokenId - fromTokenId >= MAX_CONSECUTIVE_RANGE) return null
  return { fromTokenId, count: Number(toTokenId - fromTokenId) + 1, from, to }
}

/** The rows a log expands to when it is a ConsecutiveTransfer (0 for any other log, or one refused). */
export function consecutiveRows(log: RawLog): number {
  if (log.topics[0]?.toLowerCase() !== CONSECUTIVE_TRANSFER_TOPIC) return 0
  return parseConsecutiveTransfer(log)?.count ?? 0
}

/** One event per token, batch_index = offset from fromTokenId. */
export function decodeConsecutiveTransfer(log: RawLog): DecodedLog | null {
  const parsed = parseConsecutiveTransfer(log)
  if (!parsed) return null
  const { fromTokenId, count, from, to } = parsed
  const position = logPosition(log)
  const events = new Array<PendingTransfer>(count)
  for (let offset = 0; offset < count; offset++) {
    events[offset] = pendingTransfer(position, from, to, fromTokenId + BigInt(offset), offset, 'ERC721')
  }
  return { kind: 'transfers', events }
}
