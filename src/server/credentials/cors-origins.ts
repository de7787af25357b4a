/**
 * Which browser origins get CORS headers (and preflight answers): the
 * service's own origin (PUBLIC_URL: the try-it page, with demo tokens) and any
 * origin that some active key allows. Whether the key of a given request
 * allows the origin is decided later, per request (403 otherwise).
 *
 * Each origin is looked up on its own (one indexed query, api_keys_allowed_origins_idx)
 * and its answer kept for at most `cacheMs` from the moment the database was asked
 * — CREDENTIAL_CACHE_MS, the bound of a key change (docs/auth.md, "Browser origins").
 * Nothing loads every key's origins, so neither their number nor a stream of unknown
 * origins makes a lookup dearer. Lookups run one at a time, with at most `maxWaiting`
 * origins waiting their turn; past that an origin gets its last answer, else none, without
 * a query: a flood of invented origins (anyone can send one) never queues on the pool that
 * key lookups share.
 */
import type { Database } from '@/db/database'
import { anyActiveKeyAllowsOrigin } from '@/db/queries/api-keys'

export class CorsOrigins {
  private readonly answers = new Map<string, { allowed: boolean; askedAt: number }>()
  /** Lookups under way, by origin: concurrent preflights from one origin share one query. */
  private readonly lookups = new Map<string, Promise<boolean>>()
  /** A lookup is running; these wait for their turn, first come first served. */
  private asking = false
  private readonly turns: (() => void)[] = []

  constructor(
    private readonly db: Database,
    readonly publicOrigin: string,
    private readonly cacheMs = 500,
    /** Past this many origins, the remembered answers are dropped (a stream of invented origins). */
    private readonly maxRemembered = 10_000,
    /** Origins that may wait for a lookup at once; more are answered without one. */
    private readonly maxWaiting = 64,
  ) {}

  async isAllowed(origin: string): Promise<boolean> {
    const normalized = canonicalOrigin(origin)
    if (normalized === undefined) return false
    if (normalized === this.publicOrigin) return true
    const known = this.answers.get(normalized)
    if (known && Date.now() - known.askedAt < this.cacheMs) return known.allowed
    return this.lookup(normalized)
  }

  private lookup(origin: string): Promise<boolean> {
    let pending = this.lookups.get(origin)
    if (pending) return pending
    // The last answer stands, else no CORS headers: when the queue is full or the database fails.
    const fallback = () => this.answers.get(origin)?.allowed ?? false
    if (this.asking && this.turns.length >= this.maxWaiting) return Promise.resolve(fallback())
    pending = this.turn()
      .then(() => {
        const askedAt = Date.now()
        return anyActiveKeyAllowsOrigin(this.db, origin).then((allowed) => {
          if (this.answers.size >= this.maxRemembered) this.answers.clear()
          this.answers.set(origin, { allowed, askedAt })
          return allowed
        })
      })
      .catch(fallback)
      .finally(() => {
        this.lookups.delete(origin)
        this.nextTurn()
      })
    this.lookups.set(origin, pending)
    return pending
  }

  /** Resolves when this lookup may run: at once when none runs, else after those before it. */
  private turn(): Promise<void> {
    if (!this.asking) {
      this.asking = true
      return Promise.resolve()
    }
    return new Promise((resolve) => this.turns.push(resolve))
  }

  private nextTurn() {
    const next = this.turns.shift()
    if (next) next()
    else this.asking = false
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
