/**
 * Thumbnails of stored images for GET /v1/media?url=…&width=… (docs/api.md,
 * "Media path"): made lazily, on the first request for a width, with sharp
 * (libvips), then cached on disk next to the media, by the original's SHA-256
 * and the width (thumbnailPath), written to a temporary name and renamed.
 *
 *  - Bounded: `concurrency` thumbnails are made at once and `maxWaiting` more
 *    wait; beyond that the request answers 503 (SERVICE_UNAVAILABLE,
 *    Retry-After: 1). Requests for the same thumbnail share one making.
 *  - Decompression bombs: sharp refuses an input of more than
 *    `maxInputPixels` from its header, before decoding; the work is
 *    time-bound (sharp's timeout). A refused or undecodable image answers
 *    404 (no thumbnail: the original is still served without `width`), and
 *    the refusal is remembered (not a time-out, which may be the load of the
 *    moment), so it is not decoded again and again.
 *  - Animated GIF/WebP: the first frame. SVG: rendered by librsvg (no
 *    scripts, no external resources: it is read from memory, without a base
 *    location) at the requested width, as PNG. Everything else: WebP.
 */
import { randomBytes } from 'node:crypto'
import { mkdir, readFile, rename, unlink, writeFile } from 'node:fs/promises'
import { dirname } from 'node:path'
import pLimit, { type LimitFunction } from 'p-limit'
import type { Logger } from 'pino'
import sharp from 'sharp'
import { hasThumbnails, mediaPath, thumbnailPath, thumbnailType } from '@/db/media-path'
import { ApiError } from '@/server/errors/api-error'

export interface ThumbnailOptions {
  /** Thumbnails made at once (CPU: the machine's cores are shared with the API). */
  concurrency: number
  /** Requests waiting for a slot; more answer 503. */
  maxWaiting: number
  /** Longest sharp may work on one thumbnail. */
  timeoutSeconds: number
  /** Largest input (width × height) decoded; sharp checks the header first. */
  maxInputPixels: number
}

export const THUMBNAIL_DEFAULTS: ThumbnailOptions = {
  concurrency: 2,
  maxWaiting: 32,
  timeoutSeconds: 10,
  // 8,000 × 5,000: far beyond any NFT picture, far below what exhausts memory (4 bytes a pixel).
  maxInputPixels: 40_000_000,
}

export interface Thumbnail {
  bytes: Buffer
  mediaType: 'image/png' | 'image/webp'
}

/** Refusals remembered (sha256-width), oldest forgotten first. */
const MAX_REFUSALS = 10_000

export class Thumbnails {
  private readonly options: ThumbnailOptions
  private readonly slots: LimitFunction
  private readonly making = new Map<string, Promise<Thumbnail>>()
  private readonly refused = new Map<string, string>()

  constructor(
    private readonly mediaDir: string,
    private readonly logger: Logger,
    options: Partial<ThumbnailOptions> = {},
  ) {
    this.options = { ...THUMBNAIL_DEFAULTS, ...options }
    this.slots = pLimit(this.options.concurrency)
  }

  /** The thumbnail of stored media at a width: from the disk cache, else made now. */
  async get(media: { sha256: string; mediaType: string }, width: number): Promise<Thumbnail> {
    if (!hasThumbnails(media.mediaType)) {
      throw new ApiError(
        'NOT_FOUND',
        `No thumbnail of ${media.mediaType} media: thumbnails are made of images only; request it without width.`,
      )
    }
    const mediaType = thumbnailType(media.mediaType)
    const key = `${media.sha256}-${width}`
    const refusal = this.refused.get(key)
    if (refusal) throw noThumbnail(refusal)
    const path = thumbnailPath(this.mediaDir, media.sha256, width)
    const cached = await readFile(path).catch(() => null)
    if (cached) return { bytes: cached, mediaType }
    let pending = this.making.get(key)
    if (!pending) {
      pending = this.make(media, width, path, key).finally(() => this.making.delete(key))
      this.making.set(key, pending)
    }
    return { bytes: (await pending).bytes, mediaType }
  }

