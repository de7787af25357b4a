/**
 * Sign-In with Ethereum (EIP-4361) for the developer portal.
 *
 *  1. The browser asks for a nonce (POST /api/siwe/nonce): 128 random bits,
 *     stored in siwe_nonces with a 5-minute expiry.
 *  2. The wallet signs an EIP-4361 message carrying that nonce, PUBLIC_URL's
 *     host as domain, PUBLIC_URL as URI and CHAIN_ID as chain id.
 *  3. next-auth's credentials provider hands message and signature to
 *     verifySiweSignIn(): the message is parsed with siwe's ABNF parser,
 *     domain, URI, scheme, chain id and validity window are checked, the
 *     nonce is consumed atomically (DELETE … RETURNING: one sign-in per
 *     nonce, even under concurrent submissions), and only then is the
 *     signature verified through the indexed chain's RPC — an EOA by
 *     ecrecover, a smart-contract wallet by ERC-1271 `isValidSignature`
 *     (viem's verifyMessage does both, and ERC-6492 for undeployed ones).
 *  4. recordSignIn() upserts the user, starts the portal session and writes
 *     the sign_in audit event.
 *
 * Consuming the nonce before the RPC call means a forged or replayed
 * message costs one indexed DELETE, never a call to the node; a failed
 * signature burns its nonce, and the browser simply asks for a new one.
 */
import { randomBytes } from 'node:crypto'
import { ParsedMessage } from '@spruceid/siwe-parser'
import { type Address, getAddress, type Hex, isHex } from 'viem'
import type { Config } from '@/config/env'
import type { Database } from '@/db/database'
import { deleteLiveNonce, deleteNoncesExpiredBefore, insertNonce } from '@/db/queries/siwe-nonces'
import { withTransaction } from '@/db/queries/transaction'
import { refusedAccounts } from '@/server/credentials/devnet-accounts'
import { ApiError } from '@/server/errors/api-error'
import { writeAuditEvent } from './audit'
import { startPortalSession } from './portal-sessions'

/** How long an issued nonce can be used. */
export const NONCE_TTL_MS = 5 * 60_000
/** Clock skew tolerated between the wallet's clock and ours. */
export const CLOCK_SKEW_MS = 60_000
/** The sentence the portal asks wallets to sign. */
export const SIWE_STATEMENT = 'Sign in to the NFT Data API developer portal.'

export type SiweErrorCode =
  | 'MALFORMED_MESSAGE'
  | 'WRONG_DOMAIN'
  | 'WRONG_URI'
  | 'WRONG_CHAIN'
  | 'UNSUPPORTED_VERSION'
  | 'EXPIRED'
  | 'NOT_YET_VALID'
  | 'NONCE_INVALID'
  | 'BAD_SIGNATURE'
  | 'CHAIN_UNAVAILABLE'
  | 'DEVNET_ACCOUNT'

/**
 * A refused sign-in: 401, or 503 when the chain cannot be asked. `reason`
 * travels to the browser (next-auth's `error`); `detail` never does.
 */
export class SiweError extends ApiError {
  constructor(
    readonly reason: SiweErrorCode,
    readonly detail: string,
    options?: { cause?: unknown },
  ) {
    super(reason === 'CHAIN_UNAVAILABLE' ? 'SERVICE_UNAVAILABLE' : 'UNAUTHORIZED', reason, options)
    this.name = 'SiweError'
  }
}

/** What a message must say to sign in to this deployment. */
export interface SiweExpectations {
  /** RFC 3986 authority of PUBLIC_URL (host[:port]). */
  domain: string
  /** Origin of PUBLIC_URL; the message's URI must be on it. */
  origin: string
  scheme: string
  chainId: number
  /** Lowercase addresses that may not sign in here (./devnet-accounts.ts). */
  refusedAccounts: ReadonlySet<string>
}

