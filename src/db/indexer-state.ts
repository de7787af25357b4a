/**
 * The JSON columns of indexer_state: the indexer writes them, the status
 * endpoint reads them. Their shape is defined once, here; a reader still
 * tolerates a missing or older value (the column is plain jsonb).
 */

/** One entry of indexer_state.rpc_endpoints: an endpoint by its position in RPC_URL (never its URL: it may carry an API key). */
export interface RpcEndpointState {
  /** 1-based position in RPC_URL. */
  endpoint: number
  state: string
  /** The endpoint's last head, decimal; null before it answered. */
  head: string | null
}

/** A metadata host the queue has backed off (circuit open or half open). */
export interface BackedOffHostState {
  host: string
  state: string
  /** RFC 3339: when the host is tried again. */
  until: string
  /** The outcome that opened the circuit. */
  outcome: string
}

/** A collection backed off on one metadata host, whose other collections it still serves. */
export interface BackedOffCollectionState extends BackedOffHostState {
  /** The collection's address. */
  collection: string
}

/** indexer_state.metadata_queue: the metadata queue's last report. */
export interface MetadataQueueReport {
  /** Tokens waiting for a retry, by outcome. */
  backlog: Record<string, number>
  in_flight: number
  in_memory: number
  /** At most 100 of the backed-off hosts. */
  backed_off_hosts: BackedOffHostState[]
  backed_off_count: number
  /** At most 100 of the collections backed off on a host (absent in reports of older versions). */
  backed_off_collections?: BackedOffCollectionState[]
  backed_off_collections_count?: number
  /** RFC 3339: when the report was written. */
  at: string
}
