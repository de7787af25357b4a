/**
 * `npm run bench:ratelimit`: what the rate limiter adds to one /v1 request.
 *
 * A request takes two atomic checks (client IP, then credential: one Lua
 * script call each) and, when it ends, releases its two concurrency slots
 * (one ZREM each, not awaited by the response). Measured here against Redis
 * (REDIS_URL, default redis://127.0.0.1:6379; keys under a private prefix,
 * deleted afterwards) and the in-process store, with the specification's
 * policies (5/s, 300/min, 10 concurrent), sequentially and with concurrent
 * clients. Target: < 0.5 ms p50 per request with Redis.
 */
import { randomBytes } from 'node:crypto'
import { parseConfig } from '@/config/env'
import { MemoryLimitStore } from '@/server/ratelimit/memory-store'
import { policiesFromConfig } from '@/server/ratelimit/policy'
import { RedisLimitStore } from '@/server/ratelimit/redis-store'
import type { LimitStore } from '@/server/ratelimit/store'

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 20_000)
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32)
const LEASE_MS = 30_000

const policies = policiesFromConfig(parseConfig({} as unknown as NodeJS.ProcessEnv))

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}

function summary(label: string, samples: number[], wallMs?: number) {
  const sorted = [...samples].sort((a, b) => a - b)
  const fmt = (v: number) => `${v.toFixed(3)} ms`
  const rate = wallMs ? `  ${Math.round((samples.length / wallMs) * 1000).toLocaleString('en')} req/s` : ''
  console.log(
    `${label.padEnd(46)} p50 ${fmt(percentile(sorted, 50))}  p99 ${fmt(percentile(sorted, 99))}  max ${fmt(sorted.at(-1)!)}${rate}`,
  )
  return percentile(sorted, 50)
}

/** One request's limiter work: IP check, credential check (both awaited), then the releases. */
async function request(
  store: LimitStore,
  i: number,
  refusedShare: boolean,
): Promise<{ check: number; total: number }> {
  const token = randomBytes(12).toString('base64url')
  // Fresh subjects (every request allowed), or one exhausted subject (every request refused).
  const ip = refusedShare ? 'ip:bench-hot' : `ip:10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`
  const key = refusedShare ? 'key:hot' : `key:${i}`
  const start = performance.now()
  const ipDecision = await store.acquire(policies.ipKey, ip, token, LEASE_MS)
  if (ipDecision.allowed) {
    const keyDecision = await store.acquire(policies.key, key, token, LEASE_MS)
    const check = performance.now() - start
    await Promise.all([store.release(policies.ipKey, ip, token), store.release(policies.key, key, token)])
    if (!keyDecision.allowed) await store.refund(policies.ipKey, ip, token)
    return { check, total: performance.now() - start }
  }
  const check = performance.now() - start
  return { check, total: check }
}

async function run(store: LimitStore, label: string, concurrency: number, refused = false) {
  // Warm-up (script load, JIT).
  for (let i = 0; i < 500; i++) await request(store, 10_000_000 + i, refused)
  const checks: number[] = []
  const totals: number[] = []
  let next = 0
  const started = performance.now()
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < ITERATIONS) {
        const i = next++
        const { check, total } = await request(store, i + (refused ? 0 : concurrency * 1_000_000), refused)
        checks.push(check)
        totals.push(total)
      }
    }),
  )
  const wall = performance.now() - started
  const p50 = summary(`${label}: checks (added to the response)`, checks, wall)
  summary(`${label}: checks + releases`, totals)
  return p50
}

/**
 * The in-process store with one subject under a high quota (an internal key at
 * 1,000 req/s against a per-minute window): its log holds 60,000 arrivals and
 * every request expires the oldest. Simulated clock, 1 request per ms.
 */
async function busyWindow() {
  let now = 0
  const store = new MemoryLimitStore(() => now)
  const policy = { ...policies.key, windows: [{ name: 'min', limit: 10_000_000, windowMs: 60_000 }] }
  delete policy.concurrent
  for (; now < 60_000; now++) await store.acquire(policy, 'busy', String(now), LEASE_MS)
  const samples: number[] = []
  for (; now < 60_000 + ITERATIONS; now++) {
    const start = performance.now()
    await store.acquire(policy, 'busy', String(now), LEASE_MS)
    samples.push(performance.now() - start)
  }
  await store.close()
  summary('in-process, 60,000 arrivals in the window', samples)
}

async function main() {
  console.log(`rate limiter cost per /v1 request (${ITERATIONS.toLocaleString('en')} requests each)\n`)
  const prefix = `bench-${process.pid}-${Date.now()}:`
  const redis = new RedisLimitStore({ url: REDIS_URL, prefix, commandTimeoutMs: 2000 })
  if (!(await redis.ready(3000))) {
    console.error(`Redis at ${REDIS_URL} is not reachable; set REDIS_URL`)
    process.exit(1)
  }
  let redisP50 = 0
  try {
    redisP50 = await run(redis, 'redis, sequential', 1)
    await run(redis, `redis, ${CONCURRENCY} concurrent clients`, CONCURRENCY)
    await run(redis, 'redis, sequential, refused (exhausted)', 1, true)
  } finally {
    // Leave nothing behind in a shared Redis.
    let cursor = '0'
    do {
      const [nextCursor, keys] = await redis.redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000)
      cursor = nextCursor
      if (keys.length > 0) await redis.redis.del(...keys)
    } while (cursor !== '0')
    await redis.close()
  }
  const memory = new MemoryLimitStore()
  await run(memory, 'in-process, sequential', 1)
  await memory.close()
  await busyWindow()
  console.log(
    `\nredis p50 ${redisP50.toFixed(3)} ms per request: ${redisP50 < 0.5 ? 'within' : 'OVER'} the 0.5 ms target`,
  )
}

await main()
