/**
 * Snapshots as the snapshot cache keeps them (snapshot-cache.ts; docs/api.md,
 * "Snapshots"): in columns, not an object per row, so the cache holds
 * several times more of them and their pages stay binary searches. Strings
 * (token ids, owners) are one string each column with their ends in a typed
 * array, numbers typed arrays, and ERC-1155 balances kept only when one is
 * not 1 (holdings) or only on ERC-1155 collections (holders).
 *
 * Holdings: about 19 bytes a held token (7-digit ids: 7 bytes of text, 12 of
 * typed arrays) where objects took about 650; holders: about 54 bytes a
 * holder where objects took about 290 (both measured with a million).
 *
 * Rows are in the order the queries return them. Token ids are canonical
 * decimals (numeric::text), so comparing their lengths, then their text, is
 * comparing their values.
 */
import type { HolderAtRow, HoldingAtRow } from '@/db/queries/owners'
import { safeInteger } from './page'

/** Where a page of holdings starts: after this row, in (collection, token id, row id) order. */
export interface HoldingCursor {
  collection: string
  /** A canonical decimal. */
  tokenId: string
  id: number
}

/** Where a page of holders starts: after this row, in (token count descending, owner) order. */
export interface HolderCursor {
  tokenCount: number
  owner: string
}

const ONE = '1'

/** Compares two canonical decimals by value. */
export function compareDecimals(a: string, b: string): number {
  if (a.length !== b.length) return a.length - b.length
  return a < b ? -1 : a > b ? 1 : 0
}

/** Strings kept as one string and where each ends. */
class StringColumn {
  private readonly text: string
  private readonly ends: Uint32Array

  constructor(values: readonly string[]) {
    this.ends = new Uint32Array(values.length)
    let end = 0
    for (const [i, value] of values.entries()) {
      end += value.length
      this.ends[i] = end
    }
    this.text = values.join('')
  }

  get(i: number): string {
    return this.text.slice(i === 0 ? 0 : this.ends[i - 1], this.ends[i])
  }

  get bytes(): number {
    return this.text.length + 4 * this.ends.length
  }
}

/** Heap bytes of a balances column: a slot each, and a string of its own where one is not 1 (about 16 bytes and its text). */
function balancesBytes(balances: ReadonlyArray<string | null> | null): number {
  if (!balances) return 0
  let bytes = 8 * balances.length
  for (const b of balances) if (b !== null && b !== ONE) bytes += 16 + b.length
  return bytes
}

/** The first index in [lo, hi) whose row `isAfter` holds for (rows in order); hi when none. */
function firstIndexAfter(lo: number, hi: number, isAfter: (i: number) => boolean): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (isAfter(mid)) hi = mid
    else lo = mid + 1
  }
  return lo
}

/** Rows kept in columns, read back one at a time. */
abstract class Columns<Row> {
  abstract get length(): number
  /** Row `i` as the query returned it. */
  abstract row(i: number): Row

  /** Rows [start, end), as Array.slice gives them. */
  slice(start: number, end: number): Row[] {
    const out: Row[] = []
    for (let i = start; i < Math.min(end, this.length); i++) out.push(this.row(i))
    return out
  }
}

/** A collection's holders at a block, most tokens first, then by owner. */
export class HolderColumns extends Columns<HolderAtRow> {
  private constructor(
    private readonly owners: StringColumn,
    private readonly tokenCounts: Float64Array,
    /** Null on an ERC-721 collection. */
    private readonly balances: Array<string | null> | null,
  ) {
    super()
  }

  static of(rows: readonly HolderAtRow[]): HolderColumns {
    const multi = rows.some((r) => r.balance !== null)
    return new HolderColumns(
      new StringColumn(rows.map((r) => r.owner)),
      Float64Array.from(rows, (r) => r.token_count),
      multi ? rows.map((r) => r.balance) : null,
    )
  }

  get length(): number {
    return this.tokenCounts.length
  }

  /** Heap bytes held, about: what the snapshot cache counts. */
  get bytes(): number {
    return this.owners.bytes + 8 * this.length + balancesBytes(this.balances)
  }

  row(i: number): HolderAtRow {
    return {
      owner: this.owners.get(i),
      token_count: this.tokenCounts[i]!,
      balance: this.balances?.[i] ?? null,
    }
  }

  /** The first row after `cursor`; length when none. */
  firstAfter(cursor: HolderCursor): number {
    return firstIndexAfter(0, this.length, (i) => {
      const count = this.tokenCounts[i]!
      return count < cursor.tokenCount || (count === cursor.tokenCount && this.owners.get(i) > cursor.owner)
    })
  }
}

/** A wallet's holdings at a block, by (collection, token id, row id). */
export class HoldingColumns extends Columns<HoldingAtRow> {
  private constructor(
    /** The distinct collections in order, whether each is ERC-1155... */
    private readonly collections: string[],
    private readonly multi: boolean[],
    /** ...and the row each starts at, then the row count. */
    private readonly starts: Int32Array,
    private readonly tokenIds: StringColumn,
    private readonly rowIds: Float64Array,
    /** Each row's balance; null when every one is 1. */
    private readonly balances: string[] | null,
  ) {
    super()
  }

  static of(rows: readonly HoldingAtRow[]): HoldingColumns {
    const collections: string[] = []
    const multi: boolean[] = []
    const starts: number[] = []
    for (const [i, row] of rows.entries()) {
      if (collections[collections.length - 1] === row.collection_address) continue
      collections.push(row.collection_address)
      multi.push(row.multi)
      starts.push(i)
    }
    starts.push(rows.length)
    const allOne = rows.every((r) => r.balance === ONE)
    return new HoldingColumns(
      collections,
      multi,
      Int32Array.from(starts),
      new StringColumn(rows.map((r) => r.token_id)),
      Float64Array.from(rows, (r) => safeInteger(r.id)),
      allOne ? null : rows.map((r) => (r.balance === ONE ? ONE : r.balance)),
    )
  }

  get length(): number {
    return this.rowIds.length
  }

  /** Heap bytes held, about: what the snapshot cache counts. */
  get bytes(): number {
    const n = this.length
    return this.tokenIds.bytes + 8 * n + balancesBytes(this.balances) + 80 * this.collections.length
  }

  row(i: number): HoldingAtRow {
    const c = this.collectionOf(i)
    return {
      id: String(this.rowIds[i]),
      collection_address: this.collections[c]!,
      token_id: this.tokenIds.get(i),
      balance: this.balances?.[i] ?? ONE,
      multi: this.multi[c]!,
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
    return firstIndexAfter(
      this.starts[c]!,
      this.starts[c + 1]!,
      (i) => (compareDecimals(this.tokenIds.get(i), cursor.tokenId) || this.rowIds[i]! - cursor.id) > 0,
    )
  }

  /** The index of the first collection not before `collection`. */
  private collectionIndex(collection: string): number {
    return firstIndexAfter(0, this.collections.length, (c) => this.collections[c]! >= collection)
  }

  /** The collection row `i` belongs to: the last whose start is at or before it. */
  private collectionOf(i: number): number {
    return firstIndexAfter(0, this.collections.length, (c) => this.starts[c]! > i) - 1
  }
}
