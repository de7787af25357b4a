import { z } from 'zod'
import { THUMBNAIL_WIDTHS, type ThumbnailWidth } from '@/db/media-path'
import {
  address,
  afterIdParam,
  afterTokenIdParam,
  atBlockParam,
  booleanParam,
  CURSOR_GROUPS,
  checkedString,
  decimalString,
  isoDateTime,
  limitParam,
  pageOf,
  repeatableParam,
  requireTogether,
  signedDecimalString,
  standardParam,
  tokenCursor,
  tokenId,
} from '@/lib/schemas'
import { TRAIT_FILTER_LIMITS, traitParamProblem } from '@/lib/trait-param'

/** One normalized attribute of a token's metadata (docs/metadata.md, "The whole document"). */
export const nftAttribute = z
  .object({
    trait_type: z.string().describe('The trait type (at most 256 characters).'),
    value: z
      .union([z.string(), z.number(), z.boolean()])
      .describe(
        'The value as the document gives it: a string (at most 1,024 characters), number or boolean.',
      ),
    display_type: z
      .string()
      .describe(
        "The document's `display_type` (for example number, boost_percentage, date); absent when none.",
      )
      .optional(),
  })
  .meta({ id: 'NftAttribute', example: { trait_type: 'Background', value: 'Blue' } })

export const nft = z
  .object({
    collection_address: address,
    token_id: tokenId.describe('Decimal string; must stay a string (uint256).'),
    network: z.string(),
    current_owner: address
      .nullable()
      .describe(
        'The zero address once burned. Never null without the `standard` parameter. ERC-1155 token (extension, with `standard`): the holder of its whole supply when one holder has it, else null (see `GET /v1/nfts/{address}/{tokenId}/owners`).',
      ),
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
    description: z
      .string()
      .describe("Extension: the metadata's `description` (at most 10,000 characters); absent when none.")
      .optional(),
    attributes: z
      .array(nftAttribute)
      .describe(
        "Extension: the metadata's traits, normalized from `attributes`, `traits` or `properties` (at most 100); absent when the metadata declares none.",
      )
      .optional(),
    animation_url: z
      .string()
      .describe(
        "Extension: the metadata's `animation_url` (video, audio, HTML, 3D model), made a valid URI; absent when none.",
      )
      .optional(),
    animation_media_url: z
      .string()
      .describe(
        "Extension: the service's own copy of the `animation_url` media (GET /v1/media?url=<animation_url>); present only when its bytes are stored.",
      )
      .optional(),
    animation_media_type: z
      .string()
      .describe(
        'Extension: MIME type sniffed from the stored `animation_url` bytes (for example video/mp4, text/html, model/gltf-binary); present with `animation_media_url`.',
      )
      .optional(),
    thumbnails: z
      .strictObject(
        Object.fromEntries(THUMBNAIL_WIDTHS.map((w) => [String(w), z.string()])) as Record<
          `${ThumbnailWidth}`,
          z.ZodString
        >,
      )
      .describe(
        `Extension: thumbnails of the stored image, width in pixels (${THUMBNAIL_WIDTHS.join(', ')}) -> \`media_url\` with \`&width=\`; never wider than the image (SVG: rendered at the width, as PNG; others: WebP). Present when \`media_url\` is and the image is a picture (PNG, JPEG, GIF, WebP, AVIF, TIFF, SVG).`,
      )
      .optional(),
    external_url: z
      .string()
      .describe("Extension: the metadata's `external_url`, made a valid URI; absent when none.")
      .optional(),
    background_color: z
      .string()
      .regex(/^[0-9a-f]{6}$/)
      .describe(
        "Extension: the metadata's `background_color`, six lowercase hex digits without '#'; absent when none.",
      )
      .optional(),
    metadata_updated_at: isoDateTime
      .describe(
        'Extension: when the metadata document these fields come from was fetched; absent before the first.',
      )
      .optional(),
    rarity_score: z
      .number()
      .min(0)
      .describe(
        'Extension, with `sort=rarity` only: the token\'s information content in bits (the sum over the collection\'s trait types of -log2 of the share of tokens with its value, a missing type counted as the value "missing"), rounded to 6 decimals.',
      )
      .optional(),
    rarity_rank: z
      .int()
      .min(1)
      .describe('Extension, with `sort=rarity` only: 1 = rarest; tokens with the same score share a rank.')
      .optional(),
    contract_type: z
      .enum(['ERC721', 'ERC1155'])
      .describe("Extension, with `standard` only: the token's standard.")
      .optional(),
    total_supply: signedDecimalString
      .describe(
        "Extension, with `standard` only: the token's supply — ERC-1155: minted minus burned in the indexed blocks, below zero when they burn units minted before the first of them (coverage.start_block); ERC-721: '1', '0' once burned.",
      )
      .optional(),
    holder_count: z
      .int()
      .min(0)
      .describe(
        'Extension, with `standard` only: holders with a positive balance — ERC-721: 1, 0 once burned.',
      )
      .optional(),
    balance: decimalString
      .describe(
        "Extension, owner holdings with `standard` only: how many of the token the owner holds (ERC-721: '1').",
      )
      .optional(),
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
      description: 'One of the first settlers of the devnet.',
      attributes: [
        { trait_type: 'Background', value: 'Blue' },
        { trait_type: 'Level', value: 3, display_type: 'number' },
      ],
      thumbnails: {
        '64': 'https://api.example.com/v1/media?url=ipfs%3A%2F%2Fbafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi%2F17.png&width=64',
        '256':
          'https://api.example.com/v1/media?url=ipfs%3A%2F%2Fbafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi%2F17.png&width=256',
        '512':
          'https://api.example.com/v1/media?url=ipfs%3A%2F%2Fbafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi%2F17.png&width=512',
      },
      external_url: 'https://example.com/pioneers/17',
      background_color: '1f2a44',
      metadata_updated_at: '2026-01-02T03:04:05.000Z',
    },
  })

