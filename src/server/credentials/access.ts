/**
 * Access control of the /v1 API, in the order docs/auth.md ("Order of checks") fixes:
 *   per-IP limit → credential (401) → per-credential limit (429)
 *   → scope and origin (403) → parameters (400) → handler.
 * The REST layer runs the first four steps (limitIp, authenticate) before it
 * calls a procedure, whose input parse is the fifth.
 *
 * AccessControl holds the long-lived parts of one web process (limiter,
 * credential verifier, key-use tracker, per-key usage counter, CORS origins). RequestAccess is the
 * state of one request: the decisions taken (for the RateLimit headers) and
 * the concurrency slots held, released when the response ends or the client
 * goes away.
 */
import { randomBytes } from 'node:crypto'
import type { IncomingHttpHeaders } from 'node:http'
import type { Config } from '@/config/env'
import type { Logger } from '@/config/logger'
import type { Database } from '@/db/database'
import type { Scope } from '@/lib/scopes'
import { ApiError } from '@/server/errors/api-error'
import type { WebMetrics } from '@/server/metrics/web-metrics'
import { rateLimitedError } from '@/server/ratelimit/errors'
import { rateLimitHeaders } from '@/server/ratelimit/headers'
import { ipSubject } from '@/server/ratelimit/ip'
import { createRateLimiter, type RateLimiter } from '@/server/ratelimit/limiter'
import type { LimitDecision, LimitPolicy, PolicyName } from '@/server/ratelimit/policy'
import { LimiterUnavailableError } from '@/server/ratelimit/store'
import { CorsOrigins, canonicalOrigin } from './cors-origins'
import { refusedAccounts } from './devnet-accounts'
import { KeyUsageCounter, type RefusingLimit } from './key-usage'
import { LastUsedTracker } from './last-used'
import { displayPrefix, parseAuthorization } from './secrets'
import { CredentialVerifier, type VerifiedCredential } from './verifier'

export interface AccessControl {
  limiter: RateLimiter
  verifier: CredentialVerifier
  lastUsed: LastUsedTracker
  /** Requests per key, hour and status class (docs/portal.md, "Usage per key"). */
  usage: KeyUsageCounter
  cors: CorsOrigins
  /** PUBLIC_URL's origin: demo tokens are accepted from it. */
  publicOrigin: string
  logger?: Logger
  metrics?: WebMetrics
  /** Waits (bounded) for the limiter store; requests fail closed until it answers. */
  ready(timeoutMs?: number): Promise<boolean>
  close(): Promise<void>
}

export function createAccessControl(
  /** credentialDb: the pool of credential and origin lookups; default db. */
  services: { config: Config; db: Database; credentialDb?: Database; logger?: Logger; metrics?: WebMetrics },
  options: { limiter?: RateLimiter; now?: () => number } = {},
): AccessControl {
  const { config, db, logger, metrics } = services
  const credentialDb = services.credentialDb ?? db
  const publicOrigin = new URL(config.PUBLIC_URL).origin
  const limiter = options.limiter ?? createRateLimiter(config, logger)
  const lastUsed = new LastUsedTracker(db, logger)
  const usage = new KeyUsageCounter(db, logger)
  return {
    limiter,
    verifier: new CredentialVerifier(credentialDb, {
      cacheMs: config.CREDENTIAL_CACHE_MS,
      publicOrigin,
      now: options.now,
      metrics,
      refusedOwners: refusedAccounts(config),
    }),
    lastUsed,
    usage,
    cors: new CorsOrigins(credentialDb, publicOrigin, config.CREDENTIAL_CACHE_MS),
    publicOrigin,
    logger,
    metrics,
    ready: (timeoutMs) => limiter.ready(timeoutMs),
    async close() {
      await lastUsed.close()
      await usage.close()
      await limiter.close()
    },
  }
}

const HOW = 'Send Authorization: Bearer <API key or demo token>.'

/** The rate-limit and pool-share subject of a signed-in portal user (an API key's is `key:<id>`). */
export const userSubject = (userId: bigint): string => `user:${userId}`

