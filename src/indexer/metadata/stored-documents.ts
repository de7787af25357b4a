/**
 * Fills the normalized fields of documents stored before those fields
 * existed (docs/metadata.md, "The whole document"), from the stored document:
 * nothing is fetched again. Runs once beside the queue, in pages, until
 * token_document_backfill is empty.
 */
import type pg from 'pg'
import type { Logger } from 'pino'
import { describeError } from '../errors'
import { saveNormalizedDocuments, selectDocumentsToNormalize } from '../store/stored-documents'
import { sanitizeJson } from './document'
import { normalizeMetadata } from './normalize'

const PAGE = 500

export async function normalizeStoredDocuments(
  pool: pg.Pool,
  logger: Logger,
  options: { signal?: AbortSignal; pauseMs?: () => number } = {},
): Promise<number> {
  let done = 0
  try {
    while (!options.signal?.aborted) {
      const page = await selectDocumentsToNormalize(pool, PAGE)
      if (page.length === 0) break
      const rows = page.flatMap(({ token_id, document }) => {
        if (document === null) return []
        const fields = normalizeMetadata(sanitizeJson(document) as Record<string, unknown>)
        return {
          id: token_id,
          description: fields.description,
          attributes: fields.attributes ? JSON.stringify(fields.attributes) : null,
          animationUrl: fields.animationUrl,
          externalUrl: fields.externalUrl,
          backgroundColor: fields.backgroundColor,
        }
      })
      await saveNormalizedDocuments(
        pool,
        rows,
        page.map((r) => r.token_id),
      )
      done += rows.length
      const pause = options.pauseMs?.() ?? 0
      if (pause > 0) await new Promise((resolve) => setTimeout(resolve, pause))
    }
    if (done > 0) logger.info(`stored metadata documents normalized: ${done}`)
  } catch (err) {
    // Left for the next start: the rows stay in token_document_backfill.
    logger.warn(`stored metadata documents not normalized: ${describeError(err)}`)
  }
  return done
}
