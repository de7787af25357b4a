/**
 * GET /v1/nfts/{address}/{tokenId} and GET /v1/collections/{address}/nfts.
 *
 * A collection's tokens are listed in token order: (token_id, id) ascending,
 * token ids compared as numbers (src/db/queries/tokens.ts).
 */

import { selectCollection } from '@/db/queries/collections'
import { selectTokenStatesAt } from '@/db/queries/owners'
import { selectCollectionTokensByRarity } from '@/db/queries/rarity'
import { type NftRow, selectCollectionTokens, selectToken, selectTokenDocument } from '@/db/queries/tokens'
import type { StandardParam } from '@/lib/schemas'
import { snapshotBlock } from '@/server/api/read/at-block'
import type { ReadContext } from '@/server/api/read/context'
import { collectionCoverage } from '@/server/api/read/coverage'
import { buildPage, pageLimit, safeInteger } from '@/server/api/read/page'
import { snapshotBasis } from '@/server/api/read/snapshot-cache'
import { assertStandardServed, type Standards, standardsOf } from '@/server/api/read/standard'
import { historyOf } from '@/server/api/v1/collections/collection-shape'
import { nftRowAtBlock } from '@/server/api/v1/nfts/nft-at-block'
import { mediaOrigin, toNft } from '@/server/api/v1/nfts/nft-shape'
import { ApiError } from '@/server/errors/api-error'
import type { GetNftInput, ListCollectionNftsInput, Nft, NftMetadata, NftPage } from './nft.schema'
import { containmentDocuments, traitFilters } from './trait-filter'

export async function getNft(ctx: ReadContext, input: GetNftInput): Promise<Nft> {
  const standards = standardsOf(input.standard)
  const atBlock = input.at_block
  const [row, collection, snapshot] = await Promise.all([
    selectToken(ctx.db, {
      address: input.address,
      tokenId: input.tokenId,
      withDocument: input.include_metadata ?? false,
      // At a block, the ERC-1155 fields are the block's (nftRowAtBlock).
      withStandard: standards.extended && atBlock === undefined,
    }),
    atBlock === undefined ? undefined : selectCollection(ctx.db, input.address),
    atBlock === undefined ? undefined : ctx.snapshot(),
  ])
  if (!row) {
    throw new ApiError('NOT_FOUND', `No token ${input.tokenId} of collection ${input.address} is indexed.`)
  }
  assertStandardServed(
    standards,
    row.collection_standard,
    `Token ${input.tokenId} of collection ${input.address}`,
  )
  if (atBlock === undefined || !snapshot)
    return toNft(row, ctx.config.NETWORK, mediaOrigin(ctx.config), standards.extended)
  // at_block (docs/api.md, "Snapshots"): the token's state after that block, today's metadata.
  const coverage = collectionCoverage(snapshot, collection ? historyOf(collection) : null)
  const block = snapshotBlock(atBlock, snapshot, coverage)
  // Its stored transfer count sends a long history straight to the back-from-now statement.
  const [state] = await selectTokenStatesAt(ctx.db, {
    keys: [
      {
        collection: input.address,
        tokenId: row.token_id,
        multi: row.collection_standard === 'ERC1155',
        transfers: row.transfer_count,
      },
    ],
    block,
    basis: snapshotBasis(ctx.config.NETWORK, snapshot),
  })
  if (!state)
    throw new ApiError(
      'NOT_FOUND',
      `Token ${input.tokenId} of collection ${input.address} did not exist yet at block ${atBlock} (no transfer of it up to that block).`,
    )
  return toNft(nftRowAtBlock(row, state), ctx.config.NETWORK, mediaOrigin(ctx.config), standards.extended)
}

/** The document as fetched (token_documents): 404 when the token is unknown or has none. */
export async function getNftMetadata(
  ctx: ReadContext,
  input: { address: string; tokenId: string; standard?: StandardParam | undefined },
): Promise<NftMetadata> {
  const row = await selectTokenDocument(ctx.db, input)
  if (!row) {
    throw new ApiError(
      'NOT_FOUND',
      `No metadata document of token ${input.tokenId} of collection ${input.address} is stored.`,
    )
  }
  assertStandardServed(
    standardsOf(input.standard),
    row.collection_standard,
    `Token ${input.tokenId} of collection ${input.address}`,
  )
  return {
    collection_address: row.collection_address,
    token_id: row.token_id,
    document: row.document,
    source_uri: row.source_uri,
    fetched_at: row.fetched_at,
    metadata_status: row.metadata_status,
  }
}