/** Request tokens are this process's random prefix and a counter: unique across processes, no entropy per request. */
const TOKEN_PREFIX = randomBytes(9).toString('base64url')
let tokenCounter = 0

interface Held {
  policy: LimitPolicy
  subject: string
}

/**
 * Whether a verified credential may be used for `scope` from `origin` (the request's Origin
 * header): the 403 to answer, or undefined. Checked per request, and again for a stream that
 * stays open (src/server/rest/stream/stream.handler.ts), so a scope or origin taken off a key
 * ends its streams as it refuses its requests.
 */
export function permissionRefusal(
  credential: VerifiedCredential,
  scope: Scope,
  origin: string | undefined,
  publicOrigin: string,
): ApiError | undefined {
  if (!credential.scopes.includes(scope))
    return new ApiError('FORBIDDEN', `This credential lacks the scope '${scope}' that this endpoint needs.`)
  if (origin === undefined) return undefined
  const normalized = canonicalOrigin(origin)
  if (normalized !== undefined && credential.allowedOrigins.includes(normalized)) return undefined
  return new ApiError(
    'FORBIDDEN',
    credential.kind === 'key'
      ? `Origin ${JSON.stringify(origin)} is not allowed for this API key; add it to the key's allowed origins in the portal.`
      : `Demo tokens are accepted from ${publicOrigin} only.`,
  )
}