export function siweExpectations(
  config: Pick<Config, 'PUBLIC_URL' | 'CHAIN_ID' | 'NFT_EMBEDDED_DEVNET'>,
): SiweExpectations {
  const url = new URL(config.PUBLIC_URL)
  return {
    domain: url.host,
    origin: url.origin,
    scheme: url.protocol.replace(/:$/, ''),
    chainId: config.CHAIN_ID,
    refusedAccounts: refusedAccounts(config),
  }
}

// ───────────────────────────── nonces ─────────────────────────────

export interface IssuedNonce {
  nonce: string
  expiresAt: Date
}

/** Issues a single-use nonce (32 hex characters: EIP-4361 wants ≥ 8 alphanumerics). */
export async function issueNonce(db: Database, now = new Date()): Promise<IssuedNonce> {
  const nonce = randomBytes(16).toString('hex')
  const expiresAt = new Date(now.getTime() + NONCE_TTL_MS)
  await insertNonce(db, { nonce, expiresAt, createdAt: now })
  // Expired nonces are useless; keep the table small (index on expires_at).
  await deleteNoncesExpiredBefore(db, now)
  return { nonce, expiresAt }
}

/** Atomically consumes a live nonce; false when it is unknown, used or expired. */
export async function consumeNonce(db: Database, nonce: string, now = new Date()): Promise<boolean> {
  return deleteLiveNonce(db, nonce, now)
}

// ───────────────────────────── message checks ─────────────────────────────

export interface CheckedMessage {
  address: Address
  nonce: string
  chainId: number
  issuedAt: Date
  expirationTime?: Date
}

function parseTime(value: string, field: string): Date {
  const time = new Date(value)
  if (Number.isNaN(time.getTime())) throw new SiweError('MALFORMED_MESSAGE', `${field} is not a timestamp`)
  return time
}

/** Parses an EIP-4361 message and checks it was written for this deployment, now. */
export function checkSiweMessage(
  message: string,
  expect: SiweExpectations,
  now = new Date(),
): CheckedMessage {
  if (message.length > 4096) throw new SiweError('MALFORMED_MESSAGE', 'message is too long')
  let parsed: ParsedMessage
  try {
    parsed = new ParsedMessage(message)
  } catch (err) {
    throw new SiweError('MALFORMED_MESSAGE', err instanceof Error ? err.message : 'not an EIP-4361 message', {
      cause: err,
    })
  }
  if (parsed.domain.toLowerCase() !== expect.domain.toLowerCase()) {
    throw new SiweError('WRONG_DOMAIN', `domain ${parsed.domain} is not ${expect.domain}`)
  }
  if (parsed.scheme !== undefined && parsed.scheme.toLowerCase() !== expect.scheme) {
    throw new SiweError('WRONG_DOMAIN', `scheme ${parsed.scheme} is not ${expect.scheme}`)
  }
  let uriOrigin: string
  try {
    uriOrigin = new URL(parsed.uri).origin
  } catch {
    throw new SiweError('WRONG_URI', `URI ${parsed.uri} is not a URL`)
  }
  if (uriOrigin !== expect.origin)
    throw new SiweError('WRONG_URI', `URI ${parsed.uri} is not on ${expect.origin}`)
  if (parsed.version !== '1') throw new SiweError('UNSUPPORTED_VERSION', `version ${parsed.version}`)
  if (parsed.chainId !== expect.chainId) {
    throw new SiweError('WRONG_CHAIN', `chain id ${parsed.chainId} is not ${expect.chainId}`)
  }
  if (expect.refusedAccounts.has(parsed.address.toLowerCase())) {
    throw new SiweError('DEVNET_ACCOUNT', `${parsed.address} is a devnet account, whose key is public`)
  }

  const t = now.getTime()
  const issuedAt = parseTime(parsed.issuedAt, 'Issued At')
  if (issuedAt.getTime() > t + CLOCK_SKEW_MS) throw new SiweError('NOT_YET_VALID', 'issued in the future')
  // A nonce lives NONCE_TTL_MS, so no genuine message can be older than that.
  if (issuedAt.getTime() < t - NONCE_TTL_MS - CLOCK_SKEW_MS)
    throw new SiweError('EXPIRED', 'issued too long ago')
  const expirationTime = parsed.expirationTime
    ? parseTime(parsed.expirationTime, 'Expiration Time')
    : undefined
  if (expirationTime && expirationTime.getTime() <= t)
    throw new SiweError('EXPIRED', 'the message has expired')
  if (parsed.notBefore && parseTime(parsed.notBefore, 'Not Before').getTime() > t + CLOCK_SKEW_MS) {
    throw new SiweError('NOT_YET_VALID', 'the message is not valid yet')
  }

  return {
    address: getAddress(parsed.address),
    nonce: parsed.nonce,
    chainId: parsed.chainId,
    issuedAt,
    ...(expirationTime ? { expirationTime } : {}),
  }
}