  private async make(
    media: { sha256: string; mediaType: string },
    width: number,
    path: string,
    key: string,
  ): Promise<Thumbnail> {
    // Making and waiting, bounded together: beyond that a burst is refused at once.
    const { concurrency, maxWaiting } = this.options
    if (this.slots.activeCount + this.slots.pendingCount >= concurrency + maxWaiting) {
      throw new ApiError('SERVICE_UNAVAILABLE', 'Too many thumbnails are being made; retry shortly.', {
        headers: { 'Retry-After': '1' },
      })
    }
    return this.slots(async () => {
      // Made while this request waited? Then it is on disk.
      const cached = await readFile(path).catch(() => null)
      if (cached) return { bytes: cached, mediaType: thumbnailType(media.mediaType) }
      const original = await readFile(mediaPath(this.mediaDir, media.sha256)).catch((err: unknown) => {
        // As for the original bytes: a row without its file is a 404 (logged), never a 500.
        if ((err as { code?: unknown }).code !== 'ENOENT') throw err
        this.logger.warn({ sha256: media.sha256 }, 'stored media file is missing')
        throw new ApiError('NOT_FOUND', 'No stored media for this url.')
      })
      let thumbnail: Thumbnail
      try {
        thumbnail = await this.render(original, media.mediaType, width)
      } catch (err) {
        const reason = refusalReason(err)
        // A time-out may be the machine's load of the moment: only what the bytes decide is remembered.
        if (reason !== TIMED_OUT) this.remember(key, reason)
        this.logger.info({ sha256: media.sha256, width, reason }, 'no thumbnail made')
        throw noThumbnail(reason)
      }
      await this.save(path, thumbnail.bytes)
      return thumbnail
    })
  }

  private async render(original: Buffer, sourceType: string, width: number): Promise<Thumbnail> {
    const limits = { limitInputPixels: this.options.maxInputPixels, failOn: 'error' as const }
    let input = sharp(original, limits)
    if (sourceType === 'image/svg+xml') {
      // Vector: rendered at the requested width (from its declared size at 72 dpi).
      const { width: declared } = await input.metadata()
      const density = Math.min(100_000, Math.max(1, (72 * width) / Math.max(1, declared ?? width)))
      input = sharp(original, { ...limits, density })
      const bytes = await input
        .resize({ width, withoutEnlargement: true })
        .png()
        .timeout({ seconds: this.options.timeoutSeconds })
        .toBuffer()
      return { bytes, mediaType: 'image/png' }
    }
    const bytes = await input
      .rotate()
      .resize({ width, withoutEnlargement: true })
      .webp({ quality: 80 })
      .timeout({ seconds: this.options.timeoutSeconds })
      .toBuffer()
    return { bytes, mediaType: 'image/webp' }
  }

  /** Temporary name, then rename: readers never see half a file. A failed write only costs the cache. */
  private async save(path: string, bytes: Buffer) {
    const temp = `${path}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`
    try {
      await mkdir(dirname(path), { recursive: true })
      await writeFile(temp, bytes)
      await rename(temp, path)
    } catch (err) {
      await unlink(temp).catch(() => undefined)
      this.logger.warn({ path, err }, 'thumbnail not cached')
    }
  }

  private remember(key: string, reason: string) {
    if (this.refused.size >= MAX_REFUSALS) {
      const oldest = this.refused.keys().next().value
      if (oldest !== undefined) this.refused.delete(oldest)
    }
    this.refused.set(key, reason)
  }
}

function noThumbnail(reason: string): ApiError {
  return new ApiError(
    'NOT_FOUND',
    `No thumbnail can be made of this image (${reason}); request it without width.`,
  )
}

const TIMED_OUT = 'it took too long to decode'

/** What the log and the 404 say about a refusal (never a path or a library's internals). */
function refusalReason(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err)
  if (/pixel limit/i.test(message)) return 'it has too many pixels'
  if (/timeout/i.test(message)) return 'it took too long to decode'
  return 'it cannot be decoded'
}
