import type { Hex } from 'viem'
import type { RawLog } from '../rpc/client'

export const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000'
export const MAX_UINT256 = 2n ** 256n - 1n

export type CollectionStandard = 'ERC721' | 'ERC721_LEGACY'

/** One ownership change of one token (an ERC-2309 range yields one per token). */
export interface TransferEvent {
  collection: Hex
  tokenId: bigint
  from: Hex
  to: Hex
  blockNumber: bigint
  blockHash: Hex | null
  /** Unix seconds. */
  blockTimestamp: bigint
  transactionHash: Hex
  logIndex: number
  /** 0, or the offset inside an ERC-2309 range. */
  batchIndex: number
  standard: CollectionStandard
}

/** ERC-4906: metadata of tokens [fromTokenId, toTokenId] changed. */
export interface MetadataUpdateEvent {
  collection: Hex
  fromTokenId: bigint
  toTokenId: bigint
  blockNumber: bigint
}

/** A decoded log before block timestamps are known. */
export type DecodedLog =
  | { kind: 'transfers'; events: Omit<TransferEvent, 'blockTimestamp'>[] }
  | { kind: 'legacy-transfer'; event: Omit<TransferEvent, 'blockTimestamp'> }
  | { kind: 'metadata-update'; event: MetadataUpdateEvent }

export type EventDecoder = (log: RawLog) => DecodedLog | null

export function eventType(from: string, to: string): 'mint' | 'burn' | 'transfer' {
  if (from === ZERO_ADDRESS) return 'mint'
  if (to === ZERO_ADDRESS) return 'burn'
  return 'transfer'
}

/** Position fields shared by every event of one log. */
export function logPosition(log: RawLog) {
  return {
    collection: log.address.toLowerCase() as Hex,
    blockNumber: BigInt(log.blockNumber),
    blockHash: log.blockHash ? (log.blockHash.toLowerCase() as Hex) : null,
    transactionHash: log.transactionHash.toLowerCase() as Hex,
    logIndex: Number(BigInt(log.logIndex)),
  }
}

/** A 32-byte word holding an address: the upper 12 bytes must be zero. */
export function wordToAddress(word: string): Hex | null {
  const hex = word.startsWith('0x') ? word.slice(2) : word
  if (hex.length !== 64 || !/^0{24}[0-9a-fA-F]{40}$/.test(hex)) return null
  return `0x${hex.slice(24).toLowerCase()}`
}

export function wordToUint(word: string): bigint | null {
  const hex = word.startsWith('0x') ? word.slice(2) : word
  if (hex.length !== 64 || !/^[0-9a-fA-F]{64}$/.test(hex)) return null
  return BigInt(`0x${hex}`)
}

/** Splits ABI data into 32-byte words (hex without 0x). */
export function dataWords(data: Hex): string[] {
  const hex = data.slice(2)
  const words: string[] = []
  for (let i = 0; i + 64 <= hex.length; i += 64) words.push(hex.slice(i, i + 64))
  return words
}
