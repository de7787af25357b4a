/**
 * Checking a webhook from the service (docs/client.md, "Webhooks"): the
 * signature is Standard Webhooks (`standardwebhooks`), with the endpoint's
 * `whsec_…` secret shown in the portal. Pass the raw body, exactly as
 * received, and the request's headers.
 */
import { Webhook, WebhookVerificationError } from 'standardwebhooks'
import type { components } from './schema.js'

/** The body of a webhook: the same event the live stream sends. */
export type ActivityPushEvent = components['schemas']['ActivityPushEvent']

/** Header values by name, as Node's `IncomingHttpHeaders`, a fetch `Headers` or a plain object give them. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>

/** The signature, timestamp or body is not what the service sent with this secret. */
export class WebhookSignatureError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'WebhookSignatureError'
  }
}

function header(headers: WebhookHeaders, name: string): string {
  const value =
    headers instanceof Headers ? headers.get(name) : (headers[name] ?? headers[name.toLowerCase()])
  const text = Array.isArray(value) ? value[0] : value
  if (!text) throw new WebhookSignatureError(`Missing header ${name}`)
  return text
}

/**
 * The event of a webhook request whose signature verifies with `secret`
 * (and whose timestamp is within 5 minutes of now); throws
 * WebhookSignatureError otherwise. Deduplicate by `webhook-id` (the event's
 * `id`): a delivery may come more than once.
 */
export function verifyWebhook(
  payload: string | Uint8Array,
  headers: WebhookHeaders,
  secret: string,
): ActivityPushEvent {
  const body = typeof payload === 'string' ? payload : new TextDecoder().decode(payload)
  try {
    return new Webhook(secret).verify(body, {
      'webhook-id': header(headers, 'webhook-id'),
      'webhook-timestamp': header(headers, 'webhook-timestamp'),
      'webhook-signature': header(headers, 'webhook-signature'),
    }) as ActivityPushEvent
  } catch (err) {
    if (err instanceof WebhookSignatureError) throw err
    if (err instanceof WebhookVerificationError) throw new WebhookSignatureError(err.message)
    throw new WebhookSignatureError(err instanceof Error ? err.message : 'Invalid webhook')
  }
}
