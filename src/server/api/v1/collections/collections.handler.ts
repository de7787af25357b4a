/**
 * GET /v1/collections and GET /v1/collections/{address}.
 *
 * The list is newest first by (created_at, id) over listed collections only
 * (collections_listed_created_idx). `search`:
 *  - a full contract address (any letter case) is an exact lookup;
 *  - a pattern with a run of three or more letters or digits is a
 *    case-insensitive substring match served by the pg_trgm GIN indexes on
 *    name and symbol;
 *  - anything shorter cannot use trigrams, so it is matched while walking the
 *    list index, at most SHORT_SEARCH_WINDOW collections per request: a page
 *    may then hold fewer than `limit` matches (even none) with has_more true
 *    and a cursor where the walk stopped. Still exact, and bounded.
 */
import type { TimeCursor } from '@/lib/schemas'
import { assertNetwork, type ReadContext } from '@/server/api/read/context'
import { globalCoverage } from '@/server/api/read/coverage'
import { buildPage, microsToTimestamp, pageLimit, safeInteger } from '@/server/api/read/page'
import {
  COLLECTION_COLUMNS,
  type CollectionRow,
  toCollection,
} from '@/server/api/v1/collections/collection-row'
import { ApiError } from '@/server/errors/api-error'
import type { Collection, CollectionPage, ListCollectionsInput } from './collection.schema'

export const SHORT_SEARCH_WINDOW = 1000

const FULL_ADDRESS = /^0x[0-9a-fA-F]{40}$/
const TRIGRAM_RUN = /[\p{L}\p{N}]{3,}/u

export type SearchMode = 'none' | 'address' | 'trigram' | 'window'

export function searchMode(search: string | undefined): SearchMode {
  if (search === undefined || search === '') return 'none'
  if (FULL_ADDRESS.test(search)) return 'address'
  return TRIGRAM_RUN.test(search) ? 'trigram' : 'window'
}

/** ILIKE pattern matching `text` anywhere, with %, _ and the escape character taken literally. */
export function substringPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`
}

const cursorOf = (row: CollectionRow): TimeCursor => ({
  before_timestamp: safeInteger(row.created_us),
  before_id: safeInteger(row.id),
})

export async function listCollections(
  ctx: ReadContext,
  input: ListCollectionsInput,
  options: { shortSearchWindow?: number } = {},
): Promise<CollectionPage> {
  assertNetwork(ctx, input.network)
  const limit = pageLimit(input.limit)
  const network = ctx.config.NETWORK
  const mode = searchMode(input.search)
  const params: unknown[] = []
  const param = (value: unknown) => {
    params.push(value)
    return `$${params.length}`
  }
  const where = ['c.listed']
  if (input.before_timestamp !== undefined && input.before_id !== undefined) {
    where.push(
      `(c.created_at, c.id) < (${param(microsToTimestamp(input.before_timestamp))}::timestamptz, ${param(input.before_id)}::int8)`,
    )
  }
  const search = input.search ?? ''
  if (mode === 'address') where.push(`c.address = ${param(search.toLowerCase())}`)
  if (mode === 'trigram') {
    const pattern = param(substringPattern(search))
    where.push(`(c.name ILIKE ${pattern} OR c.symbol ILIKE ${pattern})`)
  }
  const read = async (): Promise<{ rows: CollectionRow[]; walkedTo?: CollectionRow }> => {
    if (mode === 'window') {
      return windowSearch(ctx, where, params, search, limit, options.shortSearchWindow ?? SHORT_SEARCH_WINDOW)
    }
    // Plain list: the page's ids from the list index alone, then the rows.
    const sql =
      mode === 'none'
        ? `SELECT ${COLLECTION_COLUMNS}
             FROM (SELECT c.id FROM collections c WHERE ${where.join(' AND ')}
                    ORDER BY c.created_at DESC, c.id DESC LIMIT ${param(limit + 1)}) page
             JOIN collections c ON c.id = page.id
            ORDER BY c.created_at DESC, c.id DESC`
        : `SELECT ${COLLECTION_COLUMNS} FROM collections c WHERE ${where.join(' AND ')}
            ORDER BY c.created_at DESC, c.id DESC LIMIT ${param(limit + 1)}`
    const { rows } = await ctx.db.pool.query<CollectionRow>(sql, params)
    return { rows }
  }
  const [rows, snapshot] = await Promise.all([read(), ctx.snapshot()])
  const page = buildPage(
    rows.rows,
    limit,
    (r) => toCollection(r, network),
    cursorOf,
    globalCoverage(snapshot),
  )
  if (rows.walkedTo && !page.pagination.has_more) {
    // The window ended before `limit` matches: continue after the last collection walked.
    page.pagination.has_more = true
    page.pagination.next_page_params = cursorOf(rows.walkedTo)
  }
  return page
}

/**
 * Short search: the next SHORT_SEARCH_WINDOW listed collections in list
 * order, filtered. Returns the matches (up to limit + 1) and, when the window
 * was full, the last collection walked (where the next page resumes).
 */
async function windowSearch(
  ctx: ReadContext,
  where: string[],
  params: unknown[],
  search: string,
  limit: number,
  window: number,
): Promise<{ rows: CollectionRow[]; walkedTo?: CollectionRow }> {
  const n = params.length
  const { rows } = await ctx.db.pool.query<CollectionRow & { is_tail: boolean }>(
    `WITH walk AS MATERIALIZED (
       SELECT c.id, c.created_at, c.name, c.symbol FROM collections c WHERE ${where.join(' AND ')}
        ORDER BY c.created_at DESC, c.id DESC LIMIT $${n + 1}),
     hits AS (
       SELECT id FROM walk WHERE name ILIKE $${n + 2} OR symbol ILIKE $${n + 2}
        ORDER BY created_at DESC, id DESC LIMIT $${n + 3}),
     tail AS (
       SELECT id FROM walk ORDER BY created_at ASC, id ASC LIMIT 1)
     SELECT ${COLLECTION_COLUMNS}, false AS is_tail FROM hits JOIN collections c ON c.id = hits.id
     UNION ALL
     SELECT ${COLLECTION_COLUMNS}, true AS is_tail FROM tail JOIN collections c ON c.id = tail.id
      WHERE (SELECT count(*) FROM walk) = $${n + 1}`,
    [...params, window, substringPattern(search), limit + 1],
  )
  // Newest first, as the list (compared exactly, as integers).
  const hits = rows
    .filter((r) => !r.is_tail)
    .sort((a, b) => compareDesc(a.created_us, b.created_us) || compareDesc(a.id, b.id))
  const tail = rows.find((r) => r.is_tail)
  return tail ? { rows: hits, walkedTo: tail } : { rows: hits }
}

export async function getCollection(
  ctx: ReadContext,
  input: { address: string; network?: string | undefined },
): Promise<Collection> {
  assertNetwork(ctx, input.network)
  const { rows } = await ctx.db.pool.query<CollectionRow>(
    `SELECT ${COLLECTION_COLUMNS} FROM collections c WHERE c.address = $1`,
    [input.address],
  )
  const row = rows[0]
  if (!row)
    throw new ApiError('NOT_FOUND', `No collection ${input.address} is indexed on ${ctx.config.NETWORK}.`)
  return toCollection(row, ctx.config.NETWORK)
}

function compareDesc(a: string, b: string): number {
  const x = BigInt(a)
  const y = BigInt(b)
  return x === y ? 0 : x > y ? -1 : 1
}
