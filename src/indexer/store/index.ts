/**
 * The indexer's write functions, for the indexer itself and for tests of
 * other layers that need a realistic database (the API tests fill it here
 * rather than with ad-hoc SQL, so derived state is always consistent).
 */
import type pg from 'pg'
import type { Hex } from 'viem'
import type { TransferEvent } from '../events/types'
import { storeMedia } from '../metadata/media-store'
import type { MetadataOutcome } from '../metadata/outcome'
import { withWriteTransaction } from './db'
import { rebuildTokens } from './derived-state'
import { ensureIndexerState } from './state'
import { tokenKeysOf } from './token-state'
import { collectionsOf, compareChainOrder, ensureCollections, insertTransfers } from './transfers'

export { type CommitContext, commitBatch, type IngestBatch } from './commit'
export { withWriteTransaction } from './db'
export { rollbackAfter } from './rollback'
export { addIndexedRange, ensureIndexerState, readIndexerState } from './state'

export interface TransferInput {
  collection: string
  tokenId: bigint | string
  from: string
  to: string
  /** 0 when the block is unknown (imported history). */
  blockNumber: bigint | number
  /** Date, or Unix seconds. */
  blockTimestamp: Date | number | bigint
  transactionHash: string
  logIndex: number
  batchIndex?: number
  blockHash?: string | null
  standard?: 'ERC721' | 'ERC721_LEGACY'
}

/**
 * Inserts transfers (idempotent on transaction_hash + log_index + batch_index)
 * with their collections, token states and collection counters, in one
 * transaction; rows may come in any order relative to stored ones.
 */
export async function writeTransfers(
  pool: pg.Pool,
  transfers: TransferInput[],
  options: { source?: 'rpc' | 'import' } = {},
): Promise<{ inserted: number }> {
  const events = transfers.map(toEvent).sort(compareChainOrder)
  return withWriteTransaction(pool, async (client) => {
    await ensureCollections(client, collectionsOf(events))
    const inserted = await insertTransfers(client, events, options.source ?? 'rpc')
    await rebuildTokens(client, tokenKeysOf(inserted))
    return { inserted: inserted.length }
  })
}

function toEvent(t: TransferInput): TransferEvent {
  const seconds =
    t.blockTimestamp instanceof Date
      ? BigInt(Math.floor(t.blockTimestamp.getTime() / 1000))
      : BigInt(t.blockTimestamp)
  return {
    collection: t.collection.toLowerCase() as Hex,
    tokenId: BigInt(t.tokenId),
    from: t.from.toLowerCase() as Hex,
    to: t.to.toLowerCase() as Hex,
    blockNumber: BigInt(t.blockNumber),
    blockHash: (t.blockHash?.toLowerCase() as Hex | undefined) ?? null,
    blockTimestamp: seconds,
    transactionHash: t.transactionHash.toLowerCase() as Hex,
    logIndex: t.logIndex,
    batchIndex: t.batchIndex ?? 0,
    standard: t.standard ?? 'ERC721',
  }
}

export interface CollectionInfo {
  name?: string
  symbol?: string | null
  description?: string | null
  imageUrl?: string | null
  contractUri?: string | null
  deployBlock?: bigint | number | null
  creatorAddress?: string | null
  deployTxHash?: string | null
}

/** What the metadata queue records for a collection (listed = name or symbol non-empty). */
export async function saveCollectionInfo(
  pool: pg.Pool,
  address: string,
  info: CollectionInfo,
): Promise<void> {
  await pool.query(
    `UPDATE collections SET name = coalesce($2, name), symbol = CASE WHEN $3::boolean THEN $4 ELSE symbol END,
            description = coalesce($5, description), image_url = coalesce($6, image_url),
            image_source = CASE WHEN $6::text IS NOT NULL THEN 'contract' ELSE image_source END,
            contract_uri = coalesce($7, contract_uri), deploy_block = coalesce($8, deploy_block),
            creator_address = coalesce($9, creator_address), deploy_tx_hash = coalesce($10, deploy_tx_hash),
            metadata_status = 'ok', updated_at = now()
      WHERE address = $1`,
    [
      address.toLowerCase(),
      info.name ?? null,
      info.symbol !== undefined,
      info.symbol ?? null,
      info.description ?? null,
      info.imageUrl ?? null,
      info.contractUri ?? null,
      info.deployBlock?.toString() ?? null,
      info.creatorAddress?.toLowerCase() ?? null,
      info.deployTxHash?.toLowerCase() ?? null,
    ],
  )
  await pool.query(
    `UPDATE collections SET listed = (name <> '' OR coalesce(symbol, '') <> '') WHERE address = $1`,
    [address.toLowerCase()],
  )
}

export interface TokenMetadataInput {
  status?: MetadataOutcome
  uri?: string | null
  metadata?: Record<string, unknown> | null
  name?: string | null
  imageUrl?: string | null
  /** Original media bytes to store (content-addressed under mediaDir) for imageUrl. */
  media?: { bytes: Buffer; mediaDir: string }
}

/** What the metadata queue records for a token; returns the stored media's SHA-256 when bytes were given. */
export async function saveTokenMetadata(
  pool: pg.Pool,
  token: { collection: string; tokenId: bigint | string },
  input: TokenMetadataInput,
): Promise<string | null> {
  let mediaSha256: string | null = null
  if (input.media && input.imageUrl) {
    mediaSha256 =
      (await storeMedia(pool, input.media.mediaDir, input.imageUrl, input.media.bytes))?.sha256 ?? null
  }
  await pool.query(
    `UPDATE tokens SET metadata_status = $3, metadata_uri = $4, metadata = $5::jsonb, name = $6, image_url = $7,
            media_sha256 = $8, metadata_attempts = metadata_attempts + 1, metadata_next_attempt_at = NULL,
            metadata_fetched_at = now(), updated_at = now()
      WHERE collection_address = $1 AND token_id = $2`,
    [
      token.collection.toLowerCase(),
      token.tokenId.toString(),
      input.status ?? 'ok',
      input.uri ?? null,
      input.metadata ? JSON.stringify(input.metadata) : null,
      input.name ?? null,
      input.imageUrl ?? null,
      mediaSha256,
    ],
  )
  return mediaSha256
}

export interface IndexerStatusInput {
  network: string
  chainId?: number
  startBlock?: number
  lastSeenBlock: bigint | number
  lastConfirmedBlock: bigint | number
  lastIndexedBlock?: bigint | number | null
  coverageStatus: 'unknown' | 'partial' | 'complete'
  coverageVerifiedAt?: Date | null
}

/** Sets indexer_state directly (fixtures for the status endpoint and coverage answers). */
export async function setIndexerStatus(pool: pg.Pool, s: IndexerStatusInput): Promise<void> {
  await ensureIndexerState(pool, {
    network: s.network,
    chainId: s.chainId ?? 31337,
    startBlock: s.startBlock ?? 0,
  })
  await pool.query(
    `UPDATE indexer_state SET last_seen_block = $2, last_confirmed_block = $3, last_indexed_block = $4,
            coverage_status = $5, coverage_verified_at = $6, updated_at = now()
      WHERE network = $1`,
    [
      s.network,
      s.lastSeenBlock.toString(),
      s.lastConfirmedBlock.toString(),
      (s.lastIndexedBlock ?? s.lastConfirmedBlock)?.toString() ?? null,
      s.coverageStatus,
      s.coverageVerifiedAt ?? (s.coverageStatus === 'complete' ? new Date() : null),
    ],
  )
}
