import type { Hex } from 'viem'

/* What the node answers, as the indexer's parts pass it on (rpc reads it, store and sync use it). */

export interface RpcBlock {
  number: bigint
  hash: Hex
  parentHash: Hex
  timestamp: bigint
  /** Which addresses and topics the block's logs may hold (rpc/logs-bloom.ts); absent when not answered. */
  logsBloom?: Hex
}

/** A log as the node returns it (hex quantities), before any decoding. */
export interface RawLog {
  address: Hex
  topics: Hex[]
  data: Hex
  blockNumber: Hex
  blockHash: Hex
  transactionHash: Hex
  logIndex: Hex
  /** Returned by newer nodes; saves a header request when present. */
  blockTimestamp?: Hex
  removed?: boolean
}
