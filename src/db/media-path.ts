/**
 * Where a stored media file lives: the indexer writes it
 * (src/indexer/metadata/media-store.ts), GET /v1/media reads it. How a token
 * finds its file is a query (MEDIA_JOINS, src/db/queries/media.ts).
 */
import { join } from 'node:path'

/** `<MEDIA_DIR>/ab/cd/<sha256>`: two levels of fan-out keep directories small. */
export function mediaPath(mediaDir: string, sha256: string): string {
  return join(mediaDir, sha256.slice(0, 2), sha256.slice(2, 4), sha256)
}

/**
 * The longest `url` GET /v1/media takes (a data: URI can be long): a media_url is given only
 * for a location this long or shorter (src/server/api/v1/nfts/nft-shape.ts).
 */
export const MAX_MEDIA_URL_LENGTH = 8192

/**
 * The longest tokenURI or image location the API serves (docs/api.md, "Long locations"): a
 * contract's view function can return a `data:` URI megabytes long for nothing, and a page
 * repeats it per token. Longer ones are read as if not declared (servedLocationSql).
 */
export const MAX_SERVED_LOCATION_CHARS = 65_536

/** Widths of the thumbnails GET /v1/media?url=…&width= makes of a stored image (docs/api.md, "Media path"). */
export const THUMBNAIL_WIDTHS = [64, 256, 512] as const
export type ThumbnailWidth = (typeof THUMBNAIL_WIDTHS)[number]

/** Stored media types a thumbnail is made of (what sharp's bundled libvips decodes). */
const THUMBNAIL_SOURCES = new Set([
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'image/avif',
  'image/tiff',
  'image/svg+xml',
])

export function hasThumbnails(mediaType: string): boolean {
  return THUMBNAIL_SOURCES.has(mediaType)
}

/** A thumbnail's format: PNG for a rasterized SVG, WebP for every other picture. */
export function thumbnailType(sourceType: string): 'image/png' | 'image/webp' {
  return sourceType === 'image/svg+xml' ? 'image/png' : 'image/webp'
}

/** `<MEDIA_DIR>/thumbnails/ab/cd/<sha256>-<width>`: by the original's SHA-256 and the width. */
export function thumbnailPath(mediaDir: string, sha256: string, width: number): string {
  return join(mediaDir, 'thumbnails', sha256.slice(0, 2), sha256.slice(2, 4), `${sha256}-${width}`)
}
