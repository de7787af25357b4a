/**
 * Which URLs a webhook endpoint may have (docs/push.md, "Destinations"):
 * https (http only for an allow-listed host:port, WEBHOOK_ALLOW_HOSTS), no
 * credentials, no fragment, at most 2048 characters, and a host that is not
 * and does not resolve to a private, loopback or otherwise blocked address
 * unless allow-listed. Checked when the endpoint is created and again on every
 * attempt (src/server/push/webhooks/send.ts), since DNS answers change.
 */
import { isAllowedHost, resolvedHostRefusal } from './guarded-lookup'

export const MAX_WEBHOOK_URL_LENGTH = 2048

/** Why this URL cannot be a webhook destination (a sentence), or null. */
export async function webhookUrlRefusal(
  text: string,
  allowHosts: ReadonlySet<string>,
): Promise<string | null> {
  if (text.length > MAX_WEBHOOK_URL_LENGTH) return `must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`
  if (!URL.canParse(text)) return 'must be an absolute https URL'
  const url = new URL(text)
  const allowed = isAllowedHost(url, allowHosts)
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && allowed))
    return 'must be an https URL (http only for hosts the operator allow-lists)'
  if (url.username || url.password) return 'must not carry a user name or password'
  if (url.hash) return 'must not have a fragment'
  const refusal = await resolvedHostRefusal(url, allowHosts)
  return refusal ? `is not reachable for webhooks: ${refusal}` : null
}
