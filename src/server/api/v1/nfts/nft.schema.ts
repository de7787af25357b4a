import { z } from 'zod'
import {
  address,
  afterIdParam,
  afterTokenIdParam,
  booleanParam,
  limitParam,
  pageOf,
  requireTogether,
  tokenCursor,
  tokenId,
} from '@/lib/schemas'

export const nft = z
  .object({
    collection_address: address,
    token_id: tokenId.describe('Decimal string; must stay a string (uint256).'),
    network: z.string(),
    current_owner: address.describe('The zero address once burned.'),
    is_burned: z.boolean(),
    transfer_count: z.int().min(0),
    metadata_uri: z.string().describe('tokenURI() as read from the contract; absent until read.').optional(),
    image_url: z
      .string()

      .describe('Image location declared by the metadata (may need an external gateway); absent when none.')
      .optional(),
    media_url: z
      .string()

      .describe(
        "The service's own copy of the image (GET /v1/media?url=<image_url>); present only when the bytes are stored. Artwork source: media_url when present, otherwise image_url.",
      )
      .optional(),
    collection_name: z.string().describe("The collection's name; '' when the contract declares none."),
    collection_symbol: z.string().describe("The collection's symbol; '' when unknown."),
    name: z.string().describe("The metadata's `name`; absent when the metadata has none.").optional(),
    media_type: z
      .string()

      .describe(
        'MIME type sniffed from the stored media bytes (for example image/png, video/mp4); absent when not stored.',
      )
      .optional(),
    metadata_status: z
      .string()
      .describe(
        'Extension: outcome of the metadata fetch: pending | ok | timeout | too_large | unsupported_type | http_error | invalid_json | uri_reverted | blocked_address | invalid_uri.',
      ),
  })
  .meta({
    id: 'Nft',
    example: {
      collection_address: '0x5fbdb2315678afecb367f032d93f642f64180aa3',
      token_id: '17',
      network: 'devnet',
      current_owner: '0x70997970c51812dc3a010c7d01b50e0d17dc79c8',
      is_burned: false,
      transfer_count: 3,
      metadata_uri: 'ipfs://bafybeibnsoufr2renqzsh347nrx54wcubt5lgkeivez63xvivplfwhtpym/17',
      image_url: 'ipfs://bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi/17.png',
      media_url:
        'https://api.example.com/v1/media?url=ipfs%3A%2F%2Fbafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi%2F17.png',
      collection_name: 'Genesis Pioneers',
      collection_symbol: 'PION',
      name: 'Pioneer #17',
      media_type: 'image/png',
      metadata_status: 'ok',
    },
  })

export type Nft = z.infer<typeof nft>

export const nftPage = pageOf(nft, tokenCursor).meta({ id: 'NftPage' })
export type NftPage = z.infer<typeof nftPage>

export const getNftInput = z.strictObject({
  address: address.describe('Contract address, lowercase.'),
  tokenId: tokenId.describe('Decimal token id, 1 to 78 digits.'),
})

export const getNftOutput = z.object({ data: nft })

export const listCollectionNftsInput = z
  .strictObject({
    address: address.describe('Contract address, lowercase.'),
    limit: limitParam,
    after_token_id: afterTokenIdParam,
    after_id: afterIdParam,
    include_burned: booleanParam()

      .meta({
        default: false,
        description: 'Include burned tokens (true) or leave them out (false, the default).',
      })
      .optional(),
  })
  .superRefine((value, ctx) => requireTogether(value, ['after_token_id', 'after_id'], ctx))

export type ListCollectionNftsInput = z.infer<typeof listCollectionNftsInput>
