/**
 * Renewing a concurrency slot's lease (LimitStore.renew), which a live stream
 * does for as long as it is open: in the in-process store and in Redis.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestRedis, type TestRedis } from '@/test/redis-server'
import { MemoryLimitStore } from './memory-store'
import type { LimitPolicy } from './policy'
import { RedisLimitStore } from './redis-store'
import type { LimitStore } from './store'

const policy: LimitPolicy = { id: 'renew-test', windows: [], concurrent: 1 }
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

let redis: TestRedis
let redisStore: RedisLimitStore

beforeAll(async () => {
  redis = await startTestRedis()
  redisStore = new RedisLimitStore({
    url: redis.url,
    prefix: `renew-${process.pid}:`,
    commandTimeoutMs: 1000,
  })
  await redisStore.ready(2000)
}, 30_000)
afterAll(async () => {
  await redisStore?.close()
  await redis?.stop()
})

describe.each([
  ['in-process', () => new MemoryLimitStore() as LimitStore],
  ['Redis', () => redisStore as LimitStore],
])('renewing a slot (%s store)', (_name, store) => {
  it('keeps the slot past its first lease; a lapsed or released slot cannot be renewed', async () => {
    const s = store()
    const subject = `s-${Math.random()}`
    expect((await s.acquire(policy, subject, 'a', 300)).allowed).toBe(true)
    for (let i = 0; i < 3; i++) {
      await sleep(150)
      expect(await s.renew(policy, subject, 'a', 300)).toBe(true)
    }
    // 450 ms after the first lease would have ended, the slot is still held.
    expect((await s.acquire(policy, subject, 'b', 300)).allowed).toBe(false)
    await sleep(400)
    // Not renewed for longer than its lease: gone, and another request takes it.
    expect(await s.renew(policy, subject, 'a', 300)).toBe(false)
    expect((await s.acquire(policy, subject, 'b', 300)).allowed).toBe(true)
    await s.release(policy, subject, 'b')
    expect(await s.renew(policy, subject, 'b', 300)).toBe(false)
    expect(await s.renew(policy, subject, 'never', 300)).toBe(false)
  })
})
