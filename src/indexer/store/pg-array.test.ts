import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import { boolArray, int4Array, int8Array, numericArray, timestamptzArray, varcharArray } from './pg-array'

let db: TestDatabase

beforeAll(async () => {
  db = await createTestDatabase()
}, 60_000)
afterAll(async () => {
  await db?.drop()
})

/** Each array as the server reads it, returned as text so nothing is converted on the way back. */
async function roundTrip(param: Buffer, type: string): Promise<(string | null)[]> {
  const { rows } = await db.pool.query(`SELECT $1::${type}[]::text[] AS v`, [param])
  return rows[0].v
}

describe('binary array parameters', () => {
  it('sends any string through varchar[] unchanged', async () => {
    const values = [
      '0x00000000000000000000000000000000000000a1',
      '',
      'NULL',
      'a,b',
      '{x}',
      'say "hi"',
      'back\\slash',
      ' padded ',
      'ünïcødé 🦊',
      null,
    ]
    expect(await roundTrip(varcharArray(values), 'varchar')).toEqual(values)
  })

  it('writes integers, booleans and nulls as PostgreSQL reads them', async () => {
    expect(await roundTrip(int8Array([1n, -2n, null, 2n ** 63n - 1n, 42]), 'int8')).toEqual([
      '1',
      '-2',
      null,
      (2n ** 63n - 1n).toString(),
      '42',
    ])
    expect(await roundTrip(int4Array([0, 7, -1, null, 2 ** 31 - 1]), 'int4')).toEqual([
      '0',
      '7',
      '-1',
      null,
      String(2 ** 31 - 1),
    ])
    expect(await roundTrip(boolArray([true, false, null]), 'bool')).toEqual(['true', 'false', null])
    expect(await roundTrip(int8Array([]), 'int8')).toEqual([])
  })

  it('writes Unix seconds as the same instant', async () => {
    const seconds = [0n, 946_684_800n, 1_600_000_012n, 4_102_444_800n]
    const { rows } = await db.pool.query(
      'SELECT array_agg(extract(epoch FROM t)::int8::text) AS v FROM unnest($1::timestamptz[]) AS t',
      [timestamptzArray(seconds)],
    )
    expect(rows[0].v).toEqual(seconds.map(String))
  })

  it('writes every non-negative integer up to 2^256 - 1 exactly as numeric', async () => {
    const edge = [0n, 1n, 9999n, 10000n, 10001n, 100000000n, 2n ** 256n - 1n, 10n ** 77n]
    expect(await roundTrip(numericArray(edge), 'numeric')).toEqual(edge.map(String))
    expect(await roundTrip(numericArray(['000', '0042']), 'numeric')).toEqual(['0', '42'])
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.bigInt({ min: 0n, max: 2n ** 256n - 1n }), { maxLength: 50 }),
        async (ids) => {
          expect(await roundTrip(numericArray(ids), 'numeric')).toEqual(ids.map(String))
        },
      ),
      { numRuns: 50 },
    )
  })

  it('writes negative integers and nulls (ERC-1155 balance changes, ERC-721 rows without an amount)', async () => {
    const values = [-1n, -9999n, -10000n, -(2n ** 256n - 1n), null, 0n, 5n, null]
    expect(await roundTrip(numericArray(values), 'numeric')).toEqual(
      values.map((v) => (v === null ? null : String(v))),
    )
    expect(await roundTrip(numericArray(['-0', '-00042']), 'numeric')).toEqual(['0', '-42'])
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.option(fc.bigInt({ min: -(2n ** 256n), max: 2n ** 256n })), { maxLength: 50 }),
        async (values) => {
          expect(await roundTrip(numericArray(values), 'numeric')).toEqual(
            values.map((v) => (v === null ? null : String(v))),
          )
        },
      ),
      { numRuns: 50 },
    )
  })

  it('refuses what is not an integer', () => {
    expect(() => numericArray(['-'])).toThrow(RangeError)
    expect(() => numericArray(['1e3'])).toThrow(RangeError)
    expect(() => numericArray(['--1'])).toThrow(RangeError)
    expect(() => numericArray([''])).toThrow(RangeError)
  })
})
