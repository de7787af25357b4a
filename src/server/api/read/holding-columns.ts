/**
 * A wallet's holdings at a block, as the snapshot cache keeps them
 * (snapshot-cache.ts; docs/api.md, "Snapshots"): in columns, not an object
 * per token. The token ids are one string with their ends in a typed array,
 * the row ids a Float64Array, the collections each named once with the row
 * where they start, and the balances kept only when one is not 1 (ERC-1155).
 * About 19 bytes a held token (7-digit ids: 7 bytes of text, 12 of typed
 * arrays) where objects took about 650 (measured with a million), so the
 * cache keeps a wallet of millions of tokens and its pages stay binary searches.
 *
 * Rows are in (collection_address, token_id, id) order, as the query returns
 * them; token ids are canonical decimals (numeric::text), so comparing their
 * lengths, then their text, is comparing their values.
 */
import type { HoldingAtRow } from '@/db/queries/owners'
import { safeInteger } from './page'

/** Where a page starts: after this row, in (collection, token id, row id) order. */
export interface HoldingCursor {
  collection: string
  /** A canonical decimal. */
  tokenId: string
  id: number
}

const ONE = '1'

/** Compares two canonical decimals by value. */
export function compareDecimals(a: string, b: string): number {
  if (a.length !== b.length) return a.length - b.length
  return a < b ? -1 : a > b ? 1 : 0
}

export class HoldingColumns {
  private constructor(
    /** The distinct collections in order... */
    private readonly collections: string[],
    /** ...and the row each starts at, then the row count. */
    private readonly starts: Int32Array,
    private readonly tokenText: string,
    /** Where each row's token id ends in tokenText. */
    private readonly tokenEnds: Uint32Array,
    private readonly rowIds: Float64Array,
    /** Each row's balance; null when every one is 1. */
    private readonly balances: string[] | null,
  ) {}

  static of(rows: readonly HoldingAtRow[]): HoldingColumns {
    const collections: string[] = []
    const starts: number[] = []
    const tokenEnds = new Uint32Array(rows.length)
    const rowIds = new Float64Array(rows.length)
    const tokens: string[] = []
    let end = 0
    let allOne = true
    for (const [i, row] of rows.entries()) {
      if (collections[collections.length - 1] !== row.collection_address) {
        collections.push(row.collection_address)
        starts.push(i)
      }
      tokens.push(row.token_id)
      end += row.token_id.length
      tokenEnds[i] = end
      rowIds[i] = safeInteger(row.id)
      if (row.balance !== ONE) allOne = false
    }
    starts.push(rows.length)
    const balances = allOne ? null : rows.map((r) => (r.balance === ONE ? ONE : r.balance))
    return new HoldingColumns(
      collections,
      Int32Array.from(starts),
      tokens.join(''),
      tokenEnds,
      rowIds,
      balances,
    )
  }

  get length(): number {
    return this.rowIds.length
  }

  /** Heap bytes held, about: what the snapshot cache counts. */
  get bytes(): number {
    const n = this.length
    return this.tokenText.length + 12 * n + (this.balances ? 8 * n : 0) + 80 * this.collections.length
  }

  /** Row `i` as the query returned it. */
  row(i: number): HoldingAtRow {
    const c = this.collectionOf(i)
    return {
      id: String(this.rowIds[i]),
      collection_address: this.collections[c]!,
      token_id: this.tokenId(i),
      balance: this.balances?.[i] ?? ONE,
    }
  }

  /** Rows [start, end) of one collection; an empty range where it holds none. */
  rangeOf(collection: string): { start: number; end: number } {
    const c = this.collectionIndex(collection)
    if (this.collections[c] !== collection) return { start: this.starts[c]!, end: this.starts[c]! }
    return { start: this.starts[c]!, end: this.starts[c + 1]! }
  }

  /** The first row after `cursor`; length when none. */
  firstAfter(cursor: HoldingCursor): number {
    const c = this.collectionIndex(cursor.collection)
    if (this.collections[c] !== cursor.collection) return this.starts[c]!
    let lo = this.starts[c]!
    let hi = this.starts[c + 1]!
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      const order = compareDecimals(this.tokenId(mid), cursor.tokenId) || this.rowIds[mid]! - cursor.id
      if (order > 0) hi = mid
      else lo = mid + 1
    }
    return lo
  }

  private tokenId(i: number): string {
    return this.tokenText.slice(i === 0 ? 0 : this.tokenEnds[i - 1], this.tokenEnds[i])
  }

  /** The index of the first collection not before `collection`. */
  private collectionIndex(collection: string): number {
    let lo = 0
    let hi = this.collections.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (this.collections[mid]! < collection) lo = mid + 1
      else hi = mid
    }
    return lo
  }

  /** The collection row `i` belongs to: the last whose start is at or before it. */
  private collectionOf(i: number): number {
    let lo = 0
    let hi = this.collections.length - 1
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1
      if (this.starts[mid]! <= i) lo = mid
      else hi = mid - 1
    }
    return lo
  }
}
