/**
 * The JSON form of a token row (src/db/queries/tokens.ts).
 *
 * `media_url` and `media_type` come from the media store's own records, and
 * the location must fit the media path's `url`, so a media_url is only ever
 * given out when GET /v1/media will serve it.
 */
import { hasThumbnails, MAX_MEDIA_URL_LENGTH, THUMBNAIL_WIDTHS } from '@/db/media-path'
import type { NftRow } from '@/db/queries/tokens'
import type { Nft } from '@/server/api/v1/nfts/nft.schema'

/** Origin of media_url: MEDIA_ORIGIN when set (a cookieless origin), else PUBLIC_URL. */
export function mediaOrigin(config: { PUBLIC_URL: string; MEDIA_ORIGIN?: string | undefined }): string {
  return (config.MEDIA_ORIGIN ?? config.PUBLIC_URL).replace(/\/+$/, '')
}

/** The media path of a stored location, or undefined for one longer than the path takes (the client uses the location itself). */
export function mediaUrl(origin: string, originalUrl: string): string | undefined {
  if (originalUrl.length > MAX_MEDIA_URL_LENGTH) return undefined
  return `${origin}/v1/media?url=${encodeURIComponent(originalUrl)}`
}

/**
 * `extended`: the request named a `standard` (docs/api.md, "ERC-1155"): the
 * token also carries its standard, supply and holder count, and an ERC-1155
 * token's current_owner is its only holder (null when its supply is spread).
 */
export function toNft(
  row: NftRow & { rarity_score?: string | null; rarity_rank?: string | null },
  network: string,
  origin: string,
  extended = false,
): Nft {
  const out: Nft = {
    collection_address: row.collection_address,
    token_id: row.token_id,
    network,
    current_owner: row.current_owner,
    is_burned: row.is_burned,
    transfer_count: row.transfer_count,
    collection_name: row.collection_name ?? '',
    collection_symbol: row.collection_symbol ?? '',
    metadata_status: row.metadata_status,
  }
  if (row.metadata_uri !== null) out.metadata_uri = row.metadata_uri
  if (row.image_url !== null) out.image_url = row.image_url
  const media =
    row.image_url !== null && row.media_type !== null ? mediaUrl(origin, row.image_url) : undefined
  if (media) {
    out.media_url = media
    out.media_type = row.media_type!
  }
  if (row.name !== null) out.name = row.name
  // include_metadata=true: the document's fields, each when known (selected only then).
  if (row.description != null) out.description = row.description
  if (row.attributes != null) out.attributes = row.attributes
  if (row.animation_url != null) out.animation_url = row.animation_url
  const animation =
    row.animation_url != null && row.animation_media_type != null
      ? mediaUrl(origin, row.animation_url)
      : undefined
  if (animation) {
    out.animation_media_url = animation
    out.animation_media_type = row.animation_media_type!
  }
  // Selected with the document's fields: thumbnails of the stored image (GET /v1/media, width).
  if (row.animation_media_type !== undefined && out.media_url && hasThumbnails(row.media_type!)) {
    const url = out.media_url
    out.thumbnails = Object.fromEntries(
      THUMBNAIL_WIDTHS.map((w) => [String(w), `${url}&width=${w}`]),
    ) as NonNullable<Nft['thumbnails']>
  }
  if (row.external_url != null) out.external_url = row.external_url
  if (row.background_color != null) out.background_color = row.background_color
  if (row.metadata_updated_at != null) out.metadata_updated_at = row.metadata_updated_at
  // sort=rarity: computed with the page (src/db/queries/rarity.ts).
  if (row.rarity_score != null) out.rarity_score = Number(row.rarity_score)
  if (row.rarity_rank != null) out.rarity_rank = Number(row.rarity_rank)
  if (extended) {
    // total_supply is NULL on every ERC-721 token and set on every ERC-1155 one (docs/database.md, "ERC-1155").
    const multi = row.total_supply != null
    out.contract_type = multi ? 'ERC1155' : 'ERC721'
    if (multi) out.current_owner = row.sole_holder ?? null
    out.total_supply = row.total_supply ?? (row.is_burned ? '0' : '1')
    out.holder_count = row.holder_count ?? (row.is_burned ? 0 : 1)
    if (row.balance != null) out.balance = row.balance
  }
  return out
}
