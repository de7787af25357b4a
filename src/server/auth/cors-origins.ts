/**
 * Which browser origins get CORS headers (and preflight answers): the
 * service's own origin (PUBLIC_URL: the try-it page, with demo tokens) and any
 * origin that some active key allows. Whether the key of a given request
 * allows the origin is decided later, per request (403 otherwise).
 * The set is read from the database at most once a second (an origin just
 * added to a key works within a second) and refreshed every few seconds.
 */
import type { Database } from '@/db/database'

export class CorsOrigins {
  private origins = new Set<string>()
  private loadedAt = 0
  private loading: Promise<void> | undefined

  constructor(
    private readonly db: Database,
    readonly publicOrigin: string,
    private readonly ttlMs = 5000,
    private readonly missTtlMs = 1000,
  ) {}

  async isAllowed(origin: string): Promise<boolean> {
    const normalized = canonicalOrigin(origin)
    if (normalized === undefined) return false
    if (normalized === this.publicOrigin) return true
    const age = Date.now() - this.loadedAt
    if (this.origins.has(normalized)) {
      // A known origin: serve it, refreshing in the background now and then.
      if (age > this.ttlMs) void this.refresh()
      return true
    }
    // Unknown: perhaps a key allowing it was just created; look again at most once a second.
    if (age > this.missTtlMs) await this.refresh()
    return this.origins.has(normalized)
  }

  private refresh(): Promise<void> {
    this.loading ??= this.db.pool
      .query<{ origin: string }>(
        `SELECT DISTINCT unnest(allowed_origins) AS origin FROM api_keys WHERE status = 'active'`,
      )
      .then(
        (result) => {
          this.origins = new Set(result.rows.map((r) => r.origin))
          this.loadedAt = Date.now()
        },
        () => {},
      )
      .finally(() => {
        this.loading = undefined
      })
    return this.loading
  }
}

/** The serialized origin of an Origin header value, or undefined ("null", garbage). */
export function canonicalOrigin(value: string): string | undefined {
  if (!/^https?:\/\/[^/?#\s]+$/i.test(value)) return undefined
  try {
    return new URL(value).origin
  } catch {
    return undefined
  }
}
