/**
 * Access control of the /v1 API, in the order DESIGN §4 fixes:
 *   per-IP limit → credential (401) → per-credential limit (429)
 *   → scope and origin (403) → parameters (400) → handler.
 *
 * AccessControl holds the long-lived parts of one web process (limiter,
 * credential verifier, key-use tracker, CORS origins). RequestAccess is the
 * state of one request: the decisions taken (for the RateLimit headers) and
 * the concurrency slots held, released when the response ends or the client
 * goes away.
 */
import { randomBytes } from 'node:crypto'
import type { Config } from '@/config/env'
import type { Logger } from '@/config/logger'
import type { Database } from '@/server/db/database'
import { limiterUnavailableError, rateLimitedError } from '@/server/ratelimit/errors'
import { rateLimitHeaders } from '@/server/ratelimit/headers'
import { ipSubject } from '@/server/ratelimit/ip'
import { createRateLimiter, type RateLimiter } from '@/server/ratelimit/limiter'
import type { LimitDecision, LimitPolicy, PolicyName } from '@/server/ratelimit/policy'
import { CorsOrigins } from './cors-origins'
import { LastUsedTracker } from './last-used'
import { CredentialVerifier, type VerifiedCredential } from './verifier'

export interface AccessControl {
  limiter: RateLimiter
  verifier: CredentialVerifier
  lastUsed: LastUsedTracker
  cors: CorsOrigins
  /** PUBLIC_URL's origin: demo tokens are accepted from it. */
  publicOrigin: string
  /** Waits (bounded) for the limiter store; requests fail closed until it answers. */
  ready(timeoutMs?: number): Promise<boolean>
  close(): Promise<void>
}

export function createAccessControl(
  services: { config: Config; db: Database; logger?: Logger },
  options: { limiter?: RateLimiter; now?: () => number } = {},
): AccessControl {
  const { config, db, logger } = services
  const publicOrigin = new URL(config.PUBLIC_URL).origin
  const limiter = options.limiter ?? createRateLimiter(config, logger)
  const lastUsed = new LastUsedTracker(db, logger)
  return {
    limiter,
    verifier: new CredentialVerifier(db, {
      cacheMs: config.CREDENTIAL_CACHE_MS,
      publicOrigin,
      now: options.now,
    }),
    lastUsed,
    cors: new CorsOrigins(db, publicOrigin),
    publicOrigin,
    ready: (timeoutMs) => limiter.ready(timeoutMs),
    async close() {
      await lastUsed.close()
      await limiter.close()
    },
  }
}

/** Request tokens are this process's random prefix and a counter: unique across processes, no entropy per request. */
const TOKEN_PREFIX = randomBytes(9).toString('base64url')
let tokenCounter = 0

interface Held {
  policy: LimitPolicy
  subject: string
}

export class RequestAccess {
  /** Identifies this request's entries in the limiter (not secret, not the request id). */
  private readonly token = `${TOKEN_PREFIX}.${(++tokenCounter).toString(36)}`
  private readonly decisions: { scope: 'ip' | 'credential'; decision: LimitDecision }[] = []
  private held: Held[] = []
  private ip: Held | undefined
  private finished = false
  readonly ipSubject: string

  constructor(
    readonly control: AccessControl,
    readonly clientIp: string,
  ) {
    this.ipSubject = ipSubject(clientIp)
  }

  private async acquire(policy: LimitPolicy, subject: string): Promise<LimitDecision> {
    try {
      return await this.control.limiter.store.acquire(
        policy,
        subject,
        this.token,
        this.control.limiter.leaseMs,
      )
    } catch (err) {
      throw limiterUnavailableError(err)
    }
  }

  private hold(entry: Held) {
    this.held.push(entry)
    // The client left while the limiter answered: give the slot back now.
    if (this.finished) this.release()
  }

  /** Step 1: the client IP's limit. Throws 429 or 503. */
  async limitIp(name: PolicyName): Promise<void> {
    const policy = this.control.limiter.policies[name]
    const decision = await this.acquire(policy, this.ipSubject)
    this.decisions.push({ scope: 'ip', decision })
    if (!decision.allowed) throw rateLimitedError(decision, 'this client address', this.headers())
    this.ip = { policy, subject: this.ipSubject }
    this.hold(this.ip)
  }

  /**
   * Step 3: the credential's limit. Throws 429 or 503. A refusal gives the
   * IP's share back too: a rejected request consumes nothing.
   */
  async limitCredential(credential: VerifiedCredential): Promise<void> {
    const policy = this.control.limiter.policies[credential.kind === 'key' ? 'key' : 'demo']
    const decision = await this.acquire(policy, credential.subject)
    this.decisions.push({ scope: 'credential', decision })
    if (!decision.allowed) {
      await this.refundIp()
      const who = credential.kind === 'key' ? 'this API key' : 'this demo token'
      throw rateLimitedError(decision, who, this.headers())
    }
    this.hold({ policy, subject: credential.subject })
  }

  private async refundIp() {
    const ip = this.ip
    if (!ip) return
    this.ip = undefined
    this.held = this.held.filter((h) => h !== ip)
    await this.control.limiter.store.refund(ip.policy, ip.subject, this.token).catch(() => {})
  }

  /** RateLimit-Policy and RateLimit for the decisions taken so far. */
  headers(): Record<string, string> {
    return rateLimitHeaders(this.decisions)
  }

  /** Frees every concurrency slot held (response finished or client gone). Idempotent. */
  release(): void {
    this.finished = true
    const held = this.held
    this.held = []
    for (const h of held) {
      // Unreachable store: the lease expires on its own.
      this.control.limiter.store.release(h.policy, h.subject, this.token).catch(() => {})
    }
  }
}
