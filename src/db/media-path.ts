/**
 * Where a stored media file lives, and how a token finds it: the indexer
 * writes both (src/indexer/metadata/media-store.ts), the read endpoints and
 * GET /v1/media read them.
 */
import { join } from 'node:path'

/** `<MEDIA_DIR>/ab/cd/<sha256>`: two levels of fan-out keep directories small. */
export function mediaPath(mediaDir: string, sha256: string): string {
  return join(mediaDir, sha256.slice(0, 2), sha256.slice(2, 4), sha256)
}

/** SQL joins (over `t`, tokens) that find the stored media of `t.image_url`. */
export const MEDIA_JOINS = `LEFT JOIN media_sources ms
    ON ms.url_sha256 = encode(sha256(convert_to(t.image_url, 'UTF8')), 'hex') AND ms.url = t.image_url
  LEFT JOIN media_objects mo ON mo.sha256 = ms.media_sha256`
