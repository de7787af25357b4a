/**
 * How the API finds stored media: GET /v1/media's lookup of an original media
 * location by the SHA-256 of its url, and the same lookup as joins for the
 * token queries. The file itself is at mediaPath (src/db/media-path.ts).
 */
import { MAX_SERVED_LOCATION_CHARS } from '@/db/media-path'
import { sha256Hex } from '@/db/sha256'
import type { ReadDb } from './sql'

export interface StoredMediaObject {
  sha256: string
  mediaType: string
  byteSize: number
}

/** The stored object of an original location, or null. */
export async function findMedia(db: ReadDb, url: string): Promise<StoredMediaObject | null> {
  const urlSha256 = sha256Hex(url)
  const { rows } = await db.pool.query<{ sha256: string; media_type: string; byte_size: number }>(
    `SELECT mo.sha256, mo.media_type, mo.byte_size
       FROM media_sources ms JOIN media_objects mo ON mo.sha256 = ms.media_sha256
      WHERE ms.url_sha256 = $1 AND ms.url = $2`,
    [urlSha256, url],
  )
  const row = rows[0]
  return row ? { sha256: row.sha256, mediaType: row.media_type, byteSize: row.byte_size } : null
}

/** A stored location as served: NULL when longer than MAX_SERVED_LOCATION_CHARS (docs/api.md, "Long locations"). */
export function servedLocationSql(column: string): string {
  return `CASE WHEN length(${column}) <= ${MAX_SERVED_LOCATION_CHARS} THEN ${column} END`
}

/** SQL joins (over `t`, tokens) that find the stored media of `t.image_url`. */
export const MEDIA_JOINS = `LEFT JOIN media_sources ms
    ON ms.url_sha256 = encode(sha256(convert_to(t.image_url, 'UTF8')), 'hex') AND ms.url = t.image_url
  LEFT JOIN media_objects mo ON mo.sha256 = ms.media_sha256`

/** The media type of `t.animation_url`'s stored bytes (a scalar subquery over `t`, tokens), or null. */
export const ANIMATION_MEDIA_TYPE = `(SELECT amo.media_type
    FROM media_sources ams JOIN media_objects amo ON amo.sha256 = ams.media_sha256
   WHERE ams.url_sha256 = encode(sha256(convert_to(t.animation_url, 'UTF8')), 'hex')
     AND ams.url = t.animation_url)`
