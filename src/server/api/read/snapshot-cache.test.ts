/**
 * The snapshot cache (src/server/api/read/snapshot-cache.ts): one computation
 * per key however many callers wait, least recently used snapshots evicted
 * once the bytes held pass the bound, failures and oversized snapshots not
 * kept, and at most two computed at once.
 */
import { describe, expect, it } from 'vitest'
import { ApiError } from '@/server/errors/api-error'
import { SnapshotCache } from './snapshot-cache'

const rows = (n: number) => Array.from({ length: n }, (_, i) => i)
/** A row counted as one byte: the bounds below are in rows. */
const count = (r: number[]) => r.length

describe('SnapshotCache', () => {
  it('computes a snapshot once for concurrent and later callers', async () => {
    const cache = new SnapshotCache(100)
    let computed = 0
    let release!: () => void
    const gate = new Promise<void>((resolve) => {
      release = resolve
    })
    const compute = async () => {
      computed++
      await gate
      return rows(10)
    }
    const waiting = [
      cache.get('a', compute, count),
      cache.get('a', compute, count),
      cache.get('a', compute, count),
    ]
    release()
    for (const result of await Promise.all(waiting)) expect(result).toEqual(rows(10))
    expect(await cache.get('a', compute, count)).toEqual(rows(10))
    expect(computed).toBe(1)
    expect(cache.bytes).toBe(10)
  })

  it('evicts the least recently used snapshots once the bytes pass the bound', async () => {
    const cache = new SnapshotCache(25)
    const computed: string[] = []
    const get = (key: string, n = 10) =>
      cache.get(
        key,
        async () => {
          computed.push(key)
          return rows(n)
        },
        count,
      )
    await get('a')
    await get('b')
    await get('a') // a is now the most recently used
    await get('c') // 30 entries: b goes
    expect(cache.bytes).toBe(20)
    await get('a')
    await get('c')
    await get('b')
    expect(computed).toEqual(['a', 'b', 'c', 'b'])
    expect(cache.bytes).toBeLessThanOrEqual(25)
  })

  it('keeps neither a failed computation nor a snapshot larger than the bound', async () => {
    const cache = new SnapshotCache(5)
    await expect(cache.get('x', () => Promise.reject(new Error('down')), count)).rejects.toThrow('down')
    expect(await cache.get('x', async () => rows(3), count)).toEqual(rows(3))
    let big = 0
    for (let i = 0; i < 2; i++)
      await cache.get(
        'big',
        async () => {
          big++
          return rows(6)
        },
        count,
      )
    expect(big).toBe(2)
    expect(cache.bytes).toBe(3)
    expect(cache.size).toBe(1)
  })
})

describe('snapshot computations', () => {
  it('run two at a time; later ones wait their turn, and beyond the queue answer 503', async () => {
    const cache = new SnapshotCache(1_000, 2, 1)
    const gates = new Map<string, () => void>()
    const started: string[] = []
    const compute = (key: string) => () => {
      started.push(key)
      return new Promise<number[]>((resolve) => gates.set(key, () => resolve(rows(1))))
    }
    const a = cache.get('a', compute('a'), count)
    const b = cache.get('b', compute('b'), count)
    const c = cache.get('c', compute('c'), count)
    // A fourth while two compute and one waits: refused, and not kept.
    const refused = await cache.get('d', compute('d'), count).catch((err: ApiError) => err)
    expect(refused).toBeInstanceOf(ApiError)
    expect(refused).toMatchObject({ status: 503, headers: { 'Retry-After': '5' } })
    await Promise.resolve()
    expect(started).toEqual(['a', 'b'])
    // The same snapshot asked again waits for its one computation, taking no turn.
    const againA = cache.get('a', compute('a'), count)
    gates.get('a')!()
    await a
    // a's turn went to c, the first waiting: e, arriving after, waits behind it.
    const e = cache.get('e', compute('e'), count)
    await new Promise((r) => setImmediate(r))
    expect(started).toEqual(['a', 'b', 'c'])
    gates.get('b')!()
    expect(await Promise.all([againA, b])).toEqual([rows(1), rows(1)])
    await new Promise((r) => setImmediate(r))
    expect(started).toEqual(['a', 'b', 'c', 'e'])
    gates.get('c')!()
    gates.get('e')!()
    expect(await Promise.all([c, e])).toEqual([rows(1), rows(1)])
    // With a turn free again, the refused snapshot is computed.
    const d = cache.get('d', compute('d'), count)
    await Promise.resolve()
    gates.get('d')!()
    expect(await d).toEqual(rows(1))
    expect(started).toEqual(['a', 'b', 'c', 'e', 'd'])
  })

  it('one computing or waiting at a time per requester: another of its own answers 429', async () => {
    const cache = new SnapshotCache(1_000, 2, 4)
    const gates = new Map<string, () => void>()
    const compute = (key: string) => () =>
      new Promise<number[]>((resolve) => gates.set(key, () => resolve(rows(1))))
    const mine = cache.get('block-1', compute('block-1'), count, 'key:1')
    // The same requester asks another block while its first computes: refused, not queued.
    const refused = await cache
      .get('block-2', compute('block-2'), count, 'key:1')
      .catch((err: ApiError) => err)
    expect(refused).toMatchObject({ status: 429, code: 'RATE_LIMITED', headers: { 'Retry-After': '5' } })
    // Others compute theirs; anyone (the same requester too) joins a computation in flight.
    const theirs = cache.get('block-3', compute('block-3'), count, 'key:2')
    const joined = cache.get('block-1', compute('block-1'), count, 'key:1')
    const joinedByOther = cache.get('block-1', compute('block-1'), count, 'key:2')
    gates.get('block-1')!()
    gates.get('block-3')!()
    expect(await Promise.all([mine, joined, joinedByOther, theirs])).toEqual([
      rows(1),
      rows(1),
      rows(1),
      rows(1),
    ])
    // Once its computation is done, the requester may start another.
    const next = cache.get('block-2', compute('block-2'), count, 'key:1')
    await Promise.resolve()
    gates.get('block-2')!()
    expect(await next).toEqual(rows(1))
    // A failed computation frees its requester too.
    const failing = cache.get('block-4', () => Promise.reject(new Error('timeout')), count, 'key:1')
    await expect(failing).rejects.toThrow('timeout')
    const after = cache.get('block-5', compute('block-5'), count, 'key:1')
    await Promise.resolve()
    gates.get('block-5')!()
    expect(await after).toEqual(rows(1))
  })
})
