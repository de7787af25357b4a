/**
 * The connection side of the SSRF guard (docs/metadata.md; docs/push.md,
 * "Webhooks"): the one place where a URL from users or chain data is resolved
 * and checked. Every resolved address must be a public unicast one
 * (./ip-guard.ts) and the socket connects to exactly the checked address (the
 * lookup is the socket's own, so no DNS rebinding between check and connect).
 * Operators may allow private `host:port` pairs (FETCH_ALLOW_HOSTS,
 * WEBHOOK_ALLOW_HOSTS). Used by the metadata fetcher and webhook delivery.
 * Names are resolved through a bounded, caching HostResolver (./host-resolver.ts).
 */
import type { LookupAddress } from 'node:dns'
import { isIP } from 'node:net'
import { HostResolver } from './host-resolver'
import { blockedReason } from './ip-guard'

/** The host is, or resolves to, an address that must not be contacted. */
export class BlockedAddressError extends Error {
  readonly code = 'BLOCKED_ADDRESS'
  constructor(message: string) {
    super(message)
    this.name = 'BlockedAddressError'
  }
}

/** `host:port` of a URL (IPv6 without brackets, the scheme's default port filled in). */
export function hostKey(url: URL): string {
  const port = url.port || (url.protocol === 'https:' ? '443' : '80')
  return `${url.hostname.replace(/^\[|\]$/g, '')}:${port}`
}

/** The allow-list from its configured `host:port` entries (case-insensitive, IPv6 with or without brackets). */
export function parseAllowHosts(entries: string[]): Set<string> {
  return new Set(
    entries.map((e) =>
      e
        .trim()
        .toLowerCase()
        .replace(/^\[|\]$/g, '')
        .replace(/\]:/, ':'),
    ),
  )
}

/** Whether the URL's `host:port` is allow-listed (then neither its literal address nor its DNS answer is checked). */
export function isAllowedHost(url: URL, allowHosts: ReadonlySet<string> | undefined): boolean {
  return allowHosts?.has(hostKey(url).toLowerCase()) ?? false
}

/**
 * Why this URL's host must not be contacted, judged without DNS (an IP
 * literal in a blocked range), or null. A host name is checked when it is
 * resolved (guardedLookup).
 */
export function literalHostRefusal(url: URL, allowHosts?: ReadonlySet<string>): string | null {
  if (isAllowedHost(url, allowHosts)) return null
  const hostname = url.hostname.replace(/^\[|\]$/g, '')
  if (!isIP(hostname)) return null
  const reason = blockedReason(hostname)
  return reason ? `Refused ${hostname} (${reason})` : null
}

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void

type Lookup = (hostname: string, options: { all?: boolean }, callback: LookupCallback) => void

/**
 * A `lookup` for node:http(s), over `resolver`, that refuses the host when ANY
 * resolved address is in a blocked range (a BlockedAddressError, as the
 * request's error). A kept answer is judged again on every use.
 */
export function createGuardedLookup(resolver: HostResolver): Lookup {
  return (hostname, options, callback) => {
    resolver.resolve(hostname).then(
      (addresses) => {
        const bad = addresses.find((a) => blockedReason(a.address) !== null)
        // The callback runs outside the promise (nextTick): an exception of the socket's own
        // callback must not become a rejection.
        if (bad || addresses.length === 0) {
          const error = new BlockedAddressError(
            bad
              ? // Not the address: the message reaches users (the webhook form and delivery log), and
                // what an internal name resolves to is not theirs to learn.
                `Refused ${hostname}: it resolves to a blocked address (${blockedReason(bad.address)})`
              : `No address for ${hostname}`,
          )
          process.nextTick(callback, error as NodeJS.ErrnoException, [])
        } else if (options.all) process.nextTick(callback, null, addresses)
        else process.nextTick(callback, null, addresses[0]!.address, addresses[0]!.family)
      },
      (err: NodeJS.ErrnoException) => process.nextTick(callback, err, []),
    )
  }
}

/** The process's guarded lookup: one resolver, so one bound on lookups at once, for every use. */
export const guardedLookup = createGuardedLookup(new HostResolver())

/**
 * Resolves a host name once and says why it must not be contacted, or null
 * (a check at the time a URL is registered; the connection checks again).
 */
export async function resolvedHostRefusal(
  url: URL,
  allowHosts?: ReadonlySet<string>,
): Promise<string | null> {
  if (isAllowedHost(url, allowHosts)) return null
  const literal = literalHostRefusal(url, allowHosts)
  if (literal) return literal
  const hostname = url.hostname.replace(/^\[|\]$/g, '')
  if (isIP(hostname)) return null
  return new Promise((resolve) => {
    guardedLookup(hostname, { all: true }, (err) => {
      if (err instanceof BlockedAddressError) resolve(err.message)
      else if (err) resolve(`${hostname} does not resolve`)
      else resolve(null)
    })
  })
}
