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
