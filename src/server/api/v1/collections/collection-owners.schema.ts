import { z } from 'zod'
import {
  address,
  afterTokenCountParam,
  atBlockParam,
  CURSOR_GROUPS,
  collectionOwnerCursor,
  decimalString,
  limitParam,
  pageOf,
  requireTogether,
} from '@/lib/schemas'

/** One holder of a collection (GET /v1/collections/{address}/owners). */
export const collectionOwner = z
  .object({
    owner: address,
    token_count: z
      .int()
      .min(1)
      .describe(
        "ERC-721: the collection's tokens the owner holds; ERC-1155: the collection's token ids of which the owner holds a positive balance.",
      ),
    balance: decimalString
      .describe("ERC-1155 collections only: the sum of the owner's balances over the collection's token ids.")
      .optional(),
  })
  .meta({
    id: 'CollectionOwner',
    example: { owner: '0x70997970c51812dc3a010c7d01b50e0d17dc79c8', token_count: 3 },
  })

export type CollectionOwner = z.infer<typeof collectionOwner>

export const collectionOwnerPage = pageOf(collectionOwner, collectionOwnerCursor).meta({
  id: 'CollectionOwnerPage',
})
export type CollectionOwnerPage = z.infer<typeof collectionOwnerPage>

export const listCollectionOwnersInput = z
  .strictObject({
    address: address.describe('Contract address, lowercase.'),
    limit: limitParam,
    after_token_count: afterTokenCountParam
      .describe(
        'Cursor: token count, copied from `next_page_params`; must be sent together with `after_owner`.',
      )
      .optional(),
    after_owner: address
      .describe(
        'Cursor: owner address, copied from `next_page_params`; must be sent together with `after_token_count`.',
      )
      .optional(),
    at_block: atBlockParam,
  })
  .superRefine((value, ctx) => requireTogether(value, CURSOR_GROUPS.collectionOwner, ctx))

export type ListCollectionOwnersInput = z.infer<typeof listCollectionOwnersInput>
