/**
 * The JSON form of a collection row (src/db/queries/collections.ts). Counters
 * and ids leave PostgreSQL as text and stay strings (never JS numbers).
 */

import type { CollectionRow } from '@/db/queries/collections'
import { apiStandard } from '@/server/api/read/standard'
import type { Collection } from '@/server/api/v1/collections/collection.schema'

export function toCollection(row: CollectionRow, network: string): Collection {
  const out: Collection = {
    contract_address: row.address,
    network,
    name: row.name,
    symbol: row.symbol,
    description: row.description,
    image_url: row.image_url,
    contract_type: apiStandard(row.standard),
    total_supply: row.total_supply,
    unique_holders: row.unique_holders,
    total_transfers: row.total_transfers,
    deploy_tx_hash: row.deploy_tx_hash,
    created_at: row.created_at,
  }
  if (row.creator_address !== null) out.creator_address = row.creator_address
  return out
}

export function historyOf(row: { deploy_block: string | null; first_seen_block: string | null }) {
  return {
    deployBlock: row.deploy_block === null ? null : BigInt(row.deploy_block),
    firstSeenBlock: row.first_seen_block === null ? null : BigInt(row.first_seen_block),
  }
}
