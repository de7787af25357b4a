/**
 * The Redis rate-limit store: one Lua script per check, so that counting and
 * the decision are atomic however many web processes share the Redis. Time is
 * Redis's own clock (TIME), so processes with skewed clocks agree.
 *
 * Each window is a sliding log: a sorted set of request tokens scored by
 * arrival (ms); a request passes when fewer than `limit` tokens lie in the
 * last `windowMs`. Exact at every instant (no fixed-window double burst), and
 * the oldest entry tells exactly when one more request can pass. Concurrency
 * slots are a sorted set of tokens scored by lease expiry.
 *
 * Fails closed: the client has no offline queue, no retries and a short
 * command timeout, so an unreachable Redis turns into LimiterUnavailableError
 * at once (connection refused or lost) or within RATE_LIMIT_TIMEOUT_MS (a
 * hung Redis), never into an unlimited request. A check that timed out is
 * refunded, so what a hung Redis runs once it resumes counts for nothing.
 */
import { createHash } from 'node:crypto'
import { Redis } from 'ioredis'
import type { Logger } from '@/config/logger'
import type { LimitDecision, LimitPolicy } from './policy'
import { decide, LimiterUnavailableError, type LimitStore } from './store'

// KEYS: window keys (n), then the concurrency key when ARGV[3] > 0.
// ARGV: token, n, concurrent limit (0 = none), lease ms, then limit and window ms per window.
// Returns: denied (0 = allowed, i = first exhausted window, n+1 = slots), slots in use, then count and reset ms per window.
const ACQUIRE = `
if redis.replicate_commands then redis.replicate_commands() end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local token = ARGV[1]
local n = tonumber(ARGV[2])
local concLimit = tonumber(ARGV[3])
local leaseMs = tonumber(ARGV[4])
local denied = 0
local out = {}
for i = 1, n do
  local limit = tonumber(ARGV[3 + 2 * i])
  local win = tonumber(ARGV[4 + 2 * i])
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now - win)
  local count = redis.call('ZCARD', KEYS[i])
  local reset = 0
  if count > 0 then
    local oldest = redis.call('ZRANGE', KEYS[i], 0, 0, 'WITHSCORES')
    reset = tonumber(oldest[2]) + win - now
  end
  if count >= limit and denied == 0 then denied = i end
  out[2 * i - 1] = count
  out[2 * i] = reset
end
local inUse = -1
if concLimit > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[n + 1], '-inf', now)
  inUse = redis.call('ZCARD', KEYS[n + 1])
  if inUse >= concLimit and denied == 0 then denied = n + 1 end
end
if denied == 0 then
  for i = 1, n do
    redis.call('ZADD', KEYS[i], now, token)
    redis.call('PEXPIRE', KEYS[i], tonumber(ARGV[4 + 2 * i]))
  end
  if concLimit > 0 then
    redis.call('ZADD', KEYS[n + 1], now + leaseMs, token)
    redis.call('PEXPIRE', KEYS[n + 1], leaseMs)
  end
end
local result = {denied, inUse}
for i = 1, 2 * n do result[2 + i] = out[i] end
return result
`

// KEYS: every key of the subject. ARGV: the token to give back.
const REFUND = `
for i = 1, #KEYS do redis.call('ZREM', KEYS[i], ARGV[1]) end
return 0
`

// KEYS: the concurrency key. ARGV: token, lease ms. Returns 1 when the token held a live slot (now renewed), else 0.
const RENEW = `
if redis.replicate_commands then redis.replicate_commands() end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score or tonumber(score) <= now then return 0 end
local leaseMs = tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], now + leaseMs, ARGV[1])
if redis.call('PTTL', KEYS[1]) < leaseMs then redis.call('PEXPIRE', KEYS[1], leaseMs) end
return 1
`

interface Script {
  lua: string
  sha: string
}

const script = (lua: string): Script => ({ lua, sha: createHash('sha1').update(lua).digest('hex') })
const acquireScript = script(ACQUIRE)
const refundScript = script(REFUND)
const renewScript = script(RENEW)

export interface RedisStoreOptions {
  url: string
  prefix: string
  /** Upper bound of one command; slower counts as unavailable. */
  commandTimeoutMs: number
  logger?: Logger
}

/** Undos kept while Redis is away; past it the oldest go (their leases expire on their own). */
const MAX_UNDOS = 10_000

export class RedisLimitStore implements LimitStore {
  readonly redis: Redis
  private readonly prefix: string
  private lastErrorLog = 0
  /**
   * Undos (the refund of a check that failed, a slot's release) that could not be sent: the
   * connection was down, or dropped with the check's answer. Sent again once it is back, in
   * order, before anything else; each is idempotent, so one that did run does no harm twice.
   */
  private readonly undos: Array<() => Promise<unknown>> = []

