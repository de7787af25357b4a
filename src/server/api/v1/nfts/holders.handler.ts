/**
 * GET /v1/nfts/{address}/{tokenId}/owners (docs/api.md, "ERC-1155"): a
 * token's holders with their balances, balance descending then owner
 * ascending (bytewise), paged by (after_balance, after_owner). An ERC-1155
 * token's holders come from token_balances (positive balances only); an
 * ERC-721 token has one, its current owner with '1', and none once burned.
 * A new endpoint, so it serves both standards without the `standard`
 * parameter: no specification client reads it.
 */
import { selectTokenHolders } from '@/db/queries/tokens'
import type { ReadContext } from '@/server/api/read/context'
import { collectionCoverage } from '@/server/api/read/coverage'
import { buildPage, pageLimit } from '@/server/api/read/page'
import { historyOf } from '@/server/api/v1/collections/collection-shape'
import { ApiError } from '@/server/errors/api-error'
import type { ListTokenHoldersInput, TokenHolder, TokenHolderPage } from './holders.schema'

export async function listTokenHolders(
  ctx: ReadContext,
  input: ListTokenHoldersInput,
): Promise<TokenHolderPage> {
  const limit = pageLimit(input.limit)
  const after =
    input.after_balance !== undefined && input.after_owner !== undefined
      ? { balance: input.after_balance, owner: input.after_owner }
      : undefined
  const [rows, snapshot] = await Promise.all([
    selectTokenHolders(ctx.db, { address: input.address, tokenId: input.tokenId, after, rows: limit + 1 }),
    ctx.snapshot(),
  ])
  const token = rows[0]
  if (!token)
    throw new ApiError('NOT_FOUND', `No token ${input.tokenId} of collection ${input.address} is indexed.`)
  const holders: TokenHolder[] = token.multi
    ? rows.flatMap((r) =>
        r.owner !== null && r.balance !== null ? [{ owner: r.owner, balance: r.balance }] : [],
      )
    : erc721Holders(token, after)
  return buildPage(
    holders,
    limit,
    (h) => h,
    (h) => ({ after_balance: h.balance, after_owner: h.owner }),
    collectionCoverage(snapshot, historyOf(token)),
  )
}

/** An ERC-721 token's holder: its current owner with '1' (none once burned), if after the cursor. */
function erc721Holders(
  token: { current_owner: string; is_burned: boolean },
  after: { balance: string; owner: string } | undefined,
): TokenHolder[] {
  if (token.is_burned) return []
  const afterCursor =
    !after ||
    BigInt(after.balance) > 1n ||
    (BigInt(after.balance) === 1n && token.current_owner > after.owner)
  return afterCursor ? [{ owner: token.current_owner, balance: '1' }] : []
}
