/**
 * Sign-In with Ethereum against a real database: message checks, single-use
 * nonces (also under concurrent submissions), signature verification order,
 * and the user + audit event a sign-in writes.
 */
import type { Address, Hex } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { createSiweMessage } from 'viem/siwe'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Database } from '@/db/database'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import {
  checkSiweMessage,
  consumeNonce,
  issueNonce,
  NONCE_TTL_MS,
  recordSignIn,
  type SiweChainClient,
  SiweError,
  siweExpectations,
  verifySiweSignIn,
} from './siwe'

const expect_ = siweExpectations({ PUBLIC_URL: 'https://portal.example.com', CHAIN_ID: 31337 })
const account = privateKeyToAccount(generatePrivateKey())

let tdb: TestDatabase
let db: Database

beforeAll(async () => {
  tdb = await createTestDatabase()
  db = { pool: tdb.pool, prisma: tdb.prisma, close: async () => {} }
})
afterAll(async () => {
  await tdb?.drop()
})

function message(nonce: string, overrides: Partial<Parameters<typeof createSiweMessage>[0]> = {}) {
  return createSiweMessage({
    domain: 'portal.example.com',
    address: account.address,
    uri: 'https://portal.example.com/portal',
    version: '1',
    chainId: 31337,
    nonce,
    issuedAt: new Date(),
    ...overrides,
  })
}

function code(fn: () => unknown): string {
  try {
    fn()
  } catch (err) {
    if (err instanceof SiweError) return err.reason
    throw err
  }
  return 'OK'
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise
    return 'OK'
  } catch (err) {
    if (err instanceof SiweError) return err.reason
    throw err
  }
}

/** A chain client that verifies EOA signatures locally and counts calls. */
function localChain(): SiweChainClient & { calls: number } {
  const client = {
    calls: 0,
    async verifyMessage({
      address,
      message,
      signature,
    }: {
      address: Address
      message: string
      signature: Hex
    }) {
      client.calls += 1
      const { verifyMessage } = await import('viem')
      return verifyMessage({ address, message, signature })
    },
    async getCode() {
      return undefined
    },
  }
  return client
}

describe('checkSiweMessage', () => {
  it('accepts a message for this domain, URI and chain', () => {
    const checked = checkSiweMessage(message('abcdef0123456789'), expect_)
    expect(checked.address).toBe(account.address)
    expect(checked.nonce).toBe('abcdef0123456789')
  })

  it('refuses another domain, URI, scheme, chain, or a message outside its validity window', () => {
    const now = new Date()
    expect(
      code(() => checkSiweMessage(message('abcdef0123456789', { domain: 'evil.example' }), expect_)),
    ).toBe('WRONG_DOMAIN')
    expect(
      code(() =>
        checkSiweMessage(message('abcdef0123456789', { uri: 'https://evil.example/portal' }), expect_),
      ),
    ).toBe('WRONG_URI')
    expect(code(() => checkSiweMessage(message('abcdef0123456789', { scheme: 'http' }), expect_))).toBe(
      'WRONG_DOMAIN',
    )
    expect(code(() => checkSiweMessage(message('abcdef0123456789', { chainId: 1 }), expect_))).toBe(
      'WRONG_CHAIN',
    )
    expect(
      code(() =>
        checkSiweMessage(
          message('abcdef0123456789', { expirationTime: new Date(now.getTime() - 1) }),
          expect_,
          now,
        ),
      ),
    ).toBe('EXPIRED')
    expect(
      code(() =>
        checkSiweMessage(
          message('abcdef0123456789', { issuedAt: new Date(now.getTime() - NONCE_TTL_MS - 120_000) }),
          expect_,
          now,
        ),
      ),
    ).toBe('EXPIRED')
    expect(
      code(() =>
        checkSiweMessage(
          message('abcdef0123456789', { notBefore: new Date(now.getTime() + 600_000) }),
          expect_,
          now,
        ),
      ),
    ).toBe('NOT_YET_VALID')
    expect(code(() => checkSiweMessage('Sign in please', expect_))).toBe('MALFORMED_MESSAGE')
  })
})

describe('nonces', () => {
  it('are single use and expire', async () => {
    const { nonce } = await issueNonce(db)
    expect(nonce).toMatch(/^[0-9a-f]{32}$/)
    expect(await consumeNonce(db, nonce)).toBe(true)
    expect(await consumeNonce(db, nonce)).toBe(false)

    const old = await issueNonce(db, new Date(Date.now() - NONCE_TTL_MS - 1000))
    expect(await consumeNonce(db, old.nonce)).toBe(false)
  })

  it('sign in exactly once under concurrent submissions', async () => {
    const { nonce } = await issueNonce(db)
    const msg = message(nonce)
    const signature = await account.signMessage({ message: msg })
    const chain = localChain()
    const results = await Promise.all(
      Array.from({ length: 5 }, () =>
        codeOf(verifySiweSignIn({ db, client: chain, expect: expect_, message: msg, signature })),
      ),
    )
    expect(results.filter((r) => r === 'OK')).toHaveLength(1)
    expect(results.filter((r) => r === 'NONCE_INVALID')).toHaveLength(4)
    // Only the submission that consumed the nonce asked the chain.
    expect(chain.calls).toBe(1)
  })

  it('a failed signature burns the nonce without a second chance', async () => {
    const { nonce } = await issueNonce(db)
    const msg = message(nonce)
    const forged = await privateKeyToAccount(generatePrivateKey()).signMessage({ message: msg })
    const chain = localChain()
    expect(
      await codeOf(verifySiweSignIn({ db, client: chain, expect: expect_, message: msg, signature: forged })),
    ).toBe('BAD_SIGNATURE')
    const good = await account.signMessage({ message: msg })
    expect(
      await codeOf(verifySiweSignIn({ db, client: chain, expect: expect_, message: msg, signature: good })),
    ).toBe('NONCE_INVALID')
  })
})

describe('recordSignIn', () => {
  it('upserts the user and writes a sign_in audit event with IP and user agent', async () => {
    const address = account.address.toLowerCase()
    const first = await recordSignIn(db, {
      address,
      contractWallet: false,
      clientIp: '203.0.113.9',
      userAgent: 'UA/1',
    })
    const second = await recordSignIn(db, {
      address,
      contractWallet: true,
      clientIp: '203.0.113.10',
      userAgent: 'UA/2',
    })
    expect(second.id).toBe(first.id)
    const events = await tdb.prisma.auditEvent.findMany({
      where: { userId: BigInt(first.id) },
      orderBy: { id: 'asc' },
    })
    expect(events.map((e) => [e.action, e.walletAddress, e.clientIp, e.userAgent])).toEqual([
      ['sign_in', address, '203.0.113.9', 'UA/1'],
      ['sign_in', address, '203.0.113.10', 'UA/2'],
    ])
    expect(events[1]!.details).toEqual({ wallet: 'contract (ERC-1271)' })
  })
})
