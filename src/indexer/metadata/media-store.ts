import { randomBytes } from 'node:crypto'
import { mkdir, rename, stat, unlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { mediaPath } from '@/db/media-path'
import { sha256Hex } from '@/db/sha256'
import type { Queryable } from '../store/db'
import { recordMedia } from '../store/media'
import { isStorableMedia, sniffMediaType } from './sniff'

export interface StoredMedia {
  sha256: string
  mediaType: string
  byteSize: number
}

/**
 * Stores original media bytes content-addressed by SHA-256: the file is
 * written to a temporary name and renamed (atomic: readers never see half a
 * file), then media_objects and media_sources (keyed by the SHA-256 of the
 * original URL) are recorded. Returns null for bytes that are not media.
 */
export async function storeMedia(
  db: Queryable,
  mediaDir: string,
  originalUrl: string,
  bytes: Buffer,
  /** How the media type is read from the bytes (animations: sniffAnimationType). */
  sniff: (bytes: Uint8Array) => string = sniffMediaType,
): Promise<StoredMedia | null> {
  const mediaType = sniff(bytes)
  if (!isStorableMedia(mediaType)) return null
  const sha256 = sha256Hex(bytes)
  const path = mediaPath(mediaDir, sha256)
  const exists = await stat(path).then(
    (s) => s.size === bytes.length,
    () => false,
  )
  if (!exists) {
    await mkdir(join(mediaDir, sha256.slice(0, 2), sha256.slice(2, 4)), { recursive: true })
    const temp = `${path}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`
    try {
      await writeFile(temp, bytes)
      await rename(temp, path)
    } catch (err) {
      await unlink(temp).catch(() => undefined)
      throw err
    }
  }
  const stored = { sha256, mediaType, byteSize: bytes.length }
  await recordMedia(db, stored, originalUrl)
  return stored
}
