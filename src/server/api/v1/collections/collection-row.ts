/**
 * The collection columns every endpoint reads, and their JSON form. Counters
 * and ids leave PostgreSQL as text and stay strings (never JS numbers).
 */

import { isoSql, microsSql } from '@/server/api/read/page'
import type { Collection } from '@/server/api/v1/collections/collection.schema'

/** Columns of `collections` aliased `c`. */
export const COLLECTION_COLUMNS = `c.id::text AS id, c.address, c.name, c.symbol, c.description, c.image_url,
  c.total_supply::text AS total_supply, c.unique_holders::text AS unique_holders,
  c.total_transfers::text AS total_transfers, c.creator_address, c.deploy_tx_hash,
  ${isoSql('c.created_at')} AS created_at, ${microsSql('c.created_at')} AS created_us,
  c.deploy_block::text AS deploy_block, c.first_seen_block::text AS first_seen_block`

export interface CollectionRow {
  id: string
  address: string
  name: string
  symbol: string | null
  description: string | null
  image_url: string | null
  total_supply: string
  unique_holders: string
  total_transfers: string
  creator_address: string | null
  deploy_tx_hash: string | null
  created_at: string
  created_us: string
  deploy_block: string | null
  first_seen_block: string | null
}

export function toCollection(row: CollectionRow, network: string): Collection {
  const out: Collection = {
    contract_address: row.address,
    network,
    name: row.name,
    symbol: row.symbol,
    description: row.description,
    image_url: row.image_url,
    contract_type: 'ERC721',
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
