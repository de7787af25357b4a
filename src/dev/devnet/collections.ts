/**
 * The demo collections: which Solidity contract each is, how it is deployed, and the initial
 * supply minted on a new chain. All chain access goes through viem; transactions are sent as
 * anvil's unlocked dev accounts (eth_sendTransaction), so the node assigns nonces — that stays
 * right across reorganisations.
 */
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import {
  type Abi,
  type Address,
  createPublicClient,
  createTestClient,
  createWalletClient,
  defineChain,
  type Hex,
  http,
} from 'viem'
import { mulberry32 } from '@/lib/random'
import { type CompiledContracts, compileContracts } from '../contracts/compile'

export type CollectionKey = 'glyphs' | 'postcards' | 'pioneers'

export type DeployedCollection = {
  key: CollectionKey
  contractName: string
  name: string
  symbol: string
  address: Hex
  deployTxHash: Hex
  deployBlock: string
}

const contractsDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'contracts')

export const DEMO_COLLECTIONS: { key: CollectionKey; contractName: string; name: string; symbol: string }[] =
  [
    { key: 'glyphs', contractName: 'OnchainGlyphs', name: 'Onchain Glyphs', symbol: 'GLYPH' },
    { key: 'postcards', contractName: 'DevnetPostcards', name: 'Devnet Postcards', symbol: 'POSTCARD' },
    { key: 'pioneers', contractName: 'GenesisPioneers', name: 'Genesis Pioneers', symbol: 'PIONEER' },
  ]

/** Tokens minted by GenesisPioneers' constructor per recipient (ERC-2309 batches). */
const PIONEER_BATCH = 24
const SEND_ATTEMPTS = 3
const INITIAL_MINTS = { glyphs: 36, postcards: 36, pioneers: 4 } satisfies Record<CollectionKey, number>

export function compileDemoContracts(): Promise<CompiledContracts> {
  return compileContracts(DEMO_COLLECTIONS.map((c) => path.join(contractsDir, `${c.contractName}.sol`)))
}

export function createDevnetClients(rpcUrl: string, chainId: number) {
  const chain = defineChain({
    id: chainId,
    name: 'devnet',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  })
  // Short polling and no block-number cache: blocks come every second.
  const options = { chain, transport: http(rpcUrl, { retryCount: 1 }), pollingInterval: 100, cacheTime: 0 }
  return {
    chain,
    public: createPublicClient(options),
    wallet: createWalletClient(options),
    test: createTestClient({ ...options, mode: 'anvil' }),
  }
}

export type DevnetClients = ReturnType<typeof createDevnetClients>

export type SendContractCall = {
  address: Address
  abi: Abi
  functionName: string
  args?: readonly unknown[]
  from: Address
}

/** Sends one contract call; rejects when the node refuses it (e.g. it would revert). */
export function sendCall(clients: DevnetClients, call: SendContractCall): Promise<Hex> {
  return clients.wallet.writeContract({
    address: call.address,
    abi: call.abi,
    functionName: call.functionName,
    args: call.args ?? [],
    account: call.from,
    chain: null,
  })
}

export async function deployCollections(
  clients: DevnetClients,
  artifacts: CompiledContracts,
  accounts: Address[],
  metadataBaseUri: string,
): Promise<DeployedCollection[]> {
  const deployer = accounts[0]!
  const constructorArgs: Record<CollectionKey, unknown[]> = {
    glyphs: [deployer],
    postcards: [deployer, metadataBaseUri],
    pioneers: [deployer, [accounts[1], accounts[2]], PIONEER_BATCH],
  }
  const hashes: Hex[] = []
  for (const collection of DEMO_COLLECTIONS) {
    const artifact = artifactFor(artifacts, collection.contractName)
    hashes.push(
      await clients.wallet.deployContract({
        abi: artifact.abi,
        bytecode: artifact.bytecode,
        args: constructorArgs[collection.key],
        account: deployer,
        chain: null,
      }),
    )
  }
  const receipts = await mineAndWait(clients, hashes)
  return DEMO_COLLECTIONS.map((collection, i) => {
    const receipt = receipts[i]!
    if (receipt.status !== 'success' || !receipt.contractAddress) {
      throw new Error(`Deploying ${collection.contractName} failed (tx ${receipt.transactionHash})`)
    }
    return {
      ...collection,
      address: receipt.contractAddress,
      deployTxHash: receipt.transactionHash,
      deployBlock: receipt.blockNumber.toString(),
    }
  })
}

