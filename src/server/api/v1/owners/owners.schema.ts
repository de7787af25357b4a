import { z } from 'zod'
import {
  address,
  afterCollectionParam,
  atBlockParam,
  beforeIdParam,
  beforeTimestampParam,
  CURSOR_GROUPS,
  decimalString,
  integerParam,
  limitParam,
  ownerCollectionCursor,
  ownerCursor,
  pageOf,
  repeatableParam,
  requireTogether,
  standardParam,
  timeCursor,
  tokenId,
} from '@/lib/schemas'
import { includeMetadataParam, nft } from '@/server/api/v1/nfts/nft.schema'
import { transfer } from '@/server/api/v1/transfers/transfer.schema'

/** How many distinct collections one `collection` filter names at most. */
export const COLLECTION_FILTER_MAX = 100

/** `collection=0x…`, repeatable. */
const collectionFilterParam = repeatableParam(
  z
    .array(address)
    .min(1)
    .refine(
      (list) => new Set(list).size <= COLLECTION_FILTER_MAX,
      `at most ${COLLECTION_FILTER_MAX} distinct collections`,
    ),
)
  .meta({
    description: `Extension: only tokens of these collections (contract address, lowercase). Repeatable, 1 to ${COLLECTION_FILTER_MAX} distinct addresses (a repeated address counts once). The order and cursor are the same as without it.`,
  })
  .optional()

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
    collection: collectionFilterParam,
    at_block: atBlockParam,
  })
  .superRefine((value, ctx) => requireTogether(value, CURSOR_GROUPS.ownerToken, ctx))

export type ListOwnerNftsInput = z.infer<typeof listOwnerNftsInput>

export const ownerNftPage = pageOf(nft, ownerCursor).meta({ id: 'OwnerNftPage' })
export type OwnerNftPage = z.infer<typeof ownerNftPage>

/** One collection a wallet holds tokens of (GET /v1/owners/{address}/collections). */
export const ownerCollection = z
  .object({
    collection: z.object({
      address,
      name: z.string().describe("name() as read from the contract; '' when none is known."),
      symbol: z.string().describe("symbol() as read from the contract; '' when none is known."),
      contract_type: z.enum(['ERC721', 'ERC1155']),
    }),
    token_count: z
      .int()
      .min(1)
      .describe(
        "ERC-721: tokens of the collection the wallet holds; ERC-1155: the collection's token ids of which it holds a positive balance.",
      ),
    balance: decimalString
      .describe(
        'ERC-1155 collections only: the sum of the wallet’s balances over the collection’s token ids.',
      )
      .optional(),
  })
  .meta({
    id: 'OwnerCollection',
    example: {
      collection: {
        address: '0x5fbdb2315678afecb367f032d93f642f64180aa3',
        name: 'Genesis Pioneers',
        symbol: 'PION',
        contract_type: 'ERC721',
      },
      token_count: 3,
    },
  })

export type OwnerCollection = z.infer<typeof ownerCollection>

export const ownerCollectionPage = pageOf(ownerCollection, ownerCollectionCursor).meta({
  id: 'OwnerCollectionPage',
})
export type OwnerCollectionPage = z.infer<typeof ownerCollectionPage>

export const listOwnerCollectionsInput = z.strictObject({
  address: address.describe('Owner address, lowercase.'),
  limit: limitParam,
  after_collection: address
    .describe('Cursor: collection address, copied from `next_page_params`.')
    .optional(),
})

export type ListOwnerCollectionsInput = z.infer<typeof listOwnerCollectionsInput>

export const listOwnerTransfersInput = z
  .strictObject({
    address: address.describe('Wallet address, lowercase.'),
    limit: limitParam,
    before_timestamp: beforeTimestampParam,
    before_id: beforeIdParam,
    direction: z
      .enum(['in', 'out', 'all'])
      .meta({
        default: 'all',
        description:
          '`in`: transfers to the wallet; `out`: transfers from it; `all` (the default): both, a transfer from the wallet to itself once.',
      })
      .optional(),
  })
  .superRefine((value, ctx) => requireTogether(value, CURSOR_GROUPS.time, ctx))

export type ListOwnerTransfersInput = z.infer<typeof listOwnerTransfersInput>

export const ownerTransferPage = pageOf(transfer, timeCursor).meta({ id: 'OwnerTransferPage' })
export type OwnerTransferPage = z.infer<typeof ownerTransferPage>
