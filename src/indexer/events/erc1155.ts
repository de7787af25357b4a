import { decodeAbiParameters, type Hex } from 'viem'
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

/*
 * ERC-1155 (EIP-1155) events. Operator, from and to are indexed; ids and
 * values are in the data. Each id/value pair becomes its own transfer row,
 * batch_index = its position in the batch (0 for TransferSingle), so the
 * identity (transaction hash, log index, batch index) is the one ERC-2309
 * ranges use (docs/indexer.md, "ERC-1155").
 */

/** TransferSingle(address indexed operator, address indexed from, address indexed to, uint256 id, uint256 value). */
export function decodeTransferSingle(log: RawLog): DecodedLog | null {
  if (log.topics.length !== 4 || log.data.length !== 2 + 128) return null
  const from = wordToAddress(log.topics[2]!)
  const to = wordToAddress(log.topics[3]!)
  const [idWord, valueWord] = dataWords(log.data)
  const id = wordToUint(idWord!)
  const value = wordToUint(valueWord!)
  if (from === null || to === null || id === null || value === null) return null
  return { kind: 'transfers', events: [pendingTransfer(logPosition(log), from, to, id, 0, 'ERC1155', value)] }
}

/** TransferBatch(address indexed operator, address indexed from, address indexed to, uint256[] ids, uint256[] values). */
export function decodeTransferBatch(log: RawLog): DecodedLog | null {
  if (log.topics.length !== 4) return null
  const from = wordToAddress(log.topics[2]!)
  const to = wordToAddress(log.topics[3]!)
  if (from === null || to === null) return null
  const words = dataWords(log.data)
  if ((log.data.length - 2) % 64 !== 0 || words.length < 4) return null
  const ids = uintArrayAt(words, 0)
  const values = uintArrayAt(words, 1)
  if (ids === null || values === null || ids.length !== values.length) return null
  const position = logPosition(log)
  const events = new Array<PendingTransfer>(ids.length)
  for (let i = 0; i < ids.length; i++) {
    events[i] = pendingTransfer(position, from, to, ids[i]!, i, 'ERC1155', values[i]!)
  }
  return { kind: 'transfers', events }
}

/**
 * The uint256[] whose offset is in head word `head`: a length word, then the
 * elements. Null when the offset or length points outside the data (a
 * malformed or hostile log), so a bad log is skipped rather than misread.
 */
function uintArrayAt(words: string[], head: number): bigint[] | null {
  const offset = wordToUint(words[head]!)
  if (offset === null || offset % 32n !== 0n) return null
  const at = offset / 32n
  if (at >= BigInt(words.length)) return null
  const length = wordToUint(words[Number(at)]!)
  if (length === null || at + 1n + length > BigInt(words.length)) return null
  const out = new Array<bigint>(Number(length))
  for (let i = 0; i < out.length; i++) out[i] = BigInt(`0x${words[Number(at) + 1 + i]}`)
  return out
}

/** Longest URI event value kept; a longer one is skipped (the token keeps uri(id)). */
export const MAX_URI_EVENT_BYTES = 64 * 1024

/** URI(string value, uint256 indexed id): the token's metadata URI changed to `value`. */
export function decodeUri(log: RawLog): DecodedLog | null {
  if (log.topics.length !== 2 || log.data.length > 2 + 2 * (MAX_URI_EVENT_BYTES + 96)) return null
  const id = wordToUint(log.topics[1]!)
  if (id === null) return null
  let value: string
  try {
    ;[value] = decodeAbiParameters([{ type: 'string' }], log.data as Hex)
  } catch {
    return null
  }
  // PostgreSQL text holds no NUL, and no URI has one: skipped like an oversized value.
  if (value.includes('\u0000')) return null
  const { collection, blockNumber, logIndex, transactionHash } = logPosition(log)
  return {
    kind: 'metadata-update',
    event: {
      collection,
      blockNumber,
      fromTokenId: id,
      toTokenId: id,
      uri: { value, logIndex, transactionHash },
    },
  }
}
