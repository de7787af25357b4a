import type { AuditEventView } from '@/components/portal/trpc'

export const ACTION_LABELS: Record<string, string> = {
  sign_in: 'Signed in',
  sign_in_refused: 'Sign-in refused',
  sign_out: 'Signed out',
  sign_out_everywhere: 'Signed out everywhere',
  key_created: 'Key created',
  key_updated: 'Key changed',
  key_rotated: 'Key rotated',
  key_revoked: 'Key revoked',
  token_refresh_requested: 'Token refresh',
  collection_refresh_requested: 'Collection refresh',
  webhook_created: 'Webhook created',
  webhook_enabled: 'Webhook enabled',
  webhook_disabled: 'Webhook disabled',
  webhook_secret_rotated: 'Webhook secret rotated',
  webhook_deleted: 'Webhook deleted',
  webhook_redelivered: 'Webhook redelivery',
}

/** Why a sign-in was refused, from the server's code (src/server/portal-auth/siwe.ts). */
const REFUSAL_REASONS: Record<string, string> = {
  MALFORMED_MESSAGE: 'unreadable message',
  WRONG_DOMAIN: 'message for another site',
  WRONG_URI: 'message for another address',
  WRONG_CHAIN: 'message for another chain',
  UNSUPPORTED_VERSION: 'unsupported message version',
  EXPIRED: 'expired request',
  NOT_YET_VALID: 'request not valid yet',
  NONCE_INVALID: 'used or unknown request',
  BAD_SIGNATURE: 'signature does not match the wallet',
  CHAIN_UNAVAILABLE: 'chain unreachable to check the signature',
}

function formatSeconds(s: number): string {
  if (s % 86400 === 0) return `${s / 86400} day${s === 86400 ? '' : 's'}`
  if (s % 3600 === 0) return `${s / 3600} hour${s === 3600 ? '' : 's'}`
  return `${s} s`
}

type Access = { scopes?: unknown; allowed_origins?: unknown }

function listed(value: unknown): string {
  return Array.isArray(value) && value.length > 0 ? value.join(', ') : 'none'
}

/** "scopes: a, b → c; origins: none → https://x" — only what changed. */
function updateSummary(before: unknown, after: unknown): string | null {
  const b = (before ?? {}) as Access
  const a = (after ?? {}) as Access
  const parts: string[] = []
  if (listed(b.scopes) !== listed(a.scopes)) parts.push(`scopes: ${listed(b.scopes)} → ${listed(a.scopes)}`)
  if (listed(b.allowed_origins) !== listed(a.allowed_origins)) {
    parts.push(`origins: ${listed(b.allowed_origins)} → ${listed(a.allowed_origins)}`)
  }
  return parts.length > 0 ? parts.join('; ') : 'no change'
}

/** One line on what happened, from the event's details, when they say something useful. */
export function auditSummary(event: AuditEventView): string | null {
  const d = event.details as Record<string, unknown> | null
  if (!d || typeof d !== 'object') return null
  if (event.action === 'key_created' && typeof d.name === 'string') return `“${d.name}”`
  if (event.action === 'key_rotated' && typeof d.grace_seconds === 'number') {
    return d.grace_seconds === 0
      ? 'old secret ended at once'
      : `old secret kept ${formatSeconds(d.grace_seconds)}`
  }
  if (event.action === 'key_updated') return updateSummary(d.before, d.after)
  if (event.action === 'sign_in' && typeof d.wallet === 'string') return d.wallet
  if (event.action === 'sign_in_refused' && typeof d.reason === 'string') {
    return Object.hasOwn(REFUSAL_REASONS, d.reason) ? REFUSAL_REASONS[d.reason]! : d.reason
  }
  if (event.action === 'token_refresh_requested' && typeof d.collection_address === 'string') {
    return `token ${String(d.token_id)} of ${d.collection_address}`
  }
  if (event.action === 'collection_refresh_requested' && typeof d.collection_address === 'string') {
    return d.collection_address
  }
  if (event.action.startsWith('webhook_') && typeof d.url === 'string') return d.url
  if (event.action === 'webhook_redelivered' && typeof d.event_id === 'string') return `event ${d.event_id}`
  if (event.action === 'sign_out_everywhere' && typeof d.sessions === 'number') {
    return `${d.sessions} session${d.sessions === 1 ? '' : 's'} ended`
  }
  return null
}
