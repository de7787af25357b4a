/**
 * The rate limiter of one web process: the configured policies over a store —
 * Redis when REDIS_URL is set (shared by every web process), the in-process
 * store otherwise (embedded single-process mode only).
 */
import type { Config } from '@/config/env'
import type { Logger } from '@/config/logger'
import { MemoryLimitStore } from './memory-store'
import { type Policies, policiesFromConfig } from './policy'
import { RedisLimitStore } from './redis-store'
import type { LimitStore } from './store'

export interface RateLimiter {
  store: LimitStore
  policies: Policies
  /** Lifetime of a concurrency slot. */
  leaseMs: number
  /** Waits (bounded) for the store to be reachable; requests fail closed until it is. */
  ready(timeoutMs?: number): Promise<boolean>
  close(): Promise<void>
}

export function createRateLimiter(config: Config, logger?: Logger): RateLimiter {
  const store: LimitStore = config.REDIS_URL
    ? new RedisLimitStore({
        url: config.REDIS_URL,
        prefix: config.REDIS_KEY_PREFIX,
        commandTimeoutMs: config.RATE_LIMIT_TIMEOUT_MS,
        logger,
      })
    : new MemoryLimitStore()
  return {
    store,
    policies: policiesFromConfig(config),
    leaseMs: config.RATE_LIMIT_LEASE_MS,
    ready: async (timeoutMs = 3000) => (store instanceof RedisLimitStore ? store.ready(timeoutMs) : true),
    close: () => store.close(),
  }
}