  constructor(options: RedisStoreOptions) {
    this.prefix = options.prefix
    this.redis = new Redis(options.url, {
      // Fail closed and fast: no queue while disconnected, no resend, no retries.
      enableOfflineQueue: false,
      autoResendUnfulfilledCommands: false,
      maxRetriesPerRequest: 0,
      commandTimeout: options.commandTimeoutMs,
      // A connection that answers nothing for this long is closed and opened anew: a command's
      // timeout alone leaves a silent socket (a dropped path, a middlebox) in place for good.
      socketTimeout: Math.max(2000, options.commandTimeoutMs * 3),
      connectTimeout: Math.max(1000, options.commandTimeoutMs * 4),
      // Keep trying to come back, at most once a second.
      retryStrategy: (times) => Math.min(times * 100, 1000),
      enableReadyCheck: true,
      // Each command is written when issued, so its timeout counts from the request's check.
      // (ioredis's auto-pipelining holds a batch back until the previous batch has answered:
      // with a hung Redis, a check would wait for another's timeout before its own began.)
      enableAutoPipelining: false,
      lazyConnect: false,
    })
    this.redis.on('ready', () => {
      // One that fails again (the connection went again) waits for the next time.
      for (const op of this.undos.splice(0)) void this.undo(op)
    })
    this.redis.on('error', (err) => {
      // Reconnection attempts fail once per retry; log at most every 10 s.
      const now = Date.now()
      if (now - this.lastErrorLog > 10_000) {
        this.lastErrorLog = now
        options.logger?.warn(
          { err: { message: err.message, code: (err as { code?: string }).code } },
          'rate limiter store error',
        )
      }
    })
  }

  /** Resolves when connected, or after `timeoutMs` (requests fail closed meanwhile). */
  async ready(timeoutMs: number): Promise<boolean> {
    if (this.redis.status === 'ready') return true
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.redis.off('ready', onReady)
        resolve(false)
      }, timeoutMs)
      const onReady = () => {
        clearTimeout(timer)
        resolve(true)
      }
      this.redis.once('ready', onReady)
    })
  }

  /** Sends `op` now; if it fails, again once the connection is back (at most MAX_UNDOS kept). */
  private async undo(op: () => Promise<unknown>): Promise<void> {
    try {
      await op()
    } catch {
      if (this.undos.length >= MAX_UNDOS) this.undos.shift()
      this.undos.push(op)
    }
  }

  private keys(policy: LimitPolicy, subject: string): { windows: string[]; slots: string } {
    // One hash tag per subject: every key of a check lives in one cluster slot.
    const base = `${this.prefix}rl:{${policy.id}:${subject}}`
    return { windows: policy.windows.map((w) => `${base}:${w.name}`), slots: `${base}:c` }
  }

  private async run(s: Script, keys: string[], args: (string | number)[]): Promise<unknown> {
    try {
      return await this.redis.evalsha(s.sha, keys.length, ...keys, ...args)
    } catch (err) {
      // After a Redis restart the script cache is empty.
      if (err instanceof Error && err.message.startsWith('NOSCRIPT')) {
        return await this.redis.eval(s.lua, keys.length, ...keys, ...args)
      }
      throw err
    }
  }

  async acquire(
    policy: LimitPolicy,
    subject: string,
    token: string,
    leaseMs: number,
  ): Promise<LimitDecision> {
    const { windows, slots } = this.keys(policy, subject)
    const concurrent = policy.concurrent ?? 0
    const keys = concurrent > 0 ? [...windows, slots] : windows
    const args: (string | number)[] = [token, policy.windows.length, concurrent, leaseMs]
    for (const w of policy.windows) args.push(w.limit, w.windowMs)
    let reply: number[]
    try {
      reply = (await this.run(acquireScript, keys, args)) as number[]
    } catch (err) {
      // A hung Redis still runs the check once it resumes: the refund, written right after it
      // on the same connection, runs next and takes back what it counted (the request was refused).
      // EVAL, not EVALSHA: a NOSCRIPT answer would send the script again only after later checks.
      const refundKeys = [...windows, slots]
      void this.undo(() => this.redis.eval(refundScript.lua, refundKeys.length, ...refundKeys, token))
      throw new LimiterUnavailableError(err)
    }
    const [denied, inUse] = reply as [number, number]
    const counts = policy.windows.map((_, i) => ({ count: reply[2 + 2 * i]!, resetMs: reply[3 + 2 * i]! }))
    return decide(policy, counts, inUse < 0 ? undefined : inUse, denied)
  }

  async refund(policy: LimitPolicy, subject: string, token: string): Promise<void> {
    const { windows, slots } = this.keys(policy, subject)
    try {
      await this.run(refundScript, [...windows, slots], [token])
    } catch (err) {
      throw new LimiterUnavailableError(err)
    }
  }

  async renew(policy: LimitPolicy, subject: string, token: string, leaseMs: number): Promise<boolean> {
    try {
      return (await this.run(renewScript, [this.keys(policy, subject).slots], [token, leaseMs])) === 1
    } catch (err) {
      throw new LimiterUnavailableError(err)
    }
  }

  async ping(): Promise<void> {
    try {
      await this.redis.ping()
    } catch (err) {
      throw new LimiterUnavailableError(err)
    }
  }

  async release(policy: LimitPolicy, subject: string, token: string): Promise<void> {
    if (!policy.concurrent) return
    const slots = this.keys(policy, subject).slots
    await this.undo(() => this.redis.zrem(slots, token))
  }

  async close(): Promise<void> {
    this.redis.disconnect()
  }
}
