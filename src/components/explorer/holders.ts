/**
 * The arithmetic of a collection's holders list (docs/explorer.md, "Holders"): what a holder's
 * share is a share of, and the block a snapshot is asked for. Pure, so it is unit-tested.
 */
import type { CollectionOwner } from '@/client'

/** The longest `at_block` sent: the API refuses anything above 2^63 − 1 (19 digits) anyway. */
const AT_BLOCK_MAX_LENGTH = 40

/**
 * The `at_block` of the page's address as typed: trimmed, the first when repeated, null when
 * empty. Not checked further: the API says why a block is refused (malformed, not confirmed,
 * not covered), and the page shows its message.
 */
export function atBlockParam(value: string | string[] | undefined): string | null {
  const first = Array.isArray(value) ? value[0] : value
  const trimmed = (first ?? '').trim().slice(0, AT_BLOCK_MAX_LENGTH)
  return trimmed === '' ? null : trimmed
}

/** What a holder's share counts: tokens (ERC-721) or units, the summed balances (ERC-1155). */
export function holdingOf(holder: CollectionOwner, edition: boolean): bigint {
  try {
    return BigInt(edition ? (holder.balance ?? '0') : holder.token_count)
  } catch {
    return 0n
  }
}

/**
 * The total a share is of: everything the collection's holders hold — its tokens not burned
 * (ERC-721), or the units of all its ids (ERC-1155).
 *  - Every holder listed (the last page read): the sum over them, so the shares add up to 100 %.
 *  - Otherwise, for the current holders of an ERC-721 collection: the collection's
 *    `total_supply` (its tokens not burned, each of which has a holder).
 *  - Otherwise unknown (null): the API gives no total of units, nor any total at a past block.
 */
export function holdingsTotal(options: {
  holders: CollectionOwner[]
  complete: boolean
  edition: boolean
  atBlock: string | null
  totalSupply: string | undefined
}): bigint | null {
  const { holders, complete, edition, atBlock, totalSupply } = options
  if (complete) return holders.reduce((sum, h) => sum + holdingOf(h, edition), 0n)
  if (!edition && atBlock === null && totalSupply !== undefined) {
    try {
      return BigInt(totalSupply)
    } catch {
      return null
    }
  }
  return null
}

/** `part` of `total` as a percentage for a table cell: "12.5%", "0.42%", "<0.01%"; null without a total. */
export function formatShare(part: bigint, total: bigint | null): string | null {
  if (total === null || total <= 0n) return null
  // Hundredths of a percent, rounded half up, in integers: balances can exceed 2^53.
  const hundredths = (part * 20_000n + total) / (2n * total)
  if (part > 0n && hundredths === 0n) return '<0.01%'
  const whole = hundredths / 100n
  const fraction = hundredths % 100n
  if (whole >= 10n) {
    // One decimal from ten percent up.
    const tenths = (part * 2_000n + total) / (2n * total)
    return `${tenths / 10n}.${tenths % 10n}%`
  }
  return `${whole}.${fraction.toString().padStart(2, '0')}%`
}
