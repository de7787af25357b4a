import type { RawLog } from '../chain'
import { type DecodedLog, dataWords, logPosition, pendingTransfer, wordToAddress, wordToUint } from './types'

/**
 * Standard ERC-721 Transfer: from, to and tokenId all indexed (4 topics).
 * An ERC-20 Transfer has 3 topics (value in data), so topic count tells them apart.
 */
export function decodeStandardTransfer(log: RawLog): DecodedLog | null {
  if (log.topics.length !== 4) return null
  const from = wordToAddress(log.topics[1]!)
  const to = wordToAddress(log.topics[2]!)
  const tokenId = wordToUint(log.topics[3]!)
  if (from === null || to === null || tokenId === null) return null
  return {
    kind: 'transfers',
    events: [pendingTransfer(logPosition(log), from, to, tokenId, 0, 'ERC721')],
  }
}

/**
 * Pre-standard Transfer(address,address,uint256) with no indexed argument
 * (CryptoKitties era): 1 topic, 96 bytes of data. An old ERC-20 can emit the
 * same shape, so the contract must be classified before the event is kept.
 */
export function decodeLegacyTransfer(log: RawLog): DecodedLog | null {
  if (log.topics.length !== 1 || log.data.length !== 2 + 192) return null
  const [fromWord, toWord, idWord] = dataWords(log.data)
  const from = wordToAddress(fromWord!)
  const to = wordToAddress(toWord!)
  const tokenId = wordToUint(idWord!)
  if (from === null || to === null || tokenId === null) return null
  return {
    kind: 'legacy-transfer',
    event: pendingTransfer(logPosition(log), from, to, tokenId, 0, 'ERC721_LEGACY'),
  }
}
