import { z } from 'zod'
import {
  address,
  balanceString,
  CURSOR_GROUPS,
  decimalString,
  holderCursor,
  limitParam,
  pageOf,
  requireTogether,
  tokenId,
} from '@/lib/schemas'

/** One holder of a token (GET /v1/nfts/{address}/{tokenId}/owners). */
export const tokenHolder = z
  .object({
    owner: address,
    balance: decimalString.describe("How many of the token the owner holds (ERC-721: '1')."),
  })
  .meta({
    id: 'TokenHolder',
    example: { owner: '0x70997970c51812dc3a010c7d01b50e0d17dc79c8', balance: '12' },
  })

export type TokenHolder = z.infer<typeof tokenHolder>

export const tokenHolderPage = pageOf(tokenHolder, holderCursor).meta({ id: 'TokenHolderPage' })
export type TokenHolderPage = z.infer<typeof tokenHolderPage>

export const listTokenHoldersInput = z
  .strictObject({
    address: address.describe('Contract address, lowercase.'),
    tokenId: tokenId.describe('Decimal token id, 1 to 78 digits.'),
    limit: limitParam,
    after_balance: balanceString
      .describe(
        'Cursor: balance (decimal, 1 to 155 digits), copied from `next_page_params`; must be sent together with `after_owner`.',
      )
      .optional(),
    after_owner: address
      .describe(
        'Cursor: owner address, copied from `next_page_params`; must be sent together with `after_balance`.',
      )
      .optional(),
  })
  .superRefine((value, ctx) => requireTogether(value, CURSOR_GROUPS.holder, ctx))

export type ListTokenHoldersInput = z.infer<typeof listTokenHoldersInput>
