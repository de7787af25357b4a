import { z } from 'zod'
import {
  address,
  afterCollectionParam,
  integerParam,
  limitParam,
  ownerCursor,
  pageOf,
  requireTogether,
  standardParam,
  tokenId,
} from '@/lib/schemas'
import { includeMetadataParam, nft } from '@/server/api/v1/nfts/nft.schema'

export const listOwnerNftsInput = z
  .strictObject({
    address: address.describe('Owner address, lowercase.'),
    limit: limitParam,
    after_collection: afterCollectionParam,
    after_token_id: tokenId
      .describe(
        'Cursor: token id, copied from `next_page_params`; required together with `after_collection` and `after_id`.',
      )
      .optional(),
    after_id: integerParam(1)
      .describe(
        'Cursor: row id, copied from `next_page_params`; required together with `after_collection` and `after_token_id`.',
      )
      .optional(),
    include_metadata: includeMetadataParam,
    standard: standardParam,
  })
  .superRefine((value, ctx) =>
    requireTogether(value, ['after_collection', 'after_token_id', 'after_id'], ctx),
  )

export type ListOwnerNftsInput = z.infer<typeof listOwnerNftsInput>

export const ownerNftPage = pageOf(nft, ownerCursor).meta({ id: 'OwnerNftPage' })
export type OwnerNftPage = z.infer<typeof ownerNftPage>
