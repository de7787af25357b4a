/**
 * Host-name resolution for the SSRF guard (guarded-lookup.ts), bounded so that
 * hostile names cannot take the process's worker threads (docs/metadata.md,
 * "Safety"; docs/push.md, "Destinations").
 *
 * dns.lookup (getaddrinfo) runs on one of libuv's four threads until the system
 * resolver answers or gives up, whatever the request's own deadline: aborting
 * the request frees no thread. Those threads also read and write files, compress
 * API responses and look up the database's host. So:
 *  - at most LOOKUP_SLOTS lookups run at once, process-wide; the others wait;
 *  - concurrent lookups of one name share one;
 *  - an answer is kept ANSWER_TTL_MS (judged again on every use by the caller),
 *    so a host fetched again and again (a webhook receiver, a gateway) neither
 *    asks again nor waits behind other names' lookups. Failures are not kept.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns'
import pLimit from 'p-limit'

export type LookupAll = (
  hostname: string,
  options: { all: true },
  callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void

export interface HostResolverOptions {
  /** Lookups running at once; default 2 of libuv's 4 threads. */
  slots?: number
  /** How long an answer is kept; default 30 s. */
  ttlMs?: number
  /** Answers kept at most (the oldest go first); default 10,000. */
  maxAnswers?: number
}

export class HostResolver {
  private readonly slots: ReturnType<typeof pLimit>
  private readonly ttlMs: number
  private readonly maxAnswers: number
  private readonly answers = new Map<string, { until: number; addresses: LookupAddress[] }>()
  private readonly inFlight = new Map<string, Promise<LookupAddress[]>>()

  constructor(
    private readonly lookup: LookupAll = dnsLookup as LookupAll,
    options: HostResolverOptions = {},
  ) {
    this.slots = pLimit(options.slots ?? 2)
    this.ttlMs = options.ttlMs ?? 30_000
    this.maxAnswers = options.maxAnswers ?? 10_000
  }

  /** Every address of `hostname`: a kept answer, the lookup under way, or a new one when a slot frees. */
  resolve(hostname: string): Promise<LookupAddress[]> {
    const key = hostname.toLowerCase()
    const kept = this.answers.get(key)
    if (kept && kept.until > Date.now()) return Promise.resolve(kept.addresses)
    const running = this.inFlight.get(key)
    if (running) return running
    const started = this.slots(
      () =>
        new Promise<LookupAddress[]>((resolve, reject) =>
          this.lookup(hostname, { all: true }, (err, addresses) => (err ? reject(err) : resolve(addresses))),
        ),
    )
      .then((addresses) => {
        this.keep(key, addresses)
        return addresses
      })
      .finally(() => this.inFlight.delete(key))
    this.inFlight.set(key, started)
    return started
  }

  private keep(key: string, addresses: LookupAddress[]) {
    this.answers.delete(key)
    if (this.answers.size >= this.maxAnswers) this.answers.delete(this.answers.keys().next().value!)
    this.answers.set(key, { until: Date.now() + this.ttlMs, addresses })
  }
}
