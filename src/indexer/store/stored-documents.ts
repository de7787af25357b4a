/**
 * Documents stored before their normalized fields existed
 * (token_document_backfill, filled by migration 20261128210000): read in
 * pages, and their fields written (metadata/stored-documents.ts).
 */
import type pg from 'pg'

export interface StoredDocumentRow {
  token_id: string
  /** null: the token and its document are gone (a reorganisation). */
  document: Record<string, unknown> | null
}

/** The next page of documents still to be normalized, in token id order. */
export async function selectDocumentsToNormalize(pool: pg.Pool, limit: number): Promise<StoredDocumentRow[]> {
  const { rows } = await pool.query<StoredDocumentRow>(
    `SELECT b.token_id::text AS token_id, d.document
       FROM token_document_backfill b LEFT JOIN token_documents d ON d.token_id = b.token_id
      ORDER BY b.token_id LIMIT $1`,
    [limit],
  )
  return rows
}

export interface NormalizedFieldsRow {
  id: string
  description: string | null
  /** JSON text. */
  attributes: string | null
  animationUrl: string | null
  externalUrl: string | null
  backgroundColor: string | null
}

/**
 * Writes the fields of a page (a token fetched again meanwhile has its own,
 * newer ones: left alone) and takes the page's ids off the backfill.
 */
export async function saveNormalizedDocuments(
  pool: pg.Pool,
  rows: NormalizedFieldsRow[],
  done: string[],
): Promise<void> {
  const col = <T>(pick: (r: NormalizedFieldsRow) => T) => rows.map(pick)
  await pool.query(
    `WITH saved AS (
       UPDATE tokens t SET description = r.description, attributes = r.attributes::jsonb,
              animation_url = r.animation_url, external_url = r.external_url,
              background_color = r.background_color, metadata_updated_at = d.fetched_at
         FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[])
              AS r(id, description, attributes, animation_url, external_url, background_color)
         JOIN token_documents d ON d.token_id = r.id
        WHERE t.id = r.id AND t.metadata_updated_at IS NULL
       RETURNING t.id)
     DELETE FROM token_document_backfill WHERE token_id = ANY($7::bigint[])`,
    [
      col((r) => r.id),
      col((r) => r.description),
      col((r) => r.attributes),
      col((r) => r.animationUrl),
      col((r) => r.externalUrl),
      col((r) => r.backgroundColor),
      done,
    ],
  )
}
