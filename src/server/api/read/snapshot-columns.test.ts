/**
 * Snapshots in columns (src/server/api/read/snapshot-columns.ts): every row
 * comes back as the query returned it, and every cursor finds the same first
 * row as a comparison of the values (token ids as numbers) does.
 */
import { describe, expect, it } from 'vitest'
import type { HolderAtRow, HoldingAtRow } from '@/db/queries/owners'
import { compareDecimals, HolderColumns, HoldingColumns, type HoldingCursor } from './snapshot-columns'

const A = '0x00000000000000000000000000000000000000aa'
const B = '0x00000000000000000000000000000000000000bb'
const C = '0x00000000000000000000000000000000000000cc'

/** Collection C is ERC-1155. */
const row = (collection: string, tokenId: string, id: number, balance = '1'): HoldingAtRow => ({
  id: String(id),
  collection_address: collection,
  token_id: tokenId,
  balance,
  multi: collection === C,
})

/** Rows in (collection, token id as a number, id) order, token ids of every length. */
const rows: HoldingAtRow[] = [
  row(A, '0', 7),
  row(A, '2', 3),
  row(A, '9', 1),
  row(A, '10', 2),
  row(A, '10', 9),
  row(A, '100', 4),
  row(C, '5', 5),
  row(C, '115792089237316195423570985008687907853269984665640564039457584007913129639935', 6),
]

/** Is row `r` after the cursor, comparing the values? */
const after = (r: HoldingAtRow, c: HoldingCursor) =>
  r.collection_address > c.collection ||
  (r.collection_address === c.collection &&
    (BigInt(r.token_id) > BigInt(c.tokenId) ||
      (BigInt(r.token_id) === BigInt(c.tokenId) && Number(r.id) > c.id)))

describe('a wallet’s holdings in columns', () => {
  const columns = HoldingColumns.of(rows)

  it('gives back every row as the query returned it', () => {
    expect(columns.length).toBe(rows.length)
    expect(rows.map((_, i) => columns.row(i))).toEqual(rows)
    for (const [start, end] of [
      [0, 8],
      [2, 5],
      [6, 100],
      [8, 9],
      [3, 3],
    ] as const)
      expect(columns.slice(start, end)).toEqual(rows.slice(start, end))
  })

  it('finds the first row after any cursor, in and between collections and token ids', () => {
    const cursors: HoldingCursor[] = []
    for (const collection of ['0x00', A, B, C, '0xff'])
      for (const tokenId of ['0', '1', '2', '9', '10', '11', '99', '100', '101', '5', rows[7]!.token_id])
        for (const id of [0, 2, 3, 9, 10]) cursors.push({ collection, tokenId, id })
    for (const cursor of cursors) {
      const expected = rows.findIndex((r) => after(r, cursor))
      expect(columns.firstAfter(cursor), JSON.stringify(cursor)).toBe(
        expected === -1 ? rows.length : expected,
      )
    }
  })

  it('gives the rows of one collection, and an empty range where the wallet holds none', () => {
    expect(columns.rangeOf(A)).toEqual({ start: 0, end: 6 })
    expect(columns.rangeOf(C)).toEqual({ start: 6, end: 8 })
    expect(columns.rangeOf(B)).toEqual({ start: 6, end: 6 })
    expect(columns.rangeOf('0xff')).toEqual({ start: 8, end: 8 })
  })

  it('keeps ERC-1155 balances, and counts them in its size', () => {
    const editions = [row(A, '1', 1, '250'), row(A, '2', 2), row(B, '1', 3, '99999999999999999999')]
    const multi = HoldingColumns.of(editions)
    expect(editions.map((_, i) => multi.row(i))).toEqual(editions)
    expect(multi.bytes).toBeGreaterThan(
      HoldingColumns.of(editions.map((r) => ({ ...r, balance: '1' }))).bytes,
    )
  })

  it('holds nothing for a wallet that held nothing', () => {
    const empty = HoldingColumns.of([])
    expect(empty.length).toBe(0)
    expect(empty.firstAfter({ collection: A, tokenId: '1', id: 1 })).toBe(0)
    expect(empty.rangeOf(A)).toEqual({ start: 0, end: 0 })
  })
})

describe('a collection’s holders in columns', () => {
  const owner = (n: number) => `0x${n.toString(16).padStart(40, '0')}`
  // Most tokens first, then by owner; ties of every size.
  const holders: HolderAtRow[] = [
    { owner: owner(9), token_count: 5, balance: null },
    { owner: owner(1), token_count: 3, balance: null },
    { owner: owner(2), token_count: 3, balance: null },
    { owner: owner(7), token_count: 3, balance: null },
    { owner: owner(3), token_count: 1, balance: null },
  ]
  const columns = HolderColumns.of(holders)

  it('gives back every row as the query returned it', () => {
    expect(holders.map((_, i) => columns.row(i))).toEqual(holders)
    const editions = holders.map((h, i) => ({ ...h, balance: String(i * 1000) }))
    const multi = HolderColumns.of(editions)
    expect(editions.map((_, i) => multi.row(i))).toEqual(editions)
    expect(multi.bytes).toBeGreaterThan(columns.bytes)
  })

  it('finds the first row after any cursor, in and between token counts and owners', () => {
    for (const tokenCount of [6, 5, 4, 3, 2, 1, 0])
      for (const n of [0, 1, 2, 5, 7, 9, 10]) {
        const cursor = { tokenCount, owner: owner(n) }
        const expected = holders.findIndex(
          (h) => h.token_count < tokenCount || (h.token_count === tokenCount && h.owner > cursor.owner),
        )
        expect(columns.firstAfter(cursor), JSON.stringify(cursor)).toBe(
          expected === -1 ? holders.length : expected,
        )
      }
    expect(HolderColumns.of([]).firstAfter({ tokenCount: 1, owner: owner(1) })).toBe(0)
  })
})

describe('comparing canonical decimals', () => {
  it('orders by value', () => {
    const values = ['0', '1', '9', '10', '11', '99', '100', '18446744073709551616']
    for (const [i, a] of values.entries())
      for (const [j, b] of values.entries()) expect(Math.sign(compareDecimals(a, b))).toBe(Math.sign(i - j))
  })
})