export class RequestAccess {
  /** Identifies this request's entries in the limiter (not secret, not the request id). */
  private readonly token = `${TOKEN_PREFIX}.${(++tokenCounter).toString(36)}`
  private readonly decisions: { scope: 'ip' | 'credential'; decision: LimitDecision }[] = []
  private held: Held[] = []
  private ip: Held | undefined
  private finished = false
  /** The API key this request presented, once verified: its answer counts in the key's usage. */
  private keyId: bigint | undefined
  /** The client IP's limit refused the request: its 429 counts apart in the key's usage. */
  private refusedBy: RefusingLimit = 'credential'
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
      throw err instanceof LimiterUnavailableError ? err : new LimiterUnavailableError(err)
    }
  }

  private hold(entry: Held) {
    this.held.push(entry)
    // The client left while the limiter answered: give the slot back now.
    if (this.finished) this.release()
  }

  /**
   * Step 1: the client IP's limit. Throws 429 or 503. A refused request that presents a
   * valid API key (`authorization`) counts in that key's usage, as refused by the IP's limit.
   */
  async limitIp(name: PolicyName, authorization?: string): Promise<void> {
    const policy = this.control.limiter.policies[name]
    const decision = await this.acquire(policy, this.ipSubject)
    this.decisions.push({ scope: 'ip', decision })
    this.control.metrics?.limitDecision(name, 'ip', decision.allowed)
    if (!decision.allowed) {
      this.attributeIpRefusal(authorization)
      throw rateLimitedError(decision, 'this client address', this.headers())
    }
    this.ip = { policy, subject: this.ipSubject }
    this.hold(this.ip)
  }

  /**
   * Step 3: the credential's limit. Throws 429 or 503. A refusal gives the
   * IP's share back too: a rejected request consumes nothing.
   */
  async limitCredential(credential: VerifiedCredential): Promise<void> {
    if (credential.kind === 'key') await this.limitHolder('key', credential.subject, 'this API key')
    else await this.limitHolder('demo', credential.subject, 'this demo token')
  }

  /** The portal's step after the client IP's: the signed-in user's limit (policy `portal`). Throws 429 or 503. */
  async limitUser(userId: bigint): Promise<void> {
    await this.limitHolder('portal', userSubject(userId), 'this account')
  }

  /** The limit of whoever the request acts for; a refusal gives the IP's share back too. */
  private async limitHolder(name: PolicyName, subject: string, who: string): Promise<void> {
    const policy = this.control.limiter.policies[name]
    const decision = await this.acquire(policy, subject)
    this.decisions.push({ scope: 'credential', decision })
    this.control.metrics?.limitDecision(name, 'credential', decision.allowed)
    if (!decision.allowed) {
      await this.refundIp()
      throw rateLimitedError(decision, who, this.headers())
    }
    this.hold({ policy, subject })
  }

  /**
   * Steps 2 to 4: the credential (401), its rate limit (429), then the
   * route's scope and the request's origin (403). Logs name a key by its
   * display prefix only; never the secret, never a demo token.
   */
  async authenticate(
    headers: IncomingHttpHeaders,
    scope: Scope,
    requestId: string,
  ): Promise<VerifiedCredential> {
    const presented = parseAuthorization(headers.authorization)
    if (presented.kind === 'missing' || presented.kind === 'malformed') {
      this.refused(requestId, presented.kind, presented.kind)
      throw new ApiError(
        'UNAUTHORIZED',
        `${presented.kind === 'missing' ? 'A bearer credential is required.' : 'The credential is malformed.'} ${HOW}`,
      )
    }
    const credential = await this.control.verifier.verify(presented)
    if (!credential) {
      this.refused(
        requestId,
        'unknown, expired or revoked',
        presented.kind === 'key' ? displayPrefix(presented.secret) : presented.kind,
      )
      throw new ApiError(
        'UNAUTHORIZED',
        presented.kind === 'demo'
          ? 'The demo token is unknown or expired; request a new one with POST /v1/demo-token.'
          : 'The API key is unknown, revoked or rotated out.',
      )
    }

    if (credential.kind === 'key') this.keyId = credential.id
    await this.limitCredential(credential)

    const refusal = permissionRefusal(credential, scope, headers.origin, this.control.publicOrigin)
    if (refusal) throw refusal
    if (credential.kind === 'key') this.control.lastUsed.touch(credential.id)
    const logger = this.control.logger
    // Checked first: the log line's object is not built on every request when the level is off.
    if (logger?.isLevelEnabled('trace')) {
      logger.trace({ requestId, credential: credential.subject }, 'credential accepted')
    }
    return credential
  }

  /**
   * The key a request refused by the IP's limit presented, when this process has verified
   * it before. Never a lookup: a refused request costs no database work, whatever it carries.
   */
  private attributeIpRefusal(authorization: string | undefined) {
    const presented = parseAuthorization(authorization)
    if (presented.kind !== 'key') return
    const credential = this.control.verifier.knownKey(presented.secret)
    if (!credential) return
    this.keyId = credential.id
    this.refusedBy = 'ip'
  }

  /**
   * Counts the final answer in the key's usage — 429s (by the limit that refused
   * them) and 403s included — when the request presented a valid API key; other
   * requests are not attributed.
   */
  countResponse(status: number): void {
    if (this.keyId !== undefined) this.control.usage.record(this.keyId, status, Date.now(), this.refusedBy)
  }

  private refused(requestId: string, reason: string, credential: string) {
    this.control.logger?.debug({ requestId, reason, credential }, 'credential refused')
  }

  /**
   * A demo token the service failed to issue (5xx: a dependency down) gives its
   * unit of the per-IP issuance window back: the window limits tokens issued,
   * and a client retrying a 503 with backoff must not find itself refused for
   * a minute once the service recovers.
   */
  async refundFailedIssuance(): Promise<void> {
    if (this.ip?.policy === this.control.limiter.policies.demoIssue) await this.refundIp()
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

  private responseOver = false
  private workOver = false

  /**
   * The response is over: sent, or its client left. The slots come back once
   * the request's work is over too — a client that leaves does not stop the
   * queries it started, so leaving cannot make room for more of them.
   */
  responseClosed(): void {
    this.responseOver = true
    if (this.workOver) this.release()
  }

  /** The request's work (procedure, queries) is over; see responseClosed. */
  workFinished(): void {
    this.workOver = true
    if (this.responseOver) this.release()
  }

  /** Frees every concurrency slot held (response finished or client gone). Idempotent. */
  release(): void {
    this.finished = true
    const held = this.held
    this.held = []
    // Never rejects (an unreachable store lets the lease expire): nothing to wait for.
    for (const h of held) void this.control.limiter.store.release(h.policy, h.subject, this.token)
  }
}
