/**
 * A token row as it was after a past block (docs/api.md, "Snapshots"): the
 * token's state fields — owner, burned, transfer count, and the ERC-1155
 * supply, holder count and sole holder — come from its transfers up to the
 * block (selectTokenStatesAt); its metadata fields are today's.
 */
import type { TokenStateAtRow } from '@/db/queries/owners'
import type { NftRow } from '@/db/queries/tokens'
import { ZERO_ADDRESS } from '@/lib/schemas'

export function nftRowAtBlock(row: NftRow, state: TokenStateAtRow, balance?: string): NftRow {
  const multi = state.total_supply !== null
  const out: NftRow = {
    ...row,
    current_owner: multi ? ZERO_ADDRESS : (state.last_to ?? ZERO_ADDRESS),
    is_burned: multi ? BigInt(state.total_supply!) <= 0n : state.last_to === ZERO_ADDRESS,
    transfer_count: state.transfer_count,
    total_supply: state.total_supply,
    holder_count: state.holder_count,
    sole_holder: state.sole_holder,
  }
  if (balance !== undefined) out.balance = balance
  return out
}

/** The key selectTokenStatesAt answers under. */
export const stateKey = (collection: string, tokenId: string) => `${collection}|${tokenId}`
