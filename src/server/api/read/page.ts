/**
 * Keyset pages: fetch limit + 1 rows, return limit, and build the next
 * page's parameters from the last row returned. Cursor values come from the
 * database as text and are converted exactly (never through floating point
 * arithmetic).
 */

import type { BeforeKey } from '@/db/queries/sql'
import type { Coverage, Page } from '@/lib/schemas'
import { PAGE_LIMIT_DEFAULT } from '@/lib/schemas'

export function pageLimit(limit: number | undefined): number {
  return limit ?? PAGE_LIMIT_DEFAULT
}

/** `rows` holds up to limit + 1 rows (the extra one only tells that more exist). */
export function buildPage<Row, Item, Cursor>(
  rows: Row[],
  limit: number,
  toItem: (row: Row) => Item,
  toCursor: (row: Row) => Cursor,
  coverage: Coverage,
): Page<Item, Cursor> {
  const hasMore = rows.length > limit
  const shown = hasMore ? rows.slice(0, limit) : rows
  const pagination: Page<Item, Cursor>['pagination'] = { limit, has_more: hasMore }
  if (hasMore) pagination.next_page_params = toCursor(shown[shown.length - 1]!)
  return { data: shown.map(toItem), pagination, coverage }
}

/** A bigint id or microsecond count from the database (as text) as a JSON integer. */
export function safeInteger(text: string): number {
  const value = Number(text)
  if (!Number.isSafeInteger(value)) throw new Error(`cursor value ${text} exceeds 2^53`)
  return value
}

/**
 * Unix microseconds as an RFC 3339 timestamp with all six fraction digits,
 * for a `timestamptz` parameter. Built from integer parts: exact for every
 * value the cursor parameters accept.
 */
export function microsToTimestamp(micros: number): string {
  const value = BigInt(micros)
  const seconds = value / 1_000_000n
  const fraction = value % 1_000_000n
  const whole = new Date(Number(seconds) * 1000).toISOString().slice(0, 19)
  return `${whole}.${String(fraction).padStart(6, '0')}Z`
}

/**
 * The newest-first cursor of a request (`before_timestamp` + `before_id`) as
 * the queries take it; undefined on a first page (or when only one is given).
 */
export function beforeKey(input: { before_timestamp?: number; before_id?: number }): BeforeKey | undefined {
  return input.before_timestamp !== undefined && input.before_id !== undefined
    ? { timestamp: microsToTimestamp(input.before_timestamp), id: input.before_id }
    : undefined
}
