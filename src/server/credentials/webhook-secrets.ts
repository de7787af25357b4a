/**
 * Webhook signing secrets (docs/push.md, "Signing secrets"). A secret is in
 * the Standard Webhooks format, `whsec_` + base64 of 32 random bytes, shown
 * once. The service must sign with it, so it cannot be stored as a hash: it is
 * stored sealed with AES-256-GCM (node:crypto) under a key derived from
 * AUTH_SECRET with HKDF-SHA256, a fresh 96-bit IV per secret, the endpoint's
 * id as additional data (a sealed secret copied to another row does not
 * open). Never logged.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto'
import type { Config } from '@/config/env'
import { parseAllowHosts } from '@/net/guarded-lookup'

const VERSION = 'v1'
const HKDF_INFO = 'nft-data-service webhook signing secrets v1'

/** What the portal and delivery need of the webhook configuration. */
export interface WebhookSettings {
  /** AES-256-GCM key of the stored secrets. */
  sealKey: Buffer
  /** `host:port` pairs that may be private (WEBHOOK_ALLOW_HOSTS). */
  allowHosts: ReadonlySet<string>
}

export function webhookSettings(
  config: Pick<Config, 'AUTH_SECRET' | 'WEBHOOK_ALLOW_HOSTS'>,
): WebhookSettings {
  if (!config.AUTH_SECRET) throw new Error('AUTH_SECRET is not set: start the service with `npm start`')
  return {
    sealKey: deriveSealKey(config.AUTH_SECRET),
    allowHosts: parseAllowHosts(config.WEBHOOK_ALLOW_HOSTS),
  }
}

export function deriveSealKey(authSecret: string): Buffer {
  return Buffer.from(hkdfSync('sha256', authSecret, Buffer.alloc(0), HKDF_INFO, 32))
}

/** A new signing secret (Standard Webhooks: `whsec_` + base64). */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`
}

/** What identifies a secret in the portal: `whsec_` and its first 6 characters. */
export const secretPrefix = (secret: string) => secret.slice(0, 12)

/** `v1.<iv>.<tag>.<ciphertext>` (base64url), bound to the endpoint id. */
export function sealSecret(key: Buffer, endpointId: bigint, secret: string): string {
  const iv = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', key, iv)
  cipher.setAAD(Buffer.from(`webhook-endpoint:${endpointId}`))
  const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()])
  const tag = cipher.getAuthTag()
  return [VERSION, iv, tag, ciphertext]
    .map((p) => (typeof p === 'string' ? p : p.toString('base64url')))
    .join('.')
}

/** The secret sealed by sealSecret; throws when the key, the endpoint or the text differ. */
export function openSecret(key: Buffer, endpointId: bigint, sealed: string): string {
  const [version, iv, tag, ciphertext] = sealed.split('.')
  if (version !== VERSION || !iv || !tag || ciphertext === undefined)
    throw new Error('not a sealed webhook secret')
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'))
  decipher.setAAD(Buffer.from(`webhook-endpoint:${endpointId}`))
  decipher.setAuthTag(Buffer.from(tag, 'base64url'))
  return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString(
    'utf8',
  )
}
