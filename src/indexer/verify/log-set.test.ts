import type { Hex } from 'viem'
import { describe, expect, it } from 'vitest'
import type { RawLog } from '../chain'
import { forEachDifference, InconsistentLogsError, mergeLogs, normaliseLogs, sameLogs } from './log-set'

describe('normaliseLogs', () => {
  const log = (block: number, index: number, data = '0x01'): RawLog => ({
    address: '0x00000000000000000000000000000000000000aa',
    topics: ['0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef'],
    data: data as Hex,
    blockNumber: `0x${block.toString(16)}`,
    blockHash: `0x${block.toString(16).padStart(64, '0')}`,
    transactionHash: `0x${(block * 10 + index).toString(16).padStart(64, '0')}`,
    logIndex: `0x${index.toString(16)}`,
  })
  const positions = (logs: RawLog[]) => logs.map((l) => `${Number(l.blockNumber)}:${Number(l.logIndex)}`)

  it('keeps an answer in order as it is, and sorts and deduplicates any other', () => {
    const inOrder = [log(1, 0), log(1, 1), log(2, 0)]
    expect(normaliseLogs(inOrder)).toBe(inOrder)
    const shuffled = [log(2, 0), log(1, 1), log(1, 0), log(2, 0), { ...log(1, 1), data: '0x01' as Hex }]
    expect(positions(normaliseLogs(shuffled))).toEqual(['1:0', '1:1', '2:0'])
    // The same log in other hex casing is the same log.
    const upper = {
      ...log(1, 0),
      blockHash: log(1, 0).blockHash.toUpperCase().replace('0X', '0x') as Hex,
    }
    expect(positions(normaliseLogs([log(1, 0), upper]))).toEqual(['1:0'])
    expect(normaliseLogs([log(1, 0), { ...log(1, 1), removed: true }])).toHaveLength(1)
  })

  it('refuses two different logs at one position', () => {
    expect(() => normaliseLogs([log(1, 0), log(1, 0, '0x02')])).toThrow(InconsistentLogsError)
  })

  it('refuses logs of two blocks at one height, in order or not', () => {
    const stale = { ...log(1, 1), blockHash: `0x${'ab'.repeat(32)}` as Hex }
    expect(() => normaliseLogs([log(1, 0), stale, log(2, 0)])).toThrow(/two blocks at height 1/)
    expect(() => normaliseLogs([log(2, 0), stale, log(1, 0)])).toThrow(InconsistentLogsError)
    // The same hash in other casing is the same block.
    const upper = { ...log(1, 1), blockHash: log(1, 1).blockHash.toUpperCase().replace('0X', '0x') as Hex }
    expect(normaliseLogs([log(1, 0), upper])).toHaveLength(2)
  })

  it('compares reads on every field of every log', () => {
    expect(sameLogs([log(1, 0)], [log(1, 0)])).toBe(true)
    expect(sameLogs([log(1, 0)], [log(1, 0, '0x02')])).toBe(false)
    expect(sameLogs([log(1, 0)], [{ ...log(1, 0), topics: [] }])).toBe(false)
    expect(sameLogs([log(1, 0)], [])).toBe(false)
  })

  it('merges two reads in chain order, a log both hold once', () => {
    const a = [log(1, 0), log(1, 2), log(3, 0)]
    // Block numbers written with a leading zero are the same blocks.
    const b = [log(1, 1), { ...log(1, 2), blockNumber: '0x01' as Hex }, log(2, 0), log(3, 0)]
    const merged = normaliseLogs(mergeLogs(a, b))
    expect(positions(merged)).toEqual(['1:0', '1:1', '1:2', '2:0', '3:0'])
    expect(merged[2]).toBe(a[1])
    expect(mergeLogs([], b)).toEqual(b)
    // Two different logs at one position: the merge keeps both, and normaliseLogs refuses them.
    expect(() => normaliseLogs(mergeLogs([log(1, 0)], [log(1, 0, '0x02')]))).toThrow(InconsistentLogsError)
  })

  it('tells which logs one read holds and the other does not, field by field', () => {
    const onlyA: string[] = []
    const onlyB: string[] = []
    forEachDifference(
      [log(1, 0), log(1, 1, '0x05'), log(2, 0), log(4, 0)],
      [log(1, 0), log(1, 1), log(3, 0), log(4, 0)],
      (l) => onlyA.push(`${Number(l.blockNumber)}:${Number(l.logIndex)}:${l.data}`),
      (l) => onlyB.push(`${Number(l.blockNumber)}:${Number(l.logIndex)}:${l.data}`),
    )
    expect(onlyA).toEqual(['1:1:0x05', '2:0:0x01'])
    expect(onlyB).toEqual(['1:1:0x01', '3:0:0x01'])
  })
})
