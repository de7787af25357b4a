/**
 * GET /v1/collections and GET /v1/collections/{address}.
 *
 * The list is newest first by (created_at, id) over listed collections only
 * (collections_listed_created_idx). `search`:
 *  - a full contract address (any letter case) is an exact lookup;
 *  - a pattern with a run of three or more letters or digits is a
 *    case-insensitive substring match: the next SEARCH_WINDOW collections of
 *    the list walked in order, then, when they hold less than a page, the
 *    older matches through the pg_trgm GIN indexes on name and symbol;
 *  - anything shorter cannot use trigrams, so it is matched while walking the
 *    list index, at most SHORT_SEARCH_WINDOW collections per request: a page
 *    may then hold fewer than `limit` matches (even none) with has_more true
 *    and a cursor where the walk stopped. Still exact, and bounded.
 */
import {
  type CollectionRow,
  type StandardFilter,
  selectCollection,
  selectListedCollections,
  selectListedCollectionsMatching,
  selectListedCollectionsWindow,
} from '@/db/queries/collections'
import type { BeforeKey } from '@/db/queries/sql'
import type { StandardParam, TimeCursor } from '@/lib/schemas'
import { assertNetwork, type ReadContext } from '@/server/api/read/context'
import { globalCoverage } from '@/server/api/read/coverage'
import { beforeKey, buildPage, pageLimit, safeInteger } from '@/server/api/read/page'
import { assertStandardServed, standardsOf } from '@/server/api/read/standard'
import { toCollection } from '@/server/api/v1/collections/collection-shape'
import { ApiError } from '@/server/errors/api-error'
import type { Collection, CollectionPage, ListCollectionsInput } from './collection.schema'

export const SHORT_SEARCH_WINDOW = 1000

/** Collections a trigram search walks in list order before it turns to the trigram indexes. */
export const SEARCH_WINDOW = 1000

const FULL_ADDRESS = /^0x[0-9a-fA-F]{40}$/
const TRIGRAM_RUN = /[\p{L}\p{N}]{3,}/u

export type SearchMode = 'none' | 'address' | 'trigram' | 'window'

export function searchMode(search: string | undefined): SearchMode {
  if (search === undefined || search === '') return 'none'
  if (FULL_ADDRESS.test(search)) return 'address'
  return TRIGRAM_RUN.test(search) ? 'trigram' : 'window'
}

const cursorOf = (row: CollectionRow): TimeCursor => ({
  before_timestamp: safeInteger(row.created_us),
  before_id: safeInteger(row.id),
})

export async function listCollections(
  ctx: ReadContext,
  input: ListCollectionsInput,
  options: { shortSearchWindow?: number; searchWindow?: number } = {},
): Promise<CollectionPage> {
  assertNetwork(ctx, input.network)
  const limit = pageLimit(input.limit)
  const network = ctx.config.NETWORK
  const mode = searchMode(input.search)
  const before = beforeKey(input)
  const search = input.search ?? ''
  const standard = standardsOf(input.standard).filter
  const read = async (): Promise<{ rows: CollectionRow[]; walkedTo?: CollectionRow }> => {
    if (mode === 'window') {
      return windowSearch(ctx, {
        before,
        search,
        limit,
        window: options.shortSearchWindow ?? SHORT_SEARCH_WINDOW,
        standard,
      })
    }
    if (mode === 'trigram') {
      const window = options.searchWindow ?? SEARCH_WINDOW
      return {
        rows: await selectListedCollectionsMatching(ctx.db, {
          before,
          search,
          rows: limit + 1,
          window,
          standard,
        }),
      }
    }
    const rows = await selectListedCollections(ctx.db, {
      before,
      address: mode === 'address' ? search.toLowerCase() : undefined,
      rows: limit + 1,
      standard,
    })
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
  q: {
    before: BeforeKey | undefined
    search: string
    limit: number
    window: number
    standard: StandardFilter
  },
): Promise<{ rows: CollectionRow[]; walkedTo?: CollectionRow }> {
  const { before, search, window, standard } = q
  const rows = await selectListedCollectionsWindow(ctx.db, {
    before,
    search,
    window,
    rows: q.limit + 1,
    standard,
  })
  // Newest first, as the list (compared exactly, as integers).
  const hits = rows
    .filter((r) => !r.is_tail)
    .sort((a, b) => compareDesc(a.created_us, b.created_us) || compareDesc(a.id, b.id))
  const tail = rows.find((r) => r.is_tail)
  return tail ? { rows: hits, walkedTo: tail } : { rows: hits }
}

export async function getCollection(
  ctx: ReadContext,
  input: { address: string; network?: string | undefined; standard?: StandardParam | undefined },
): Promise<Collection> {
  assertNetwork(ctx, input.network)
  const row = await selectCollection(ctx.db, input.address)
  if (!row)
    throw new ApiError('NOT_FOUND', `No collection ${input.address} is indexed on ${ctx.config.NETWORK}.`)
  assertStandardServed(standardsOf(input.standard), row.standard, `Collection ${input.address}`)
  return toCollection(row, ctx.config.NETWORK)
}

function compareDesc(a: string, b: string): number {
  const x = BigInt(a)
  const y = BigInt(b)
  return x === y ? 0 : x > y ? -1 : 1
}
