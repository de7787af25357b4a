/**
 * verifyWebhook: a body signed the Standard Webhooks way with the endpoint's
 * secret verifies and comes back as the event; a changed body, another
 * secret, a stale timestamp or a missing header is refused. (A real delivery
 * is verified with it in src/server/push/webhooks/webhook-delivery.test.ts.)
 */
import { randomBytes } from 'node:crypto'
import { Webhook } from 'standardwebhooks'
import { describe, expect, it } from 'vitest'
import { verifyWebhook, WebhookSignatureError } from './index'

const secret = `whsec_${randomBytes(32).toString('base64')}`
const event = {
  id: '17',
  type: 'activity.added',
  timestamp: '2026-11-29T00:00:00.000Z',
  data: { token_id: '1', block_hash: '0xab' },
}
const body = JSON.stringify(event)

function signed(at = new Date(), key = secret, payload = body) {
  return {
    'webhook-id': '17',
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(key).sign('17', at, payload),
  }
}

describe('verifyWebhook', () => {
  it('returns the event of a correctly signed body (string, bytes, Headers)', () => {
    expect(verifyWebhook(body, signed(), secret)).toEqual(event)
    expect(verifyWebhook(new TextEncoder().encode(body), signed(), secret)).toEqual(event)
    expect(verifyWebhook(body, new Headers(signed()), secret)).toEqual(event)
  })

  it('refuses a changed body, another secret, a stale timestamp and missing headers', () => {
    const other = `whsec_${randomBytes(32).toString('base64')}`
    expect(() => verifyWebhook(body.replace('"1"', '"2"'), signed(), secret)).toThrow(WebhookSignatureError)
    expect(() => verifyWebhook(body, signed(new Date(), other), secret)).toThrow(WebhookSignatureError)
    expect(() => verifyWebhook(body, signed(new Date(Date.now() - 10 * 60_000)), secret)).toThrow(
      WebhookSignatureError,
    )
    const { 'webhook-signature': _, ...unsigned } = signed()
    expect(() => verifyWebhook(body, unsigned, secret)).toThrow(/Missing header webhook-signature/)
  })
})