/** Mints the initial supply, then moves, burns and updates a few tokens so every event kind exists. */
export async function seedCollections(
  clients: DevnetClients,
  artifacts: CompiledContracts,
  collections: DeployedCollection[],
  accounts: Address[],
): Promise<{ sent: number; failed: number }> {
  const deployer = accounts[0]!
  // The initial supply is laid out the same way on every new chain.
  const random = mulberry32(31337)
  const pick = <T>(items: T[]) => items[Math.floor(random() * items.length)]!
  const byKey = (key: CollectionKey) => collections.find((c) => c.key === key)!
  const abiOf = (c: DeployedCollection) => artifactFor(artifacts, c.contractName).abi

  const mints: SendContractCall[] = collections.flatMap((c) =>
    Array.from({ length: INITIAL_MINTS[c.key] }, () => ({
      address: c.address,
      abi: abiOf(c),
      functionName: 'mint',
      args: [pick(accounts)],
      from: deployer,
    })),
  )
  const minted = await sendAll(clients, mints)

  const followUps: SendContractCall[] = []
  for (const c of collections) {
    const supply = (await clients.public.readContract({
      address: c.address,
      abi: abiOf(c),
      functionName: 'nextTokenId',
    })) as bigint
    for (let i = 0; i < 7; i++) {
      const tokenId = BigInt(Math.floor(random() * Number(supply)))
      const owner = (await clients.public.readContract({
        address: c.address,
        abi: abiOf(c),
        functionName: 'ownerOf',
        args: [tokenId],
      })) as Address
      if (i < 5) {
        const to = pick(accounts.filter((a) => a.toLowerCase() !== owner.toLowerCase()))
        followUps.push({
          ...target(c),
          functionName: 'transferFrom',
          args: [owner, to, tokenId],
          from: owner,
        })
      } else {
        followUps.push({ ...target(c), functionName: 'burn', args: [tokenId], from: owner })
      }
    }
  }
  const postcards = byKey('postcards')
  const glyphs = byKey('glyphs')
  followUps.push({ ...target(postcards), functionName: 'refreshMetadata', args: [1n], from: deployer })
  followUps.push({ ...target(glyphs), functionName: 'reroll', args: [2n], from: deployer })
  const followed = await sendAll(clients, dedupeTokens(followUps))
  return { sent: minted.sent + followed.sent, failed: minted.failed + followed.failed }

  function target(c: DeployedCollection) {
    return { address: c.address, abi: abiOf(c) }
  }
}

/** Two calls on the same token in one batch would conflict (e.g. burn after transfer). */
function dedupeTokens(calls: SendContractCall[]): SendContractCall[] {
  const seen = new Set<string>()
  return calls.filter((call) => {
    const tokenId = call.functionName === 'transferFrom' ? call.args?.[2] : call.args?.[0]
    const key = `${call.address}:${String(tokenId)}`
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
}

async function sendAll(clients: DevnetClients, calls: SendContractCall[]) {
  const hashes: Hex[] = []
  let failed = 0
  // One at a time: the node hands out nonces per sender in order. A send that fails (on a
  // loaded machine an RPC call can time out) is tried again, so a new devnet has its whole supply.
  for (const call of calls) {
    const hash = await sendWithRetries(clients, call)
    if (hash) hashes.push(hash)
    else failed++
  }
  const receipts = await mineAndWait(clients, hashes)
  failed += receipts.filter((r) => r.status !== 'success').length
  return { sent: calls.length, failed }
}

async function sendWithRetries(clients: DevnetClients, call: SendContractCall): Promise<Hex | undefined> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await sendCall(clients, call)
    } catch {
      if (attempt === SEND_ATTEMPTS) return undefined
      await new Promise((r) => setTimeout(r, 250 * attempt))
    }
  }
}

/** Mines at once instead of waiting for the next interval block, then collects receipts. */
export async function mineAndWait(clients: DevnetClients, hashes: Hex[]) {
  if (hashes.length === 0) return []
  await clients.test.mine({ blocks: 1 })
  return Promise.all(
    hashes.map((hash) => clients.public.waitForTransactionReceipt({ hash, timeout: 30_000 })),
  )
}

export function artifactFor(artifacts: CompiledContracts, contractName: string) {
  const artifact = artifacts[contractName]
  if (!artifact) throw new Error(`Contract ${contractName} missing from the compiled demo contracts`)
  return artifact
}
