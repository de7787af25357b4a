import { toEventSelector } from 'viem'

export const TRANSFER_TOPIC = toEventSelector('Transfer(address,address,uint256)')
export const CONSECUTIVE_TRANSFER_TOPIC = toEventSelector(
  'ConsecutiveTransfer(uint256,uint256,address,address)',
)
export const METADATA_UPDATE_TOPIC = toEventSelector('MetadataUpdate(uint256)')
export const BATCH_METADATA_UPDATE_TOPIC = toEventSelector('BatchMetadataUpdate(uint256,uint256)')
export const CONTRACT_URI_UPDATED_TOPIC = toEventSelector('ContractURIUpdated()')
export const TRANSFER_SINGLE_TOPIC = toEventSelector(
  'TransferSingle(address,address,address,uint256,uint256)',
)
export const TRANSFER_BATCH_TOPIC = toEventSelector(
  'TransferBatch(address,address,address,uint256[],uint256[])',
)
export const URI_TOPIC = toEventSelector('URI(string,uint256)')

/** topic0 filter of every eth_getLogs request: all event shapes the indexer decodes. */
export const INDEXED_TOPICS = [
  [
    TRANSFER_TOPIC,
    CONSECUTIVE_TRANSFER_TOPIC,
    METADATA_UPDATE_TOPIC,
    BATCH_METADATA_UPDATE_TOPIC,
    CONTRACT_URI_UPDATED_TOPIC,
    TRANSFER_SINGLE_TOPIC,
    TRANSFER_BATCH_TOPIC,
    URI_TOPIC,
  ],
]
