/**
 * Signature verification over RPC_URL's endpoints, against a real anvil and
 * a real database: with two endpoints, the first one down (every request
 * answered 503), an EOA and an ERC-1271 contract wallet still sign in, and
 * the down endpoint stops being asked once it has failed.
 */
import path from 'node:path'
import type { Address } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { createSiweMessage } from 'viem/siwe'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createLogger } from '@/config/logger'
import type { Database } from '@/db/database'
import { compileContracts } from '@/dev/contracts/compile'
import { type AnvilInstance, startAnvil } from '@/dev/devnet/anvil'
import { createDevnetClients } from '@/dev/devnet/collections'
import { startServer, type TestServer } from '@/indexer/test/http-server'
import { createTestDatabase, type TestDatabase } from '@/test/db'
import { issueNonce, siweExpectations, verifySiweSignIn } from './siwe'
import { siweChainClient } from './siwe-chain'

const PUBLIC_URL = 'https://portal.example.com'
const expectations = siweExpectations({ PUBLIC_URL, CHAIN_ID: 31337 })
const logger = createLogger({ level: 'silent', name: 'siwe-chain-test' })

let anvil: AnvilInstance
let down: TestServer
let tdb: TestDatabase
let db: Database

beforeAll(async () => {
  ;[anvil, down, tdb] = await Promise.all([
    startAnvil(),
    startServer({ '/*': (_req, res) => res.writeHead(503).end('upstream unavailable') }),
    createTestDatabase(),
  ])
  db = { pool: tdb.pool, prisma: tdb.prisma, close: async () => {} }
}, 120_000)

afterAll(async () => {
  await Promise.all([anvil?.stop(), down?.close(), tdb?.drop()])
})

async function signIn(signer: ReturnType<typeof privateKeyToAccount>, address: Address) {
  const { nonce } = await issueNonce(db)
  const message = createSiweMessage({
    domain: expectations.domain,
    address,
    uri: `${PUBLIC_URL}/portal`,
    version: '1',
    chainId: 31337,
    nonce,
    issuedAt: new Date(),
  })
  const signature = await signer.signMessage({ message })
  // The down endpoint first: the sign-in must fail over, not give up.
  const client = siweChainClient({ RPC_URL: `${down.origin},${anvil.rpcUrl}` }, logger)
  return verifySiweSignIn({ db, client, expect: expectations, message, signature })
}

describe('sign-in over several RPC endpoints', () => {
  it('verifies through the endpoint that answers when the first one is down', async () => {
    const owner = privateKeyToAccount(generatePrivateKey())
    await expect(signIn(owner, owner.address)).resolves.toEqual({
      address: owner.address.toLowerCase(),
      contractWallet: false,
    })
    const askedDown = down.hits.length
    expect(askedDown).toBeGreaterThan(0)

    // An ERC-1271 wallet needs the chain for isValidSignature and eth_getCode.
    const { E2EContractWallet: artifact } = await compileContracts([
      path.resolve(import.meta.dirname, '../../../e2e/contracts/E2EContractWallet.sol'),
    ])
    const clients = createDevnetClients(anvil.rpcUrl, 31337)
    const [deployer] = await clients.wallet.getAddresses()
    const hash = await clients.wallet.deployContract({
      abi: artifact!.abi,
      bytecode: artifact!.bytecode,
      args: [owner.address],
      account: deployer!,
    })
    const { contractAddress } = await clients.public.waitForTransactionReceipt({ hash })
    await expect(signIn(owner, contractAddress!)).resolves.toEqual({
      address: contractAddress!.toLowerCase(),
      contractWallet: true,
    })
    // A signature the wallet does not accept is still refused.
    await expect(signIn(privateKeyToAccount(generatePrivateKey()), contractAddress!)).rejects.toMatchObject({
      reason: 'BAD_SIGNATURE',
    })
    // Health ranking: the endpoint that failed is not asked first again.
    expect(down.hits.length).toBe(askedDown)
  }, 120_000)
})
