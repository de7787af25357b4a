/**
 * Stored media (metadata/media-store.ts writes the files): media_objects, one
 * row per content hash, and media_sources, which original URL gave which bytes.
 */
import { sha256Hex } from '@/db/sha256'
import type { Queryable } from './db'

/** Records stored bytes and the URL they came from (a URL fetched again points at its newest bytes). */
export async function recordMedia(
  db: Queryable,
  media: { sha256: string; mediaType: string; byteSize: number },
  originalUrl: string,
): Promise<void> {
  await db.query(
    `INSERT INTO media_objects (sha256, media_type, byte_size) VALUES ($1, $2, $3)
     ON CONFLICT (sha256) DO NOTHING`,
    [media.sha256, media.mediaType, media.byteSize],
  )
  await db.query(
    `INSERT INTO media_sources (url_sha256, url, media_sha256) VALUES ($1, $2, $3)
     ON CONFLICT (url_sha256) DO UPDATE SET media_sha256 = excluded.media_sha256, fetched_at = now()`,
    [sha256Hex(originalUrl), originalUrl, media.sha256],
  )
}
