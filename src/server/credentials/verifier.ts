/**
 * Verifies presented credentials against the database, behind a short
 * positive cache. An entry lives at most CREDENTIAL_CACHE_MS (≤ 1 s) from the
 * moment its lookup started, so a revoked or rotated-out secret is refused on
 * every web process within a second, with no cross-process messaging that
 * could be lost. Expiry (demo tokens, rotated secrets in their grace period)
 * is checked on every use, not only at lookup.
 *
 * Only SHA-256 hashes are looked up; the presented value is never logged
 * or stored.
 */

import type { Database } from '@/db/database'
import { findKeySecretByHash } from '@/db/queries/api-keys'
import { findDemoTokenByHash } from '@/db/queries/demo-tokens'
import { sha256Hex } from '@/db/sha256'
import type { Scope } from '@/lib/scopes'
import { SCOPES } from '@/lib/scopes'
import type { WebMetrics } from '@/server/metrics/web-metrics'
import { sameHash } from './secrets'

export interface VerifiedCredential {
  kind: 'key' | 'demo'
  /** Key id or demo token id. */
  id: bigint
  /** Rate-limit subject: `key:<id>` or `demo:<id>` (every secret of a key shares the key's limits). */
  subject: string
  scopes: readonly Scope[]
  /** Browser origins it may be used from (Origin header). */
  allowedOrigins: readonly string[]
  /** Epoch ms after which it is refused; null: until revoked or rotated out. */
  expiresAt: number | null
}

const MAX_ENTRIES = 10_000

export class CredentialVerifier {
  private readonly cache = new Map<string, { credential: VerifiedCredential; validUntil: number }>()
  private readonly inflight = new Map<
    string,
    Promise<{ credential: VerifiedCredential | null; startedAt: number }>
  >()
  /**
   * The API keys this process has verified, by secret hash, with no time bound: enough to
   * attribute a refusal made before verification (the client IP's 429) without a lookup.
   */
  private readonly seenKeys = new Map<string, VerifiedCredential>()

  constructor(
    private readonly db: Database,
    private readonly options: {
      cacheMs: number
      publicOrigin: string
      now?: () => number
      /** Counts cache hits and misses. */
      metrics?: Pick<WebMetrics, 'credentialCache'>
      /** Owners whose keys are refused (the devnet accounts off the devnet, ./devnet-accounts.ts). */
      refusedOwners?: ReadonlySet<string>
    },
  ) {}

  private now(): number {
    return this.options.now?.() ?? Date.now()
  }

  /** The credential, or null when it is unknown, expired or revoked (401). Database failures throw. */
  async verify(presented: { kind: 'key' | 'demo'; secret: string }): Promise<VerifiedCredential | null> {
    const hash = sha256Hex(presented.secret)
    const now = this.now()
    const cached = this.cache.get(hash)
    if (cached && cached.validUntil > now) {
      this.options.metrics?.credentialCache(true)
      return usable(cached.credential, now)
    }
    if (cached) this.cache.delete(hash)
    this.options.metrics?.credentialCache(false)

    let lookup = this.inflight.get(hash)
    if (!lookup) {
      const startedAt = now
      lookup = (presented.kind === 'key' ? this.lookupKey(hash) : this.lookupDemo(hash))
        .then((credential) => ({ credential, startedAt }))
        .finally(() => this.inflight.delete(hash))
      this.inflight.set(hash, lookup)
    }
    const { credential, startedAt } = await lookup
    this.remember(hash, credential)
    if (credential && this.options.cacheMs > 0) {
      if (this.cache.size >= MAX_ENTRIES) this.cache.delete(this.cache.keys().next().value!)
      this.cache.set(hash, { credential, validUntil: startedAt + this.options.cacheMs })
    }
    return credential ? usable(credential, this.now()) : null
  }

  /** Forgets every cached credential (this process changed a key). */
  clear(): void {
    this.cache.clear()
    this.seenKeys.clear()
  }

  /**
   * The API key of a secret this process has verified before and that has not expired
   * since, without asking the database (a revocation elsewhere is seen at its next lookup).
   */
  knownKey(secret: string): VerifiedCredential | null {
    const seen = this.seenKeys.get(sha256Hex(secret))
    return seen ? usable(seen, this.now()) : null
  }

  /** Keeps a lookup's answer about a key's secret: the newest, or none once it is refused. */
  private remember(hash: string, credential: VerifiedCredential | null) {
    this.seenKeys.delete(hash)
    if (credential?.kind !== 'key') return
    if (this.seenKeys.size >= MAX_ENTRIES) this.seenKeys.delete(this.seenKeys.keys().next().value!)
    this.seenKeys.set(hash, credential)
  }

  private async lookupKey(hash: string): Promise<VerifiedCredential | null> {
    const row = await findKeySecretByHash(this.db, hash)
    if (!row || !sameHash(row.secretHash, hash) || row.key.status !== 'active') return null
    if (this.options.refusedOwners?.has(row.key.user.address)) return null
    return {
      kind: 'key',
      id: row.key.id,
      subject: `key:${row.key.id}`,
      scopes: row.key.scopes.filter((s): s is Scope => (SCOPES as readonly string[]).includes(s)),
      allowedOrigins: row.key.allowedOrigins,
      expiresAt: row.expiresAt?.getTime() ?? null,
    }
  }

  private async lookupDemo(hash: string): Promise<VerifiedCredential | null> {
    const row = await findDemoTokenByHash(this.db, hash)
    if (!row || !sameHash(row.tokenHash, hash)) return null
    return {
      kind: 'demo',
      id: row.id,
      subject: `demo:${row.id}`,
      scopes: SCOPES,
      allowedOrigins: [this.options.publicOrigin],
      expiresAt: row.expiresAt.getTime(),
    }
  }
}

function usable(credential: VerifiedCredential, now: number): VerifiedCredential | null {
  return credential.expiresAt === null || credential.expiresAt > now ? credential : null
}
