/**
 * Credential formats.
 *
 * Portal API keys look like GitHub's tokens, so secret scanners can find
 * leaked ones and typos are caught without a database round trip:
 *
 *     nftk_<43 base62 chars: 32 random bytes><6 base62 chars: CRC-32 of everything before>
 *
 * Demo tokens are `demo_` + 32 random bytes in base64url (43 chars).
 * Only SHA-256 hashes of either are stored.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto'
import { crc32 } from 'node:zlib'
import { sha256Hex } from '@/db/sha256'

export const API_KEY_PREFIX = 'nftk_'
export const DEMO_TOKEN_PREFIX = 'demo_'

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
const RANDOM_CHARS = 43 // ⌈256 / log2(62)⌉
const CHECKSUM_CHARS = 6 // ⌈32 / log2(62)⌉

const API_KEY_PATTERN = /^nftk_[0-9A-Za-z]{49}$/
const DEMO_TOKEN_PATTERN = /^demo_[A-Za-z0-9_-]{43}$/

/** `value` in base62, left-padded to `width`. A number (the CRC, checked on every request) avoids BigInt. */
function base62(value: number | bigint, width: number): string {
  let out = ''
  if (typeof value === 'number') {
    for (let v = value; v > 0; v = Math.floor(v / 62)) out = BASE62[v % 62] + out
  } else {
    for (let v = value; v > 0n; v /= 62n) out = BASE62[Number(v % 62n)] + out
  }
  return out.padStart(width, '0')
}

const checksum = (body: string): string => base62(crc32(body), CHECKSUM_CHARS)

/** Constant-time equality of two hex digests. */
export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex')
  const y = Buffer.from(b, 'hex')
  return x.length === y.length && x.length > 0 && timingSafeEqual(x, y)
}

/** A new API key secret and the non-secret prefix that identifies it in the portal. */
export function generateApiKeySecret(): { secret: string; prefix: string; hash: string } {
  const random = base62(BigInt(`0x${randomBytes(32).toString('hex')}`), RANDOM_CHARS)
  const body = `${API_KEY_PREFIX}${random}`
  const secret = `${body}${checksum(body)}`
  return { secret, prefix: displayPrefix(secret), hash: sha256Hex(secret) }
}

/** `nftk_` and the first 8 random characters: enough to tell keys apart, far too little to guess one. */
export function displayPrefix(secret: string): string {
  return secret.slice(0, API_KEY_PREFIX.length + 8)
}

/** True when `secret` has the API key shape and its checksum verifies. */
export function isWellFormedApiKey(secret: string): boolean {
  if (!API_KEY_PATTERN.test(secret)) return false
  const body = secret.slice(0, -CHECKSUM_CHARS)
  return checksum(body) === secret.slice(-CHECKSUM_CHARS)
}

export function generateDemoToken(): { token: string; hash: string } {
  const token = `${DEMO_TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`
  return { token, hash: sha256Hex(token) }
}

export function isWellFormedDemoToken(token: string): boolean {
  return DEMO_TOKEN_PATTERN.test(token)
}

export type PresentedCredential =
  | { kind: 'missing' }
  | { kind: 'malformed' }
  | { kind: 'key'; secret: string }
  | { kind: 'demo'; secret: string }

/**
 * Reads `Authorization: Bearer <credential>`. Shape and checksum are checked
 * here, before anything touches the database.
 */
export function parseAuthorization(header: string | string[] | undefined): PresentedCredential {
  if (header === undefined || header === '') return { kind: 'missing' }
  if (Array.isArray(header)) return { kind: 'malformed' }
  const match = /^Bearer +(\S+) *$/i.exec(header)
  if (!match) return { kind: 'malformed' }
  const secret = match[1]!
  if (secret.startsWith(API_KEY_PREFIX))
    return isWellFormedApiKey(secret) ? { kind: 'key', secret } : { kind: 'malformed' }
  if (secret.startsWith(DEMO_TOKEN_PREFIX)) {
    return isWellFormedDemoToken(secret) ? { kind: 'demo', secret } : { kind: 'malformed' }
  }
  return { kind: 'malformed' }
}

/** Which credential family a header claims, by prefix only (chooses the per-IP limit before verification). */
export function claimedKind(header: string | string[] | undefined): 'demo' | 'key' {
  const value = Array.isArray(header) ? header[0] : header
  return value !== undefined && /^Bearer +demo_/i.test(value) ? 'demo' : 'key'
}
