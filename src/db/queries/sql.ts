/**
 * What the read queries share: the handle they run on and SQL fragments.
 */
import type { Database } from '@/db/database'

/** The database a read runs on (a /v1 request's `ctx.db`: the primary or a replica). */
export type ReadDb = Pick<Database, 'pool'>

/** SQL rendering of a timestamptz column as RFC 3339 UTC with milliseconds (like Date.toISOString). */
export const isoSql = (column: string) =>
  `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`

/** SQL: a timestamptz column as integer Unix microseconds (exact: extract gives a numeric). */
export const microsInt8Sql = (column: string) => `(extract(epoch FROM ${column}) * 1000000)::int8`

/** SQL: a timestamptz column as integer Unix microseconds, as text. */
export const microsSql = (column: string) => `${microsInt8Sql(column)}::text`

/** SQL: integer Unix microseconds as a timestamptz (exact). */
export const fromMicrosSql = (us: string) => `('epoch'::timestamptz + (${us}) * interval '1 microsecond')`

/** ILIKE pattern matching `text` anywhere, with %, _ and the escape character taken literally. */
export function substringPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`
}

/** A newest-first keyset cursor: rows strictly before (timestamp, id). */
export interface BeforeKey {
  /** RFC 3339 with microseconds, for a `timestamptz` parameter. */
  timestamp: string
  id: number
}
