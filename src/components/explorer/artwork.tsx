'use client'

/**
 * Artwork, safely (docs/explorer.md, "Media safety"). The specification's artwork rule is
 * `media_url` first, else `image_url`; the explorer follows it with one restriction:
 * `image_url` comes from chain data and is hostile, so it is never loaded — without stored
 * media the token shows a placeholder. What is shown is only ever an <img> of the media path
 * (`/v1/media`, served with `Content-Security-Policy: …; sandbox` and `nosniff`): a stored
 * thumbnail (64/256/512 px; an SVG rendered to PNG) where one exists, else the original when it
 * is a picture. An <img> never runs script, not even an SVG's, and never loads what the SVG
 * references. Nothing is inlined; no <object>, <embed> or <iframe>.
 *
 * Sizes are reserved (a square box, width and height on the <img>): pictures load lazily
 * without moving the page. A picture that fails, or is not there yet, leaves the placeholder.
 */
import { useState } from 'react'

export interface ArtworkSource {
  media_url?: string
  media_type?: string
  thumbnails?: { 64: string; 256: string; 512: string }
}

/** True for a URL of the service's media path, the only place pictures are loaded from. */
export function isMediaPathUrl(url: string | undefined): url is string {
  if (!url) return false
  try {
    const u = new URL(url, window.location.origin)
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.pathname === '/v1/media'
  } catch {
    return false
  }
}

/** The <img> attributes of a token's artwork, or null when nothing may be shown. */
export function artworkImage(
  nft: ArtworkSource,
  displayWidth: number,
): { src: string; srcSet?: string; sizes?: string } | null {
  const t = nft.thumbnails
  if (t && isMediaPathUrl(t[64]) && isMediaPathUrl(t[256]) && isMediaPathUrl(t[512])) {
    const src = displayWidth <= 64 ? t[64] : displayWidth <= 256 ? t[256] : t[512]
    if (displayWidth <= 64) return { src }
    return { src, srcSet: `${t[256]} 256w, ${t[512]} 512w`, sizes: `${displayWidth}px` }
  }
  // No thumbnail (not yet made, or a picture format without one): the original, if a picture.
  if (isMediaPathUrl(nft.media_url) && nft.media_type?.startsWith('image/')) return { src: nft.media_url }
  return null
}

export function Artwork({
  nft,
  alt,
  size,
  eager = false,
  pending = false,
}: {
  nft: ArtworkSource | undefined
  /** '' when a caption beside it already names the token. */
  alt: string
  /** The box's width in CSS pixels (it is square). */
  size: number
  /** The picture above the fold of a token page: loaded at once. */
  eager?: boolean
  /** The token's fields are still being read: an empty placeholder, not "no image". */
  pending?: boolean
}) {
  const image = nft ? artworkImage(nft, size) : null
  const [state, setState] = useState<'loading' | 'loaded' | 'failed'>('loading')
  const placeholder = !image
    ? pending
      ? ''
      : nft?.media_url
        ? `${nft.media_type ?? 'media'}`
        : 'No stored image'
    : state === 'failed'
      ? 'Image unavailable'
      : null
  return (
    <span
      className={`artwork${state === 'loaded' ? ' loaded' : ''}`}
      style={{ maxWidth: size }}
      data-testid="artwork"
      data-state={image ? state : pending ? 'pending' : 'none'}
    >
      {image && state !== 'failed' ? (
        // biome-ignore lint/performance/noImgElement: media-path bytes, never optimised through Next.js.
        <img
          src={image.src}
          srcSet={image.srcSet}
          sizes={image.sizes}
          alt={alt}
          width={size}
          height={size}
          loading={eager ? 'eager' : 'lazy'}
          decoding="async"
          // No referrer and no credentials travel with a picture.
          referrerPolicy="no-referrer"
          crossOrigin="anonymous"
          onLoad={() => setState('loaded')}
          onError={() => setState('failed')}
        />
      ) : null}
      {placeholder !== null && alt ? (
        <span className="artwork-placeholder" role="img" aria-label={alt}>
          <span aria-hidden="true">{placeholder}</span>
        </span>
      ) : placeholder !== null ? (
        <span className="artwork-placeholder" aria-hidden="true">
          {placeholder}
        </span>
      ) : null}
    </span>
  )
}
