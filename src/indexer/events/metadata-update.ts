import type { RawLog } from '../chain'
import { type DecodedLog, dataWords, logPosition, wordToUint } from './types'

/** ERC-4906 MetadataUpdate(uint256 _tokenId): arguments are not indexed. */
export function decodeMetadataUpdate(log: RawLog): DecodedLog | null {
  if (log.topics.length !== 1 || log.data.length !== 2 + 64) return null
  const tokenId = wordToUint(dataWords(log.data)[0]!)
  if (tokenId === null) return null
  const { collection, blockNumber } = logPosition(log)
  return {
    kind: 'metadata-update',
    event: { collection, blockNumber, fromTokenId: tokenId, toTokenId: tokenId },
  }
}

/** ERC-7572 ContractURIUpdated(): the collection's own metadata changed (no tokens named). */
export function decodeContractUriUpdated(log: RawLog): DecodedLog | null {
  if (log.topics.length !== 1 || log.data !== '0x') return null
  const { collection, blockNumber } = logPosition(log)
  return {
    kind: 'metadata-update',
    event: { collection, blockNumber, fromTokenId: 0n, toTokenId: 0n, contract: true },
  }
}

/** ERC-4906 BatchMetadataUpdate(uint256 _fromTokenId, uint256 _toTokenId). */
export function decodeBatchMetadataUpdate(log: RawLog): DecodedLog | null {
  if (log.topics.length !== 1 || log.data.length !== 2 + 128) return null
  const [a, b] = dataWords(log.data)
  const fromTokenId = wordToUint(a!)
  const toTokenId = wordToUint(b!)
  if (fromTokenId === null || toTokenId === null || toTokenId < fromTokenId) return null
  const { collection, blockNumber } = logPosition(log)
  return { kind: 'metadata-update', event: { collection, blockNumber, fromTokenId, toTokenId } }
}
