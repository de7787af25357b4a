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
