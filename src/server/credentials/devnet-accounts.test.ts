/**
 * The devnet accounts (anvil's default ones, the development wallet's first)
 * against a real database and next-auth's real callbacks: on the embedded
 * devnet they sign in and their keys answer; with the same database anywhere
 * else they cannot sign in, their open sessions end, and their keys are refused.
 */
import type { NextAuthOptions } from 'next-auth'
import { mnemonicToAccount } from 'viem/accounts'
import { createSiweMessage } from 'viem/siwe'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Config } from '@/config/env'
import { createLogger } from '@/config/logger'
import { exportNextAuthUrl } from '@/config/next-auth-url'
import type { Database } from '@/db/database'
import { createApiKey, ensureUser } from '@/server/api/portal/keys/api-keys'
import { buildAuthOptions } from '@/server/portal-auth/auth-options'
import { issueNonce } from '@/server/portal-auth/siwe'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import { localChainClient, NextAuthTestClient } from '@/test/next-auth-client'
import { asDatabase } from '@/test/serve-api'
import { DEVNET_ACCOUNTS, refusedAccounts } from './devnet-accounts'
import { CredentialVerifier } from './verifier'

const PUBLIC_URL = 'http://portal.test'
const MNEMONIC = 'test test test test test test test test test test test junk'
/** The development wallet's account (src/components/portal/sign-in/dev-wallet.ts). */
const devAccount = mnemonicToAccount(MNEMONIC)
type Marker = Pick<Config, 'NFT_EMBEDDED_DEVNET'>
const EMBEDDED_DEVNET: Marker = { NFT_EMBEDDED_DEVNET: '1' }
const REAL_CHAIN: Marker = { NFT_EMBEDDED_DEVNET: '0' }

let tdb: TestDatabase
let db: Database

beforeAll(async () => {
  exportNextAuthUrl({ PUBLIC_URL })
  tdb = await createTestDatabase()
  db = asDatabase(tdb)
})
afterAll(async () => {
  await tdb?.drop()
})

function web(marker: Marker): NextAuthOptions {
  return buildAuthOptions({
    config: {
      AUTH_SECRET: 'a-test-secret-of-at-least-thirty-two-characters',
      PUBLIC_URL,
      CHAIN_ID: 31337,
      RPC_URL: undefined,
      ...marker,
    },
    db,
    logger: createLogger({ level: 'silent' }),
    requestMeta: async () => ({ clientIp: null, userAgent: null }),
    chainClient: localChainClient(),
  })
}

/** Signs in as the development wallet; null on success, else the refusal's code. */
async function signIn(client: NextAuthTestClient): Promise<string | null> {
  const message = createSiweMessage({
    domain: 'portal.test',
    address: devAccount.address,
    uri: `${PUBLIC_URL}/portal`,
    version: '1',
    chainId: 31337,
    nonce: (await issueNonce(db)).nonce,
    issuedAt: new Date(),
  })
  return client.signIn(message, await devAccount.signMessage({ message }))
}

const verifier = (marker: Marker) =>
  new CredentialVerifier(db, {
    cacheMs: 0,
    publicOrigin: PUBLIC_URL,
    refusedOwners: refusedAccounts({ CHAIN_ID: 31337, ...marker }),
  })

describe('devnet accounts', () => {
  it('are anvil’s ten default accounts', () => {
    const derived = Array.from({ length: 10 }, (_, i) =>
      mnemonicToAccount(MNEMONIC, { addressIndex: i }).address.toLowerCase(),
    )
    expect([...DEVNET_ACCOUNTS]).toEqual(derived)
  })

  it('work on the embedded devnet only: sign-in, session and keys are refused elsewhere', async () => {
    const devnet = web(EMBEDDED_DEVNET)
    const browser = new NextAuthTestClient(devnet, {})
    expect(await signIn(browser)).toBeNull()
    expect((await browser.serverSession(devnet))?.user.address).toBe(devAccount.address.toLowerCase())
    const user = await ensureUser(db, devAccount.address)
    const { secret } = await createApiKey(db, { userId: user.id, address: user.address }, { name: 'devnet' })
    expect(await verifier(EMBEDDED_DEVNET).verify({ kind: 'key', secret })).not.toBeNull()

    // The same database, the service now pointed at another chain.
    const real = web(REAL_CHAIN)
    expect(await signIn(new NextAuthTestClient(real, {}))).toBe('DEVNET_ACCOUNT')
    expect(await browser.serverSession(real)).toBeNull()
    expect(await verifier(REAL_CHAIN).verify({ kind: 'key', secret })).toBeNull()
    // Another chain with anvil's chain id is not the embedded devnet either (no marker).
    expect(await verifier({}).verify({ kind: 'key', secret })).toBeNull()
  })
})
