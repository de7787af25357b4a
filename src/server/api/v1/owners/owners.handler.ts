/**
 * GET /v1/owners/{address}/nfts: the tokens whose current owner is the
 * address, ordered across collections by (collection_address, token_id, id),
 * token ids compared as numbers (src/db/queries/tokens.ts). A burned token's
 * owner is the zero address, so an owner's list holds the tokens they hold now.
 * With `standard` (docs/api.md, "ERC-1155"): also or only the ERC-1155 tokens
 * of which the address holds a positive balance, in the same order and with
 * the same cursor, each with its `balance`. Extensions (docs/api.md,
 * "Ownership views"): `collection` (repeatable) keeps the listed collections'
 * tokens only; `at_block` lists the tokens held after that block (a snapshot
 * computed once per wallet, standard and block, kept in the process's
 * snapshot cache), with each token's state at that block and today's metadata.
 *
 * GET /v1/owners/{address}/collections and GET /v1/owners/{address}/transfers:
 * the wallet's collections (by address) and its transfers in and out (newest
 * first), both standards.
 */

import {
  type HoldingAtRow,
  selectOwnerCollections,
  selectOwnerHoldingsAt,
  selectOwnerTransfers,
  selectTokenStatesAt,
  selectTokensByIds,
} from '@/db/queries/owners'
import { selectOwnerTokens } from '@/db/queries/tokens'
import { snapshotBlock } from '@/server/api/read/at-block'
import type { ReadContext } from '@/server/api/read/context'
import { globalCoverage } from '@/server/api/read/coverage'
import { beforeKey, buildPage, pageLimit, safeInteger } from '@/server/api/read/page'
import { snapshotBasis, snapshotCache, snapshotKey } from '@/server/api/read/snapshot-cache'
import { HoldingColumns, type HoldingCursor } from '@/server/api/read/snapshot-columns'
import { apiStandard, type Standards, standardsOf } from '@/server/api/read/standard'
import { nftRowAtBlock, stateKey } from '@/server/api/v1/nfts/nft-at-block'
import { mediaOrigin, toNft } from '@/server/api/v1/nfts/nft-shape'
import { toTransfer, transferCursor } from '@/server/api/v1/transfers/transfer-shape'
import type {
  ListOwnerCollectionsInput,
  ListOwnerNftsInput,
  ListOwnerTransfersInput,
  OwnerCollection,
  OwnerCollectionPage,
  OwnerNftPage,
  OwnerTransferPage,
} from './owners.schema'

type After = { collection: string; tokenId: string; id: number }

export async function listOwnerNfts(ctx: ReadContext, input: ListOwnerNftsInput): Promise<OwnerNftPage> {
  const limit = pageLimit(input.limit)
  const standards = standardsOf(input.standard)
  const after: After | undefined =
    input.after_collection !== undefined && input.after_token_id !== undefined && input.after_id !== undefined
      ? { collection: input.after_collection, tokenId: input.after_token_id, id: input.after_id }
      : undefined
  if (input.at_block !== undefined)
    return ownerNftsAtBlock(ctx, input, input.at_block, standards, limit, after)
  const [rows, snapshot] = await Promise.all([
    selectOwnerTokens(ctx.db, {
      owner: input.address,
      after,
      rows: limit + 1,
      withDocument: input.include_metadata ?? false,
      withStandard: standards.extended,
      standard: standards.filter,
      collections: input.collection,
    }),
    ctx.snapshot(),
  ])
  const network = ctx.config.NETWORK
  const origin = mediaOrigin(ctx.config)
  return buildPage(
    rows,
    limit,
    (r) => toNft(r, network, origin, standards.extended),
    holdingCursor,
    globalCoverage(snapshot),
  )
}

