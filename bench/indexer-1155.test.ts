/**
 * The ERC-1155 mix of bench:indexer:1155: the operations it sends never overdraw a holder and
 * have the asked-for shape, and its check counts every balance that differs from the chain.
 */
import { type Address, keccak256, toHex } from 'viem'
import { describe, expect, it } from 'vitest'
import { collectionOps, describeAgainst, HOLDERS, type Truth } from './indexer-1155'

const ZERO = '0x0000000000000000000000000000000000000000'
const holders = Array.from({ length: HOLDERS }, (_, i) => `0x${keccak256(toHex(i)).slice(26)}` as Address)

describe('collectionOps', () => {
  const ops = collectionOps(7, holders)

  it('never moves or burns more than the holder has', () => {
    const balances = new Map<string, bigint>()
    for (const op of ops)
      op.ids.forEach((id, i) => {
        const value = op.values[i]!
        expect(value).toBeGreaterThan(0n)
        if (op.from !== ZERO) {
          const left = (balances.get(`${op.from}:${id}`) ?? 0n) - value
          expect(left).toBeGreaterThanOrEqual(0n)
          balances.set(`${op.from}:${id}`, left)
        }
        if (op.to !== ZERO) balances.set(`${op.to}:${id}`, (balances.get(`${op.to}:${id}`) ?? 0n) + value)
      })
  })

  it('mixes mints, transfers and burns, about half the logs batches of 2-20 distinct ids', () => {
    const records = ops.reduce((n, op) => n + op.ids.length, 0)
    expect(records).toBeGreaterThanOrEqual(4_000)
    const batches = ops.filter((op) => op.ids.length > 1)
    expect(batches.length / ops.length).toBeGreaterThan(0.42)
    expect(batches.length / ops.length).toBeLessThan(0.58)
    for (const op of batches) {
      expect(op.ids.length).toBeLessThanOrEqual(20)
      expect(new Set(op.ids).size).toBe(op.ids.length)
    }
    const kinds = (p: (op: (typeof ops)[number]) => boolean) => ops.filter(p).length / ops.length
    expect(kinds((op) => op.from === ZERO)).toBeGreaterThan(0.3)
    expect(kinds((op) => op.to === ZERO)).toBeGreaterThan(0.05)
    expect(kinds((op) => op.from !== ZERO && op.to !== ZERO)).toBeGreaterThan(0.2)
  })
})

describe('describeAgainst', () => {
  const truth: Truth = {
    records: new Map([
      ['0xaa:0:0', { collection: '0xc', tokenId: '1', from: ZERO, to: '0xh1', amount: '5', block: '3' }],
    ]),
    balances: new Map([
      ['0xc:1:0xh1', 3n],
      ['0xc:1:0xh2', 2n],
      ['0xc:2:0xh1', 7n],
    ]),
    supplies: new Map([
      ['0xc:1', 5n],
      ['0xc:2', 7n],
    ]),
  }
  const record = {
    key: '0xaa:0:0',
    collection: '0xc',
    tokenId: '1',
    from: ZERO,
    to: '0xh1',
    amount: '5',
    block: '3',
  }

  it('reports 0 when every non-zero balance agrees (zero rows count as no row)', () => {
    const text = describeAgainst(
      truth,
      [
        { key: '0xc:1:0xh1', value: '3' },
        { key: '0xc:1:0xh2', value: '2' },
        { key: '0xc:2:0xh1', value: '7' },
        { key: '0xc:2:0xh2', value: '0' },
      ],
      [
        { key: '0xc:1', value: '5' },
        { key: '0xc:2', value: '7' },
      ],
      [record],
    )
    expect(text).toMatch(/^wrong balances: 0 .*wrong supplies: 0 .*rows differing: 0 /)
  })

  it('counts a wrong, an extra and a missing balance, a wrong supply and a wrong amount', () => {
    const text = describeAgainst(
      truth,
      [
        { key: '0xc:1:0xh1', value: '4' },
        { key: '0xc:1:0xh2', value: '2' },
        { key: '0xc:3:0xh1', value: '1' },
      ],
      [
        { key: '0xc:1', value: '5' },
        { key: '0xc:2', value: '6' },
      ],
      [{ ...record, amount: '4' }],
    )
    expect(text).toContain('wrong balances: 3 (1 missing, 1 extra, 1 wrong)')
    expect(text).toContain('wrong supplies: 1 (0 missing, 0 extra, 1 wrong)')
    expect(text).toContain('id/value rows differing: 1 (0 missing, 0 extra, 1 wrong)')
  })
})
