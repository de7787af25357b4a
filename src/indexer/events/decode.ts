import type { RawLog } from '../chain'
import { decodeConsecutiveTransfer } from './consecutive'
import { decodeTransferBatch, decodeTransferSingle, decodeUri } from './erc1155'
import { decodeBatchMetadataUpdate, decodeContractUriUpdated, decodeMetadataUpdate } from './metadata-update'
import {
  BATCH_METADATA_UPDATE_TOPIC,
  CONSECUTIVE_TRANSFER_TOPIC,
  CONTRACT_URI_UPDATED_TOPIC,
  METADATA_UPDATE_TOPIC,
  TRANSFER_BATCH_TOPIC,
  TRANSFER_SINGLE_TOPIC,
  TRANSFER_TOPIC,
  URI_TOPIC,
} from './topics'
import { decodeLegacyTransfer, decodeStandardTransfer } from './transfer'
import type { DecodedLog } from './types'

/** Routes a log to the decoder of its shape; null for shapes that are not NFT events (e.g. ERC-20). */
export function decodeLog(log: RawLog): DecodedLog | null {
  if (log.removed) return null
  switch (log.topics[0]?.toLowerCase()) {
    case TRANSFER_TOPIC:
      return decodeStandardTransfer(log) ?? decodeLegacyTransfer(log)
    case CONSECUTIVE_TRANSFER_TOPIC:
      return decodeConsecutiveTransfer(log)
    case METADATA_UPDATE_TOPIC:
      return decodeMetadataUpdate(log)
    case BATCH_METADATA_UPDATE_TOPIC:
      return decodeBatchMetadataUpdate(log)
    case CONTRACT_URI_UPDATED_TOPIC:
      return decodeContractUriUpdated(log)
    case TRANSFER_SINGLE_TOPIC:
      return decodeTransferSingle(log)
    case TRANSFER_BATCH_TOPIC:
      return decodeTransferBatch(log)
    case URI_TOPIC:
      return decodeUri(log)
    default:
      return null
  }
}