// ───────────────────────────── signature ─────────────────────────────

/** The part of a viem public client that sign-in needs (a stub in unit tests). */
export interface SiweChainClient {
  verifyMessage(args: { address: Address; message: string; signature: Hex }): Promise<boolean>
  getCode(args: { address: Address }): Promise<Hex | undefined>
}

export interface VerifiedSignIn {
  /** Lowercase address, as everything else in the service stores it. */
  address: string
  /** true when the address holds code: the signature was checked by ERC-1271. */
  contractWallet: boolean
}

export interface VerifySiweInput {
  db: Database
  client: SiweChainClient
  expect: SiweExpectations
  message: string
  signature: string
  now?: Date
}

export async function verifySiweSignIn(input: VerifySiweInput): Promise<VerifiedSignIn> {
  const { db, client, expect, message, signature } = input
  const now = input.now ?? new Date()
  const checked = checkSiweMessage(message, expect, now)
  if (!isHex(signature) || signature.length < 4 || signature.length > 20_000) {
    throw new SiweError('BAD_SIGNATURE', 'signature is not hex')
  }
  if (!(await consumeNonce(db, checked.nonce, now))) {
    throw new SiweError('NONCE_INVALID', 'nonce unknown, already used or expired')
  }
  let valid: boolean
  let code: Hex | undefined
  try {
    ;[valid, code] = await Promise.all([
      client.verifyMessage({ address: checked.address, message, signature }),
      client.getCode({ address: checked.address }),
    ])
  } catch (err) {
    throw new SiweError('CHAIN_UNAVAILABLE', 'the chain could not be asked to verify the signature', {
      cause: err,
    })
  }
  if (!valid) throw new SiweError('BAD_SIGNATURE', 'signature does not match the address')
  return { address: checked.address.toLowerCase(), contractWallet: code !== undefined && code !== '0x' }
}

// ───────────────────────────── users and audit ─────────────────────────────

export interface SignInRecord {
  address: string
  contractWallet: boolean
  clientIp: string | null
  userAgent: string | null
}

/**
 * Upserts the user, starts its portal session (./portal-sessions.ts) and
 * writes the sign_in audit event, in one transaction.
 */
export async function recordSignIn(
  db: Database,
  record: SignInRecord,
  options: { now?: Date; lifetimeMs?: number } = {},
) {
  const now = options.now ?? new Date()
  return withTransaction(db, async (q) => {
    const user = await q.users.upsertSignedInUser(record.address, now)
    const meta = { clientIp: record.clientIp, userAgent: record.userAgent }
    const session = await startPortalSession(q, user.id, meta, { now, lifetimeMs: options.lifetimeMs })
    await writeAuditEvent(
      q,
      { userId: user.id, address: user.address, ...meta },
      {
        action: 'sign_in',
        details: { wallet: record.contractWallet ? 'contract (ERC-1271)' : 'externally owned account' },
        at: now,
      },
    )
    return { id: user.id.toString(), address: user.address, session }
  })
}
