import { type Hex, hexToBytes, keccak256 } from 'viem'

/**
 * Whether a block's `logsBloom` (2,048 bits, three per item: the low 11 bits
 * of the first three byte pairs of the item's keccak256) may hold a log with
 * one of `topic0s` as its first topic; with none given, any log at all. A
 * bloom has no false negatives: false means the block has no such log.
 */
export function bloomMayHold(logsBloom: Hex, topic0s: readonly Hex[]): boolean {
  const bloom = hexToBytes(logsBloom)
  if (topic0s.length === 0) return bloom.some((byte) => byte !== 0)
  return topic0s.some((topic) => {
    const hash = hexToBytes(keccak256(topic))
    for (let i = 0; i < 6; i += 2) {
      const bit = ((hash[i]! << 8) | hash[i + 1]!) & 2047
      // Bit 0 is the lowest bit of the last byte.
      if ((bloom[255 - (bit >> 3)]! & (1 << (bit & 7))) === 0) return false
    }
    return true
  })
}

export const isLogsBloom = (v: unknown): v is Hex => typeof v === 'string' && /^0x[0-9a-fA-F]{512}$/.test(v)