async function ownerNftsAtBlock(
  ctx: ReadContext,
  input: ListOwnerNftsInput,
  atBlock: string,
  standards: Standards,
  limit: number,
  after: After | undefined,
): Promise<OwnerNftPage> {
  const snapshot = await ctx.snapshot()
  const coverage = globalCoverage(snapshot)
  const block = snapshotBlock(atBlock, snapshot, coverage)
  const owner = input.address
  // The history the request read: the holdings and their tokens' states are computed from it.
  const basis = snapshotBasis(ctx.config.NETWORK, snapshot)
  const holdings = await snapshotCache(ctx.db.pool).get(
    snapshotKey(snapshot, 'holdings', standards.filter, owner, block),
    async () =>
      HoldingColumns.of(
        await selectOwnerHoldingsAt(ctx.db, {
          owner,
          block,
          standard: standards.filter,
          head: snapshot.lastSeenBlock,
          since: snapshot.coverageStartBlock ?? 0n,
          basis,
        }),
      ),
    (columns) => columns.bytes,
    ctx.credential?.subject,
  )
  // Canonical, as the snapshot's token ids are (the cursor's value, however it was written).
  const cursor = after && {
    collection: after.collection,
    tokenId: BigInt(after.tokenId).toString(),
    id: after.id,
  }
  const page = pageOfHoldings(holdings, cursor, input.collection, limit + 1)
  const keys = page.map((h) => ({ collection: h.collection_address, tokenId: h.token_id, multi: h.multi }))
  const [rows, states] = await Promise.all([
    selectTokensByIds(ctx.db, { ids: page.map((h) => h.id), withDocument: input.include_metadata ?? false }),
    selectTokenStatesAt(ctx.db, { keys, block, basis }),
  ])
  const byKey = new Map(states.map((s) => [stateKey(s.collection_address, s.token_id), s]))
  const held = new Map(page.map((h) => [h.id, h.balance]))
  const network = ctx.config.NETWORK
  const origin = mediaOrigin(ctx.config)
  const atRows = rows.flatMap((r) => {
    const state = byKey.get(stateKey(r.collection_address, r.token_id))
    return state ? [nftRowAtBlock(r, state, held.get(r.id))] : []
  })
  return buildPage(
    atRows,
    limit,
    (r) => toNft(r, network, origin, standards.extended),
    (r) => ({ ...holdingCursor(r), at_block: atBlock }),
    coverage,
  )
}

/**
 * Up to `rows` holdings after the cursor, of the given collections only when
 * some are given: one binary search per collection (from the cursor's
 * collection on), then the collection's holdings in order.
 */
function pageOfHoldings(
  holdings: HoldingColumns,
  cursor: HoldingCursor | undefined,
  collections: string[] | undefined,
  rows: number,
): HoldingAtRow[] {
  if (collections === undefined) {
    const start = cursor ? holdings.firstAfter(cursor) : 0
    return holdings.slice(start, start + rows)
  }
  const out: HoldingAtRow[] = []
  const wanted = [...new Set(collections)].sort().filter((c) => !cursor || c >= cursor.collection)
  for (const collection of wanted) {
    const range = holdings.rangeOf(collection)
    const start = cursor && collection === cursor.collection ? holdings.firstAfter(cursor) : range.start
    out.push(...holdings.slice(start, Math.min(range.end, start + rows - out.length)))
    if (out.length >= rows) break
  }
  return out
}

export async function listOwnerCollections(
  ctx: ReadContext,
  input: ListOwnerCollectionsInput,
): Promise<OwnerCollectionPage> {
  const limit = pageLimit(input.limit)
  const [rows, snapshot] = await Promise.all([
    selectOwnerCollections(ctx.db, { owner: input.address, after: input.after_collection, rows: limit + 1 }),
    ctx.snapshot(),
  ])
  return buildPage(
    rows,
    limit,
    (r) => {
      const out: OwnerCollection = {
        collection: {
          address: r.collection_address,
          name: r.name ?? '',
          symbol: r.symbol ?? '',
          contract_type: apiStandard(r.standard),
        },
        token_count: r.token_count,
      }
      if (r.balance !== null) out.balance = r.balance
      return out
    },
    (r) => ({ after_collection: r.collection_address }),
    globalCoverage(snapshot),
  )
}

export async function listOwnerTransfers(
  ctx: ReadContext,
  input: ListOwnerTransfersInput,
): Promise<OwnerTransferPage> {
  const limit = pageLimit(input.limit)
  const [rows, snapshot] = await Promise.all([
    selectOwnerTransfers(ctx.db, {
      owner: input.address,
      direction: input.direction ?? 'all',
      before: beforeKey(input),
      rows: limit + 1,
    }),
    ctx.snapshot(),
  ])
  const network = ctx.config.NETWORK
  // Both standards: every record carries `amount` ('1' on ERC-721 rows).
  return buildPage(
    rows,
    limit,
    (r) => toTransfer(r, network, snapshot.lastSeenBlock, true),
    transferCursor,
    globalCoverage(snapshot),
  )
}

/** The cursor after a holding: the holdings' order (collection, token id, row id). */
function holdingCursor(r: { collection_address: string; token_id: string; id: string }) {
  return { after_collection: r.collection_address, after_token_id: r.token_id, after_id: safeInteger(r.id) }
}
