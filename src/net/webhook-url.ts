/**
 * Which URLs a webhook endpoint may have (docs/push.md, "Destinations"):
 * https (http only for an allow-listed host:port, WEBHOOK_ALLOW_HOSTS), no
 * credentials, no fragment, at most 2048 characters, and a host that is not
 * and does not resolve to a private, loopback or otherwise blocked address
 * unless allow-listed. Checked when the endpoint is created and again on every
 * attempt (src/server/push/webhooks/send.ts), since DNS answers change.
 */
import pLimit from 'p-limit'
import { isAllowedHost, resolvedHostRefusal } from './guarded-lookup'

export const MAX_WEBHOOK_URL_LENGTH = 2048

/**
 * The create-time lookup of a destination's host, bounded: the system resolver
 * (getaddrinfo) holds one of libuv's four threadpool threads, which the process's
 * file reads share, for as long as the host's name servers take. A client naming
 * hosts whose name servers never answer must not take them all: one lookup at a
 * time in the process, a few waiting, each answered by its deadline (the thread
 * stays with the lookup until the resolver gives up; the next waits for it).
 */
export const ADDRESS_CHECK = { deadlineMs: 3_000, maxWaiting: 8 }

/** More destination checks are waiting than ADDRESS_CHECK allows: a busy moment, not a bad URL. */
export class AddressCheckBusy extends Error {
  override name = 'AddressCheckBusy'
}

const lookups = pLimit(1)

/** Why this URL cannot be a webhook destination (a sentence), or null. */
export async function webhookUrlRefusal(
  text: string,
  allowHosts: ReadonlySet<string>,
  refusalOf: typeof resolvedHostRefusal = resolvedHostRefusal,
): Promise<string | null> {
  if (text.length > MAX_WEBHOOK_URL_LENGTH) return `must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`
  if (!URL.canParse(text)) return 'must be an absolute https URL'
  const url = new URL(text)
  const allowed = isAllowedHost(url, allowHosts)
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && allowed))
    return 'must be an https URL (http only for hosts the operator allow-lists)'
  if (url.username || url.password) return 'must not carry a user name or password'
  if (url.hash) return 'must not have a fragment'
  const refusal = await boundedRefusal(url, allowHosts, refusalOf)
  return refusal ? `is not reachable for webhooks: ${refusal}` : null
}

async function boundedRefusal(
  url: URL,
  allowHosts: ReadonlySet<string>,
  refusalOf: typeof resolvedHostRefusal,
): Promise<string | null> {
  if (lookups.pendingCount >= ADDRESS_CHECK.maxWaiting)
    throw new AddressCheckBusy('Too many webhook destinations are being checked at once.')
  let late = false
  // A check whose asker has stopped waiting never starts: its turn goes to the next.
  const check = lookups(() => (late ? null : refusalOf(url, allowHosts)))
  let timer: NodeJS.Timeout | undefined
  const deadline = new Promise<string>((resolve) => {
    timer = setTimeout(() => {
      late = true
      resolve(`${url.hostname} did not resolve within ${ADDRESS_CHECK.deadlineMs / 1000} s`)
    }, ADDRESS_CHECK.deadlineMs)
  })
  try {
    return await Promise.race([check, deadline])
  } finally {
    clearTimeout(timer)
  }
}
