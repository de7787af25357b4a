import { randomBytes } from 'node:crypto'
import { mkdir, rename, stat, unlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { mediaPath } from '@/db/media-path'
import { sha256Hex } from '@/db/sha256'
import type { Queryable } from '../store/db'
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
): Promise<StoredMedia | null> {
  const mediaType = sniffMediaType(bytes)
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
  await db.query(
    `INSERT INTO media_objects (sha256, media_type, byte_size) VALUES ($1, $2, $3)
     ON CONFLICT (sha256) DO NOTHING`,
    [sha256, mediaType, bytes.length],
  )
  await db.query(
    `INSERT INTO media_sources (url_sha256, url, media_sha256) VALUES ($1, $2, $3)
     ON CONFLICT (url_sha256) DO UPDATE SET media_sha256 = excluded.media_sha256, fetched_at = now()`,
    [sha256Hex(originalUrl), originalUrl, sha256],
  )
  return { sha256, mediaType, byteSize: bytes.length }
}