export type Nft = z.infer<typeof nft>

export const nftPage = pageOf(nft, tokenCursor).meta({ id: 'NftPage' })
export type NftPage = z.infer<typeof nftPage>

/** Extension: the document's normalized fields on NFT responses, when asked for (a spec client sees what it saw before). */
export const includeMetadataParam = booleanParam()
  .meta({
    default: false,
    description:
      "Extension: true adds the fields normalized from the metadata document — `description`, `attributes`, `animation_url`, `external_url`, `background_color`, `metadata_updated_at` — each when known. False (the default): the specification's fields only.",
  })
  .optional()

export const nftKeyInput = z.strictObject({
  address: address.describe('Contract address, lowercase.'),
  tokenId: tokenId.describe('Decimal token id, 1 to 78 digits.'),
  standard: standardParam,
})

export const getNftInput = z.strictObject({
  address: address.describe('Contract address, lowercase.'),
  tokenId: tokenId.describe('Decimal token id, 1 to 78 digits.'),
  include_metadata: includeMetadataParam,
  standard: standardParam,
  at_block: atBlockParam,
})
export type GetNftInput = z.infer<typeof getNftInput>

export const getNftOutput = z.object({ data: nft })

export const nftMetadata = z
  .object({
    collection_address: address,
    token_id: tokenId.describe('Decimal string; must stay a string (uint256).'),
    // Any JSON object, its keys as they are: a record or object schema would drop a `__proto__` key when parsing.
    document: z.unknown().meta({
      type: 'object',
      description:
        'The metadata document as fetched: the JSON object the token URI served (at most 1 MiB), with NUL characters removed, unpaired UTF-16 surrogates replaced by U+FFFD and nesting beyond 64 levels replaced by null. Key order is not kept; of duplicated keys the last counts.',
    }),
    source_uri: z.string().describe('The token URI the document was read from (tokenURI() as read).'),
    fetched_at: isoDateTime.describe('When the document was fetched.'),
    metadata_status: z
      .string()
      .describe(
        "Outcome of the token's latest metadata fetch (as on the NFT); a failed later fetch keeps the last document.",
      ),
  })
  .meta({
    id: 'NftMetadata',
    example: {
      collection_address: '0x5fbdb2315678afecb367f032d93f642f64180aa3',
      token_id: '17',
      document: {
        name: 'Pioneer #17',
        description: 'One of the first settlers of the devnet.',
        image: 'ipfs://bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi/17.png',
        attributes: [{ trait_type: 'Background', value: 'Blue' }],
      },
      source_uri: 'ipfs://bafybeibnsoufr2renqzsh347nrx54wcubt5lgkeivez63xvivplfwhtpym/17',
      fetched_at: '2026-01-02T03:04:05.000Z',
      metadata_status: 'ok',
    },
  })

export type NftMetadata = z.infer<typeof nftMetadata>

export const getNftMetadataOutput = z.object({ data: nftMetadata })

/** `trait=Type:Value`, repeatable (trait-filter.ts). */
const traitParam = repeatableParam(
  z
    .array(checkedString(traitParamProblem))
    .max(TRAIT_FILTER_LIMITS.params, `at most ${TRAIT_FILTER_LIMITS.params} trait parameters`),
)
  .meta({
    description: `Extension: only tokens with this trait, as \`Type:Value\` (split at the first colon not escaped: in the type, \`\\:\` is a colon and \`\\\\\` a backslash; URL-encoded). Repeatable, at most ${TRAIT_FILTER_LIMITS.params}: all of the types, any of the values given for one type. The type is matched exactly; the value matches the string it is and also the number or boolean it spells (\`Level:3\` matches 3 and "3"). Only tokens whose metadata was fetched (metadata_status ok) match. Pages stay exact with the same cursor.`,
  })
  .optional()

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
    include_metadata: includeMetadataParam,
    trait: traitParam,
    sort: z
      .enum(['token_id', 'rarity'])
      .meta({
        default: 'token_id',
        description:
          'Extension: `token_id` (the default) or `rarity`: rarest first (score descending, then token order), over the tokens whose metadata was fetched and that are not burned (not with `include_burned=true`); each NFT then carries `rarity_score` and `rarity_rank`. Ranks are stored with the collection and recomputed by the indexer a few seconds after its metadata changes (about 8 s for 10,000 tokens); a collection not ranked yet lists no token. The cursor is the same.',
      })
      .optional(),
    standard: standardParam,
  })
  .superRefine((value, ctx) => requireTogether(value, CURSOR_GROUPS.token, ctx))

export type ListCollectionNftsInput = z.infer<typeof listCollectionNftsInput>