export async function listCollectionNfts(ctx: ReadContext, input: ListCollectionNftsInput): Promise<NftPage> {
  const limit = pageLimit(input.limit)
  const standards = standardsOf(input.standard)
  const includeBurned = input.include_burned ?? false
  const cursor =
    input.after_token_id !== undefined && input.after_id !== undefined
      ? { tokenId: input.after_token_id, id: input.after_id }
      : undefined
  const after = cursor && { tokenId: BigInt(cursor.tokenId), id: BigInt(cursor.id) }
  const traits = input.trait && traitFilters(input.trait).map(containmentDocuments)
  if (input.sort === 'rarity') {
    if (includeBurned)
      throw new ApiError(
        'INVALID_ARGUMENT',
        'sort=rarity ranks tokens that are not burned: include_burned=true cannot be combined with it.',
      )
    return listByRarity(ctx, input, { limit, cursor, traits, extended: standards.extended })
  }
  // One round trip: the collection (for names and coverage) and the page.
  // No row at all: the collection is unknown.
  const [rows, snapshot] = await Promise.all([
    selectCollectionTokens(ctx.db, {
      address: input.address,
      includeBurned,
      after: cursor,
      rows: limit + 1,
      withDocument: input.include_metadata ?? false,
      withStandard: standards.extended,
      traits,
    }),
    ctx.snapshot(),
  ])
  assertCollectionServed(standards, rows[0], input.address)
  const coverage = collectionCoverage(snapshot, rows[0] ? historyOf(rows[0]) : null)
  // With burned tokens the page may start with the cursor's own token: dropped here.
  const tokens = (rows.filter((r) => r.id !== null) as NftRow[]).filter(
    (r) =>
      !after ||
      BigInt(r.token_id) > after.tokenId ||
      (BigInt(r.token_id) === after.tokenId && BigInt(r.id) > after.id),
  )
  const network = ctx.config.NETWORK
  const origin = mediaOrigin(ctx.config)
  return buildPage(
    tokens,
    limit,
    (r) => toNft(r, network, origin, standards.extended),
    (r) => ({ after_token_id: r.token_id, after_id: safeInteger(r.id) }),
    coverage,
  )
}

/** A known collection of a standard the request does not serve: 404 (an unknown one gives an empty page). */
function assertCollectionServed(
  standards: Standards,
  first: { collection_standard?: string | null } | undefined,
  address: string,
): void {
  if (first) assertStandardServed(standards, first.collection_standard, `Collection ${address}`)
}

/** sort=rarity (src/db/queries/rarity.ts): ranked on read, paged with the same cursor. */
async function listByRarity(
  ctx: ReadContext,
  input: ListCollectionNftsInput,
  page: {
    limit: number
    cursor: { tokenId: string; id: number } | undefined
    traits: string[][] | undefined
    extended: boolean
  },
): Promise<NftPage> {
  const [rows, snapshot] = await Promise.all([
    selectCollectionTokensByRarity(ctx.db, {
      address: input.address,
      after: page.cursor,
      rows: page.limit + 1,
      withDocument: input.include_metadata ?? false,
      withStandard: page.extended,
      traits: page.traits,
    }),
    ctx.snapshot(),
  ])
  assertCollectionServed(standardsOf(input.standard), rows[0], input.address)
  const coverage = collectionCoverage(snapshot, rows[0] ? historyOf(rows[0]) : null)
  const network = ctx.config.NETWORK
  const origin = mediaOrigin(ctx.config)
  return buildPage(
    rows.filter((r) => r.id !== null) as Array<NftRow & { rarity_score: string; rarity_rank: string }>,
    page.limit,
    (r) => toNft(r, network, origin, page.extended),
    (r) => ({ after_token_id: r.token_id, after_id: safeInteger(r.id) }),
    coverage,
  )
}
